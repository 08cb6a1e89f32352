//! A run's statistics in Gemini CLI's shape (`SessionMetrics`: per model API calls and tokens,
//! tool calls by name with who let them run, lines changed), so `toolbelt run -o json` reads
//! like `gemini -p ... --output-format json`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};
use toolbelt_core::scheduler::{CallState, CompletedCall, Decision};

use crate::content::Usage;

/// Upstream's `SessionMetrics`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SessionMetrics {
    pub models: BTreeMap<String, ModelMetrics>,
    pub tools: ToolMetrics,
    pub files: FileMetrics,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ModelMetrics {
    pub api: ApiMetrics,
    pub tokens: TokenMetrics,
    /// Per role (main agent, sub-agents): toolbelt runs one role.
    pub roles: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiMetrics {
    pub total_requests: u64,
    pub total_errors: u64,
    pub total_latency_ms: u64,
    pub errors_by_type: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TokenMetrics {
    /// Prompt tokens not served from a cache.
    pub input: u64,
    pub prompt: u64,
    pub candidates: u64,
    pub total: u64,
    pub cached: u64,
    pub thoughts: u64,
    pub tool: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetrics {
    pub total_calls: u64,
    pub total_success: u64,
    pub total_fail: u64,
    pub total_duration_ms: u64,
    pub total_decisions: Decisions,
    pub by_name: BTreeMap<String, ToolByName>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolByName {
    pub count: u64,
    pub success: u64,
    pub fail: u64,
    pub duration_ms: u64,
    pub decisions: Decisions,
}

/// Who let calls run (upstream's keys).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Decisions {
    pub accept: u64,
    pub reject: u64,
    pub modify: u64,
    pub auto_accept: u64,
}

impl Decisions {
    fn count(&mut self, d: Option<Decision>) {
        match d {
            Some(Decision::Accept) => self.accept += 1,
            Some(Decision::Reject) => self.reject += 1,
            Some(Decision::AutoAccept) => self.auto_accept += 1,
            None => {}
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileMetrics {
    pub total_lines_added: u64,
    pub total_lines_removed: u64,
}

impl SessionMetrics {
    /// One model call: answered (with its usage) or failed, and how long it took.
    pub fn model_call(&mut self, model: &str, latency_ms: u64, outcome: Result<Usage, &str>) {
        let m = self.models.entry(model.to_string()).or_default();
        m.api.total_requests += 1;
        m.api.total_latency_ms += latency_ms;
        match outcome {
            Ok(u) => {
                m.tokens.prompt += u.input_tokens;
                m.tokens.input += u.input_tokens;
                m.tokens.candidates += u.output_tokens;
                m.tokens.total += u.total_tokens;
            }
            Err(kind) => {
                m.api.total_errors += 1;
                *m.api.errors_by_type.entry(kind.to_string()).or_default() += 1;
            }
        }
    }

    /// One finished tool call.
    pub fn tool_call(&mut self, call: &CompletedCall) {
        let ok = call.status == CallState::Success;
        let t = &mut self.tools;
        t.total_calls += 1;
        t.total_success += u64::from(ok);
        t.total_fail += u64::from(!ok);
        t.total_duration_ms += call.duration_ms;
        t.total_decisions.count(call.decision);
        let n = t.by_name.entry(call.request.name.clone()).or_default();
        n.count += 1;
        n.success += u64::from(ok);
        n.fail += u64::from(!ok);
        n.duration_ms += call.duration_ms;
        n.decisions.count(call.decision);
        if let Some(stat) = call.result.as_ref().map(|r| &r.return_display["diffStat"]) {
            let lines = |k: &str| stat[k].as_u64().unwrap_or(0);
            self.files.total_lines_added += lines("model_added_lines");
            self.files.total_lines_removed += lines("model_removed_lines");
        }
    }

    /// Upstream's stream-json `result` stats: totals, duration, tool calls and per-model tokens.
    pub fn stream_stats(&self, duration_ms: u64) -> Value {
        let mut models = Map::new();
        let (mut total, mut input_tokens, mut output, mut cached, mut input) = (0, 0, 0, 0, 0);
        for (name, m) in &self.models {
            let t = &m.tokens;
            models.insert(
                name.clone(),
                serde_json::json!({"total_tokens": t.total, "input_tokens": t.prompt,
                    "output_tokens": t.candidates, "cached": t.cached, "input": t.input}),
            );
            total += t.total;
            input_tokens += t.prompt;
            output += t.candidates;
            cached += t.cached;
            input += t.input;
        }
        serde_json::json!({"total_tokens": total, "input_tokens": input_tokens,
            "output_tokens": output, "cached": cached, "input": input, "duration_ms": duration_ms,
            "tool_calls": self.tools.total_calls, "models": models})
    }
}
