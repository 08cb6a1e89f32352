//! One hook's output and the merge of several hooks' outputs.

use crate::json_in::{self, JsonBudget};
use serde_json::{Map, Value};

/// A hook's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookOutput {
    /// `continue: false` stops the agent.
    pub stop: bool,
    /// `stopReason`: why the agent should stop.
    pub stop_reason: Option<String>,
    /// `systemMessage`: a message for the person.
    pub system_message: Option<String>,
    /// `allow`, `approve`, `ask`, `block` or `deny`.
    pub decision: Option<String>,
    /// `reason`: why the hook decided as it did.
    pub reason: Option<String>,
    /// `hookSpecificOutput`: fields for one event.
    pub specific: Map<String, Value>,
}

impl HookOutput {
    /// An output that blocks the call with `reason`.
    pub fn deny(reason: String) -> Self {
        Self { decision: Some("deny".into()), reason: Some(reason), ..Self::default() }
    }

    /// Whether the hook asks to stop the agent.
    pub fn stops(&self) -> bool {
        self.stop
    }

    /// Whether the hook blocks the call.
    pub fn blocks(&self) -> bool {
        matches!(self.decision.as_deref(), Some("block" | "deny"))
    }

    /// Whether the hook asks for a person's confirmation.
    pub fn asks(&self) -> bool {
        self.decision.as_deref() == Some("ask")
    }

    /// `stopReason`, else `reason`, else "No reason provided".
    pub fn effective_reason(&self) -> String {
        self.stop_reason
            .clone()
            .or_else(|| self.reason.clone())
            .unwrap_or_else(|| "No reason provided".into())
    }

    /// Replacement arguments for the call, if any.
    pub fn tool_input(&self) -> Option<&Value> {
        self.specific.get("tool_input")
    }

    /// Text the hook adds for the model.
    pub fn additional_context(&self) -> Option<String> {
        self.specific.get("additionalContext").and_then(Value::as_str).map(String::from)
    }

    /// A tail call: another tool to run after this one, with its arguments.
    pub fn tail_call(&self) -> Option<(String, Value)> {
        let t = self.specific.get("tailToolCallRequest")?.as_object()?;
        let name = t.get("name")?.as_str()?.to_string();
        let args = t.get("args").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        Some((name, args))
    }

    fn from_json(o: &Map<String, Value>) -> Self {
        let s = |k: &str| o.get(k).and_then(Value::as_str).map(String::from);
        Self {
            stop: o.get("continue").and_then(Value::as_bool) == Some(false),
            stop_reason: s("stopReason"),
            system_message: s("systemMessage"),
            decision: s("decision").map(|d| d.to_lowercase()),
            reason: s("reason"),
            specific: o
                .get("hookSpecificOutput")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        }
    }
}

/// Reads a hook's output: a JSON object (also inside a JSON string) wins whatever the exit
/// code; otherwise plain text: exit 0 allows (text as system message), exit 1 allows with a
/// warning, any other code denies with the text as the reason. No exit code (a signal) counts
/// as 0.
pub fn parse(stdout: &str, stderr: &str, exit_code: Option<i32>) -> HookOutput {
    let text = if stdout.trim().is_empty() { stderr.trim() } else { stdout.trim() };
    // Measured before it is parsed (issue 47): output past the budget counts as plain text
    // that says so, under the same exit-code rules.
    let budget = JsonBudget::message(text.len());
    let refused;
    let text = match json_in::measure(text.as_bytes(), budget) {
        Ok(_) => text,
        Err(why) => {
            refused = format!("the hook's output was not read as JSON: {why}");
            refused.as_str()
        }
    };
    if let Ok(v) = json_in::parse_str::<Value>(text, budget) {
        let v = match v {
            Value::String(s) => json_in::parse_str::<Value>(&s, budget).unwrap_or(Value::String(s)),
            other => other,
        };
        if let Value::Object(o) = v {
            return HookOutput::from_json(&o);
        }
    }
    let msg = (!text.is_empty()).then(|| text.to_string());
    match exit_code.unwrap_or(0) {
        0 => HookOutput {
            decision: Some("allow".into()),
            system_message: msg,
            ..HookOutput::default()
        },
        1 => HookOutput {
            decision: Some("allow".into()),
            system_message: msg.map(|m| format!("Warning: {m}")),
            ..HookOutput::default()
        },
        _ => HookOutput { decision: Some("deny".into()), reason: msg, ..HookOutput::default() },
    }
}

fn join(a: &mut Option<String>, b: &Option<String>) {
    if let Some(b) = b {
        *a = Some(match a.take() {
            Some(x) => format!("{x}\n{b}"),
            None => b.clone(),
        });
    }
}

/// Merges hook outputs with upstream's OR logic: any stop stops, any block/deny decides, else
/// any ask, else allow; messages and reasons are joined by newlines; hook-specific output is
/// merged in order (later keys win, additional contexts are joined).
pub fn merge(outputs: Vec<HookOutput>) -> HookOutput {
    let mut m = HookOutput::default();
    let mut contexts: Vec<String> = Vec::new();
    for o in outputs {
        m.stop |= o.stop;
        join(&mut m.stop_reason, &o.stop_reason);
        join(&mut m.system_message, &o.system_message);
        join(&mut m.reason, &o.reason);
        let rank = |d: Option<&str>| match d {
            Some("block" | "deny") => 3,
            Some("ask") => 2,
            Some(_) => 1,
            None => 0,
        };
        if rank(o.decision.as_deref()) > rank(m.decision.as_deref()) {
            m.decision = o.decision.clone();
        }
        if let Some(c) = o.specific.get("additionalContext").and_then(Value::as_str) {
            contexts.push(c.to_string());
        }
        for (k, v) in o.specific {
            m.specific.insert(k, v);
        }
    }
    if !contexts.is_empty() {
        m.specific.insert("additionalContext".into(), Value::String(contexts.join("\n")));
    }
    m
}
