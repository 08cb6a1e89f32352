//! Each hook outcome through the scheduler, with real hook commands.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::approver::{FixedApprover, Outcome};
use crate::policy::{Decision, PolicyEngine, Rule};
use crate::registry::Registry;
use crate::scheduler::{CallRequest, CallState, CompletedCall, Scheduler, SchedulerOptions};
use crate::settings::{HookGroup, HookSettings};
use crate::testing::{EchoTool, test_env};

fn hook(command: &str) -> HookEntry {
    HookEntry {
        command: command.into(),
        name: None,
        timeout_ms: 5_000,
        env: Default::default(),
        fail: FailMode::Open,
    }
}

fn settings(event: &str, matcher: Option<&str>, hooks: Vec<HookEntry>) -> HookSettings {
    let mut s = HookSettings { enabled: true, ..Default::default() };
    s.events.insert(
        event.into(),
        vec![HookGroup { matcher: matcher.map(String::from), sequential: false, hooks }],
    );
    s
}

struct H {
    scheduler: Scheduler,
    _dir: crate::testing::TempTree,
}

fn harness(hooks: HookSettings, interactive: bool, approver: Outcome) -> H {
    let (dir, env) = test_env();
    let registry = Arc::new(
        Registry::builder()
            .tool(Arc::new(EchoTool::named("echo")))
            .tool(Arc::new(EchoTool::named("other")))
            .build()
            .unwrap(),
    );
    let policy = Arc::new(PolicyEngine::new(
        vec![Rule::new("*", Decision::Allow, 1.0, "test")],
        interactive,
    ));
    let ctx = HookContext {
        env_redaction: Default::default(),
        sandbox: None,
        project_dir: env.workspace.primary().to_path_buf(),
        session_id: "s1".into(),
        transcript_path: String::new(),
    };
    let scheduler = Scheduler::new(
        registry,
        policy,
        Arc::new(FixedApprover(approver)),
        env,
        SchedulerOptions::default(),
    )
    .with_hooks(CommandHooks::new(hooks, ctx));
    H { scheduler, _dir: dir }
}

async fn run(h: &H, name: &str, text: &str) -> CompletedCall {
    let req = CallRequest::new("c1", name, json!({ "text": text }));
    h.scheduler.schedule(vec![req], CancellationToken::new()).await.pop().unwrap()
}

fn response(c: &CompletedCall) -> Value {
    c.response.response_value()
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/bash\n{body}\n")).unwrap();
    format!("bash {}", p.display())
}

#[tokio::test]
async fn allow_runs_the_call_and_sees_the_input_json() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let cmd = script(dir.path(), "h.sh", &format!("cat > {}; exit 0", seen.display()));
    let h = harness(settings("BeforeTool", None, vec![hook(&cmd)]), false, Outcome::Cancel);
    let c = run(&h, "echo", "hello").await;
    assert_eq!(response(&c), json!({"output": "hello"}));
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "BeforeTool");
    assert_eq!(input["tool_name"], "echo");
    assert_eq!(input["tool_input"], json!({"text": "hello"}));
    assert_eq!(input["session_id"], "s1");
    assert!(input["timestamp"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn exit_code_two_denies_with_the_text_as_reason() {
    let h = harness(
        settings("BeforeTool", None, vec![hook("echo 'no rm here' >&2; exit 2")]),
        false,
        Outcome::Cancel,
    );
    let c = run(&h, "echo", "x").await;
    assert_eq!(response(&c), json!({"error": "Tool execution blocked: no rm here"}));
    assert_eq!(c.error.unwrap().kind, crate::ErrorType::PolicyViolation);
}

#[tokio::test]
async fn json_decision_deny_blocks_and_matchers_select_tools() {
    let deny = hook(r#"echo '{"decision": "deny", "reason": "not today"}'"#);
    let h = harness(settings("BeforeTool", Some("^echo$"), vec![deny]), false, Outcome::Cancel);
    assert_eq!(
        response(&run(&h, "echo", "x").await),
        json!({"error": "Tool execution blocked: not today"})
    );
    assert_eq!(
        response(&run(&h, "other", "x").await),
        json!({"output": "x"}),
        "matcher skips other tools"
    );
}

#[tokio::test]
async fn arguments_can_be_rewritten_and_the_model_is_told() {
    let rewrite = hook(r#"echo '{"hookSpecificOutput": {"tool_input": {"text": "rewritten"}}}'"#);
    let h = harness(settings("BeforeTool", None, vec![rewrite]), false, Outcome::Cancel);
    let c = run(&h, "echo", "original").await;
    assert_eq!(
        response(&c),
        json!({"output": "rewritten\n\n[System] Tool input parameters were modified by a hook before execution."})
    );
    let bad = hook(r#"echo '{"hookSpecificOutput": {"tool_input": {"text": "invalid"}}}'"#);
    let h = harness(settings("BeforeTool", None, vec![bad]), false, Outcome::Cancel);
    let c = run(&h, "echo", "original").await;
    assert!(
        response(&c)["error"]
            .as_str()
            .unwrap()
            .starts_with("Tool parameter modification by hook failed validation: ")
    );
}

#[tokio::test]
async fn after_tool_adds_context_blocks_and_stops() {
    let ctx = hook(r#"echo '{"hookSpecificOutput": {"additionalContext": "lint: 2 <warnings>"}}'"#);
    let h = harness(settings("AfterTool", None, vec![ctx]), false, Outcome::Cancel);
    assert_eq!(
        response(&run(&h, "echo", "out").await),
        json!({"output": "out\n\n<hook_context>lint: 2 &lt;warnings&gt;</hook_context>"})
    );
    let block = hook(r#"echo '{"decision": "block", "reason": "secret in output"}'"#);
    let h = harness(settings("AfterTool", None, vec![block]), false, Outcome::Cancel);
    let c = run(&h, "echo", "out").await;
    assert_eq!(response(&c), json!({"error": "secret in output"}));
    assert_eq!(c.error.unwrap().kind, crate::ErrorType::ExecutionFailed);
    let stop = hook(r#"echo '{"continue": false, "stopReason": "budget spent"}'"#);
    let h = harness(settings("BeforeTool", None, vec![stop]), false, Outcome::Cancel);
    let c = run(&h, "echo", "out").await;
    assert_eq!(response(&c), json!({"error": "Agent execution stopped by hook: budget spent"}));
    assert_eq!(c.error.unwrap().kind, crate::ErrorType::StopExecution);
}

#[tokio::test]
async fn ask_forces_a_confirmation_even_when_policy_allows() {
    let ask = hook(r#"echo '{"decision": "ask", "systemMessage": "please check"}'"#);
    let h = harness(settings("BeforeTool", None, vec![ask.clone()]), true, Outcome::Cancel);
    let c = run(&h, "echo", "x").await;
    assert_eq!(c.status, CallState::Cancelled, "the person said no");
    let h = harness(settings("BeforeTool", None, vec![ask]), true, Outcome::ProceedOnce);
    assert_eq!(response(&run(&h, "echo", "x").await), json!({"output": "x"}));
}

#[tokio::test]
async fn a_tail_call_answers_under_the_original_name() {
    let tail = hook(
        r#"echo '{"hookSpecificOutput": {"tailToolCallRequest": {"name": "other", "args": {"text": "from tail"}}}}'"#,
    );
    let h = harness(settings("AfterTool", Some("^echo$"), vec![tail]), false, Outcome::Cancel);
    let c = run(&h, "echo", "first").await;
    assert_eq!(response(&c), json!({"output": "from tail"}));
    assert_eq!(c.response.function_response.name, "echo");
    assert_eq!(c.request.name, "other");
}

#[tokio::test]
async fn crashes_and_timeouts_fail_open_or_closed_as_configured() {
    let crash = hook("kill -9 $$");
    let mut slow = hook("sleep 10");
    slow.timeout_ms = 300;
    for h_open in [crash.clone(), slow.clone()] {
        let h = harness(settings("BeforeTool", None, vec![h_open]), false, Outcome::Cancel);
        assert_eq!(
            response(&run(&h, "echo", "x").await),
            json!({"output": "x"}),
            "fail open: the call goes on"
        );
    }
    for mut h_closed in [crash, slow] {
        h_closed.fail = FailMode::Closed;
        h_closed.name = Some("guard".into());
        let h = harness(settings("BeforeTool", None, vec![h_closed]), false, Outcome::Cancel);
        let started = std::time::Instant::now();
        let err = response(&run(&h, "echo", "x").await)["error"].as_str().unwrap().to_string();
        assert!(err.starts_with("Tool execution blocked: hook \"guard\" failed ("), "{err}");
        assert!(err.ends_with("and is set to fail closed"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(4));
    }
}

#[tokio::test]
async fn several_hooks_merge_and_sequential_hooks_feed_forward() {
    let mut s = settings(
        "BeforeTool",
        None,
        vec![
            hook(r#"echo '{"hookSpecificOutput": {"tool_input": {"text": "a"}}}'"#),
            hook(
                r#"t=$(cat); case "$t" in *'"text":"a"'*) echo '{"hookSpecificOutput": {"tool_input": {"text": "ab"}}}';; *) echo '{"decision":"deny","reason":"did not see a"}';; esac"#,
            ),
        ],
    );
    s.events.get_mut("BeforeTool").unwrap()[0].sequential = true;
    let h = harness(s, false, Outcome::Cancel);
    let out = response(&run(&h, "echo", "x").await);
    assert!(out["output"].as_str().unwrap().starts_with("ab"), "{out}");

    let both = settings("BeforeTool", None, vec![hook("exit 0"), hook("echo bad >&2; exit 3")]);
    let h = harness(both, false, Outcome::Cancel);
    assert_eq!(
        response(&run(&h, "echo", "x").await),
        json!({"error": "Tool execution blocked: bad"})
    );
}

#[test]
fn plain_text_and_json_outputs_map_as_upstream() {
    use output::parse;
    assert_eq!(parse("fine", "", Some(0)).decision.as_deref(), Some("allow"));
    assert_eq!(parse("careful", "", Some(1)).system_message.as_deref(), Some("Warning: careful"));
    let d = parse("", "stop that", Some(2));
    assert!(d.blocks() && d.reason.as_deref() == Some("stop that"));
    assert!(parse(r#"{"decision":"deny"}"#, "", Some(0)).blocks(), "JSON wins over the exit code");
    assert!(parse(r#""{\"decision\":\"block\"}""#, "", Some(0)).blocks(), "JSON in a JSON string");
    assert_eq!(parse("", "", None).decision.as_deref(), Some("allow"));
    assert!(matcher_selects(Some("run_shell|write"), "run_shell_command"));
    assert!(!matcher_selects(Some("^read$"), "read_file"));
    assert!(matcher_selects(Some("(unclosed"), "(unclosed"));
    assert!(matcher_selects(Some("*"), "anything"));
}

#[tokio::test]
async fn a_notification_hook_hears_about_permission_requests() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("n.json");
    let cmd = script(dir.path(), "n.sh", &format!("cat > {}", seen.display()));
    let mut s = settings("Notification", Some("ToolPermission"), vec![hook(&cmd)]);
    s.events.insert(
        "BeforeTool".into(),
        vec![HookGroup {
            matcher: None,
            sequential: false,
            hooks: vec![hook(r#"echo '{"decision":"ask"}'"#)],
        }],
    );
    let h = harness(s, true, Outcome::ProceedOnce);
    assert_eq!(response(&run(&h, "echo", "x").await), json!({"output": "x"}));
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "Notification");
    assert_eq!(input["notification_type"], "ToolPermission");
    assert_eq!(input["message"], "Tool Confirm: echo requires information");
}

#[tokio::test]
async fn an_endless_tail_chain_is_cut_off() {
    let tail = hook(
        r#"echo '{"hookSpecificOutput": {"tailToolCallRequest": {"name": "echo", "args": {"text": "again"}}}}'"#,
    );
    let h = harness(settings("AfterTool", None, vec![tail]), false, Outcome::Cancel);
    let start = std::time::Instant::now();
    let c = run(&h, "echo", "first").await;
    assert_eq!(response(&c), json!({"output": "again"}));
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}

/// Issue 47: a hook's output (up to 1 MiB) was parsed whole whatever it held. Past the budget
/// of values it counts as text saying it was not read, under the usual exit-code rules.
#[test]
fn a_hook_output_of_too_many_values_is_not_parsed() {
    let out = format!("[{}0]", "0,".repeat(300_000));
    let denied = output::parse(&out, "", Some(2));
    assert_eq!(denied.decision.as_deref(), Some("deny"));
    let reason = denied.reason.unwrap_or_default();
    assert!(reason.contains("not read as JSON: it holds more than 100000 JSON values"), "{reason}");
    let allowed = output::parse(&out, "", Some(0));
    assert_eq!(allowed.decision.as_deref(), Some("allow"));
    // Within the budget, JSON is read as before.
    let small = output::parse(r#"{"decision":"block","reason":"no"}"#, "", Some(0));
    assert_eq!(small.decision.as_deref(), Some("block"));
}
