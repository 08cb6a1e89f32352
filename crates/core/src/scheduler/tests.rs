use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::approver::Outcome;
use crate::approver::{ChannelApprover, FixedApprover};
use crate::kind::Kind;
use crate::policy::{Decision, Rule};
use crate::result::ErrorType;
use crate::testing::{Behaviour, FakeTool, Journal, test_env};
use crate::tool::Tool;

struct Harness {
    scheduler: Arc<Scheduler>,
    journal: Arc<Journal>,
    events: Arc<Mutex<Vec<Event>>>,
    _dir: crate::testing::TempTree,
}

fn tools(journal: &Arc<Journal>) -> Vec<Arc<dyn Tool>> {
    let fake = |name: &str, kind, b| {
        Arc::new(FakeTool::new(name, kind, b, journal.clone())) as Arc<dyn Tool>
    };
    let slow = Behaviour::Echo { delay: Duration::from_millis(150) };
    vec![
        fake("read", Kind::Read, slow.clone()),
        fake("edit", Kind::Edit, slow),
        fake("quick", Kind::Read, Behaviour::Echo { delay: Duration::ZERO }),
        fake("stubborn", Kind::Read, Behaviour::Stubborn),
        fake("cooperative", Kind::Read, Behaviour::Cooperative),
        fake("fail", Kind::Read, Behaviour::Fail),
        fake("parts", Kind::Read, Behaviour::ManyParts { n: 400_000 }),
        fake("panic", Kind::Read, Behaviour::Panic),
        Arc::new(
            FakeTool::new("big", Kind::Execute, Behaviour::Big { n: 50_000 }, journal.clone())
                .truncating(),
        ),
        fake(
            "commits_late",
            Kind::Edit,
            Behaviour::Commits { before: Duration::from_millis(400), after: Duration::ZERO },
        ),
        fake(
            "commits_early",
            Kind::Edit,
            Behaviour::Commits { before: Duration::ZERO, after: Duration::from_millis(150) },
        ),
    ]
}

fn harness(
    rules: Vec<Rule>,
    interactive: bool,
    approver: Arc<dyn Approver>,
    timeout_ms: u64,
) -> Harness {
    let journal = Arc::new(Journal::default());
    let (dir, mut env) = test_env();
    let mut config = (*env.config).clone();
    config.tool_call_timeout_ms = timeout_ms;
    env.config = Arc::new(config);
    let registry = Arc::new(Registry::builder().tools(tools(&journal)).build().unwrap());
    let policy = Arc::new(PolicyEngine::new(rules, interactive));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink_events = events.clone();
    let options = SchedulerOptions { grace: Duration::from_millis(200), ..Default::default() };
    let scheduler = Scheduler::new(registry, policy, approver, env, options)
        .with_events(Arc::new(move |e: &Event| sink_events.lock().unwrap().push(e.clone())));
    Harness { scheduler: Arc::new(scheduler), journal, events, _dir: dir }
}

fn allow_all() -> Harness {
    harness(
        vec![Rule::new("*", Decision::Allow, 1.0, "test")],
        false,
        Arc::new(FixedApprover(Outcome::Cancel)),
        10_000,
    )
}

fn call(id: &str, name: &str, text: &str) -> CallRequest {
    CallRequest::new(id, name, json!({ "text": text }))
}

fn output(c: &CompletedCall) -> Value {
    c.response.response_value()
}

fn overlaps(j: &Journal, a: &str, b: &str) -> bool {
    let runs = j.runs.lock().unwrap();
    let find = |t: &str| runs.iter().find(|r| r.0 == t).map(|r| (r.1, r.2)).unwrap();
    let (a0, a1) = find(a);
    let (b0, b1) = find(b);
    a0 < b1 && b0 < a1
}

#[tokio::test]
async fn read_only_calls_run_together_and_mutating_calls_run_alone() {
    let h = allow_all();
    let calls = vec![
        call("1", "read", "r1"),
        call("2", "read", "r2"),
        call("3", "edit", "e"),
        call("4", "read", "r3"),
    ];
    let done = h.scheduler.schedule(calls, CancellationToken::new()).await;
    let ids: Vec<_> = done.iter().map(|c| c.request.call_id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4"], "responses in request order");
    assert!(done.iter().all(|c| c.status == CallState::Success));
    assert!(overlaps(&h.journal, "r1", "r2"), "contiguous reads run in parallel");
    assert!(
        !overlaps(&h.journal, "r2", "e") && !overlaps(&h.journal, "e", "r3"),
        "the edit runs alone"
    );
}

/// Issue 19: two `schedule()` batches at once (two MCP clients) ran their mutating calls at the
/// same time. A batch now waits for the one before it; read-only batches still share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_batches_never_overlap_mutating_calls() {
    let h = Arc::new(allow_all());
    let run = |batch: Vec<CallRequest>| {
        let h = h.clone();
        tokio::spawn(async move { h.scheduler.schedule(batch, CancellationToken::new()).await })
    };
    let a = run(vec![call("a1", "edit", "ea"), call("a2", "read", "ra")]);
    let b = run(vec![call("b1", "edit", "eb")]);
    let c = run(vec![call("c1", "read", "rc")]);
    for done in [a.await.unwrap(), b.await.unwrap(), c.await.unwrap()] {
        assert!(done.iter().all(|c| c.status == CallState::Success));
    }
    assert!(!overlaps(&h.journal, "ea", "eb"), "mutating calls of two batches overlapped");
    assert!(!overlaps(&h.journal, "eb", "ra") && !overlaps(&h.journal, "ea", "rc"));
    // Read-only batches share.
    let r1 = run(vec![call("r1", "read", "x1")]);
    let r2 = run(vec![call("r2", "read", "x2")]);
    r1.await.unwrap();
    r2.await.unwrap();
    assert!(overlaps(&h.journal, "x1", "x2"), "read-only batches run together");
}

#[tokio::test]
async fn wait_for_previous_makes_a_call_wait() {
    let h = allow_all();
    let mut second = call("2", "read", "r2");
    second.args["wait_for_previous"] = json!(true);
    h.scheduler.schedule(vec![call("1", "read", "r1"), second], CancellationToken::new()).await;
    assert!(!overlaps(&h.journal, "r1", "r2"));
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_answer_without_stopping_the_batch() {
    let h = allow_all();
    let calls = vec![
        CallRequest::new("1", "raed", json!({"text": "x"})),
        CallRequest::new("2", "quick", json!({})),
        CallRequest::new("3", "quick", json!({"text": "invalid"})),
        CallRequest::new("4", "quick", json!([1, 2])),
        call("5", "quick", "fine"),
    ];
    let done = h.scheduler.schedule(calls, CancellationToken::new()).await;
    assert_eq!(done.len(), 5);
    assert_eq!(done[0].error.as_ref().unwrap().kind, ErrorType::ToolNotRegistered);
    assert!(
        output(&done[0])["error"]
            .as_str()
            .unwrap()
            .starts_with("Tool \"raed\" not found. Did you mean one of: \"read\"")
    );
    assert_eq!(output(&done[1]), json!({"error": "params must have required property 'text'"}));
    assert_eq!(done[1].error.as_ref().unwrap().kind, ErrorType::InvalidToolParams);
    assert_eq!(output(&done[2]), json!({"error": "The 'text' parameter must not be \"invalid\"."}));
    assert_eq!(output(&done[3]), json!({"error": "Value of params must be an object"}));
    assert_eq!(output(&done[4]), json!({"output": "fine"}));
}

#[tokio::test]
async fn a_tool_that_ignores_time_is_stopped_and_reported() {
    let h = harness(
        vec![Rule::new("*", Decision::Allow, 1.0, "t")],
        false,
        Arc::new(FixedApprover(Outcome::Cancel)),
        50,
    );
    let started = Instant::now();
    let done = h
        .scheduler
        .schedule(
            vec![call("1", "stubborn", "x"), call("2", "quick", "ok")],
            CancellationToken::new(),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the scheduler does not wait for a stubborn tool"
    );
    let err = done[0].error.as_ref().unwrap();
    assert_eq!(err.kind, ErrorType::ToolCallTimeout);
    assert!(err.message.starts_with("Tool \"stubborn\" timed out after 50 ms"), "{}", err.message);
    assert!(err.message.contains("raise tool_call_timeout_ms"), "{}", err.message);
    assert_eq!(done[0].status, CallState::Error);
    assert_eq!(output(&done[1]), json!({"output": "ok"}));
}

#[tokio::test]
async fn a_timeout_fires_the_token_so_the_work_really_stops() {
    let h = harness(
        vec![Rule::new("*", Decision::Allow, 1.0, "t")],
        false,
        Arc::new(FixedApprover(Outcome::Cancel)),
        50,
    );
    let done =
        h.scheduler.schedule(vec![call("1", "cooperative", "x")], CancellationToken::new()).await;
    assert!(h.journal.worker_stopped.load(Ordering::SeqCst), "worker thread saw the token");
    let err = done[0].error.as_ref().unwrap();
    assert_eq!(err.kind, ErrorType::ToolCallTimeout);
    assert!(err.message.contains("Output before the timeout:\npartial work"), "{}", err.message);
}

/// A scheduler allowing every call, with a 50 ms grace and the config `configure` makes.
fn with_config(
    configure: impl FnOnce(&mut crate::Config),
) -> (crate::testing::TempTree, Scheduler) {
    let journal = Arc::new(Journal::default());
    allowing(tools(&journal), Duration::from_millis(50), configure)
}

/// A scheduler of `tools` allowing every call, with `grace` and the config `configure` makes.
fn allowing(
    tools: Vec<Arc<dyn Tool>>,
    grace: Duration,
    configure: impl FnOnce(&mut crate::Config),
) -> (crate::testing::TempTree, Scheduler) {
    let (dir, mut env) = test_env();
    let mut config = (*env.config).clone();
    configure(&mut config);
    env.config = Arc::new(config);
    let registry = Arc::new(Registry::builder().tools(tools).build().unwrap());
    let policy =
        Arc::new(PolicyEngine::new(vec![Rule::new("*", Decision::Allow, 1.0, "t")], false));
    let options = SchedulerOptions { grace, ..Default::default() };
    let s =
        Scheduler::new(registry, policy, Arc::new(FixedApprover(Outcome::Cancel)), env, options);
    (dir, s)
}

#[tokio::test]
async fn per_tool_timeout_overrides_the_global_one() {
    let (_dir, s) = with_config(|config| {
        config.tool_call_timeout_ms = 60_000;
        config.tool_timeouts_ms.insert("stubborn".into(), 30);
    });
    let done = s.schedule(vec![call("1", "stubborn", "x")], CancellationToken::new()).await;
    let msg = &done[0].error.as_ref().unwrap().message;
    assert!(msg.contains("timed out after 30 ms"));
    // Issue 37: the setting that gave the deadline is the one named.
    assert!(msg.contains("raise tools.toolTimeoutsMs for stubborn"), "{msg}");
    assert!(!msg.contains("tool_call_timeout_ms"), "{msg}");
}

#[tokio::test]
async fn aborting_the_batch_cancels_running_and_queued_calls_with_one_response_each() {
    let h = allow_all();
    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(40)).await;
        t2.cancel();
    });
    let calls =
        vec![call("1", "cooperative", "a"), call("2", "edit", "e"), call("3", "quick", "q")];
    let done = h.scheduler.schedule(calls, token).await;
    assert_eq!(done.len(), 3);
    assert!(done.iter().all(|c| c.status == CallState::Cancelled), "{done:#?}");
    // The running call returned content after the abort: output plus the cancellation error.
    assert_eq!(
        output(&done[0]),
        json!({"output": "partial work", "error": "[Operation Cancelled] User cancelled tool execution."})
    );
    assert_eq!(
        output(&done[1]),
        json!({"error": "[Operation Cancelled] Reason: Operation cancelled"})
    );
    assert_eq!(
        output(&done[2]),
        json!({"error": "[Operation Cancelled] Reason: Operation cancelled"})
    );
    assert!(h.journal.worker_stopped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn cancel_one_call_leaves_the_others_alone() {
    let h = allow_all();
    let s = h.scheduler.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(s.cancel_call("1"));
    });
    let done = h
        .scheduler
        .schedule(
            vec![call("1", "stubborn", "a"), call("2", "read", "b")],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(done[0].status, CallState::Cancelled);
    assert_eq!(
        output(&done[0]),
        json!({"error": "[Operation Cancelled] Reason: Operation cancelled by user"})
    );
    assert_eq!(output(&done[1]), json!({"output": "b"}));
    assert!(!h.scheduler.cancel_call("1"), "finished calls are forgotten");
}

#[tokio::test]
async fn cancel_all_stops_everything() {
    let h = allow_all();
    let s = h.scheduler.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        s.cancel_all();
    });
    let done = h
        .scheduler
        .schedule(
            vec![call("1", "stubborn", "a"), call("2", "edit", "b")],
            CancellationToken::new(),
        )
        .await;
    assert!(done.iter().all(|c| c.status == CallState::Cancelled));
    assert_eq!(
        output(&done[0]),
        json!({"error": "[Operation Cancelled] Reason: Operation cancelled by user"})
    );
}

#[tokio::test]
async fn policy_denial_and_headless_confirmation_are_refusals() {
    let mut deny = Rule::new("edit", Decision::Deny, 2.0, "t");
    deny.deny_message = Some("No edits here.".into());
    let h = harness(
        vec![deny, Rule::new("read", Decision::AskUser, 1.0, "t")],
        false,
        Arc::new(FixedApprover(Outcome::ProceedOnce)),
        10_000,
    );
    let done = h
        .scheduler
        .schedule(
            vec![call("1", "edit", "e"), call("2", "read", "r"), call("3", "quick", "q")],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(
        output(&done[0]),
        json!({"error": "Tool execution denied by policy. No edits here."})
    );
    assert_eq!(done[0].refusal, Some(Refusal::Policy));
    assert_eq!(done[0].error.as_ref().unwrap().kind, ErrorType::PolicyViolation);
    assert_eq!(
        output(&done[1]),
        json!({"error": "Tool execution for \"read\" requires user confirmation, which is not supported in non-interactive mode."})
    );
    assert_eq!(done[1].refusal, Some(Refusal::NoConfirmation));
    assert_eq!(done[2].refusal, Some(Refusal::Policy), "no rule + headless = deny");
    assert_eq!(h.journal.executions.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn user_cancel_denies_the_call_and_cancels_the_queue() {
    let h = harness(
        vec![Rule::new("quick", Decision::Allow, 1.0, "t")],
        true,
        Arc::new(FixedApprover(Outcome::Cancel)),
        10_000,
    );
    let done = h
        .scheduler
        .schedule(vec![call("1", "edit", "e"), call("2", "quick", "q")], CancellationToken::new())
        .await;
    assert_eq!(
        output(&done[0]),
        json!({"error": "[Operation Cancelled] Reason: User denied execution."})
    );
    assert_eq!(done[0].refusal, Some(Refusal::UserDenied));
    assert_eq!(
        output(&done[1]),
        json!({"error": "[Operation Cancelled] Reason: User cancelled operation"})
    );
    assert_eq!(h.journal.executions.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_whole_group_is_approved_before_any_of_it_runs() {
    let (approver, mut rx) = ChannelApprover::new();
    let h = harness(vec![], true, Arc::new(approver), 10_000);
    let journal = h.journal.clone();
    let answers = tokio::spawn(async move {
        let first = rx.recv().await.unwrap();
        assert_eq!(first.request.call_id, "1");
        assert_eq!(first.request.details.title(), "Confirm: quick");
        first.reply(Outcome::ProceedOnce);
        let second = rx.recv().await.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(
            journal.executions.load(Ordering::SeqCst),
            0,
            "nothing ran while the group awaited approval"
        );
        second.reply(Outcome::ProceedOnce);
    });
    let done = h
        .scheduler
        .schedule(vec![call("1", "quick", "a"), call("2", "quick", "b")], CancellationToken::new())
        .await;
    answers.await.unwrap();
    assert!(done.iter().all(|c| c.status == CallState::Success));
}

#[tokio::test]
async fn proceed_always_stops_asking_for_the_same_tool() {
    let (approver, mut rx) = ChannelApprover::new();
    let h = harness(vec![], true, Arc::new(approver), 10_000);
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let asked2 = asked.clone();
    tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            asked2.fetch_add(1, Ordering::SeqCst);
            p.reply(Outcome::ProceedAlways);
        }
    });
    h.scheduler.schedule(vec![call("1", "quick", "a")], CancellationToken::new()).await;
    let done = h.scheduler.schedule(vec![call("2", "quick", "b")], CancellationToken::new()).await;
    assert_eq!(done[0].status, CallState::Success);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn failures_and_panics_become_error_responses() {
    let h = allow_all();
    let done = h
        .scheduler
        .schedule(
            vec![call("1", "fail", "x"), call("2", "panic", "y"), call("3", "quick", "z")],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(output(&done[0]), json!({"error": "failed: x"}));
    assert_eq!(done[0].error.as_ref().unwrap().kind, ErrorType::ExecutionFailed);
    assert_eq!(done[1].error.as_ref().unwrap().kind, ErrorType::UnhandledException);
    assert!(output(&done[1])["error"].as_str().unwrap().contains("fake tool panicked on y"));
    assert_eq!(output(&done[2]), json!({"output": "z"}));
}

#[tokio::test]
async fn big_output_of_a_bounded_tool_is_truncated_and_saved() {
    let h = allow_all();
    let done =
        h.scheduler.schedule(vec![call("big__1", "big", "x")], CancellationToken::new()).await;
    let out = output(&done[0])["output"].as_str().unwrap().to_string();
    let file = done[0].output_file.clone().expect("saved");
    assert!(out.starts_with(&format!(
        "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: {}",
        file.display()
    )));
    assert!(out.contains("... [10,000 characters omitted] ..."));
    assert_eq!(std::fs::read_to_string(file).unwrap().len(), 50_000);
}

#[tokio::test]
async fn events_trace_the_state_machine() {
    let h = allow_all();
    h.scheduler.schedule(vec![call("1", "quick", "hello")], CancellationToken::new()).await;
    let events = h.events.lock().unwrap().clone();
    let states: Vec<CallState> = events
        .iter()
        .filter_map(|e| match e {
            Event::State { state, .. } => Some(*state),
            Event::Output { .. } | Event::Built { .. } => None,
        })
        .collect();
    assert_eq!(
        states,
        [CallState::Validating, CallState::Scheduled, CallState::Executing, CallState::Success]
    );
    assert!(events.contains(&Event::Output { call_id: "1".into(), chunk: "hello".into() }));
    let line = serde_json::to_string(&events[0]).unwrap();
    assert_eq!(line, r#"{"event":"state","call_id":"1","name":"quick","state":"validating"}"#);
}

#[tokio::test]
async fn always_allow_and_save_persists_a_rule_for_later_sessions() {
    let h = harness(vec![], true, Arc::new(FixedApprover(Outcome::ProceedAlwaysAndSave)), 10_000);
    let done = h.scheduler.schedule(vec![call("1", "quick", "a")], CancellationToken::new()).await;
    assert_eq!(done[0].status, CallState::Success);
    let dir = h._dir.home().join("policies");
    let text = std::fs::read_to_string(dir.join("auto-saved.toml")).unwrap();
    assert!(text.contains("toolName = \"quick\"") && text.contains("priority = 950"), "{text}");
    let (engine, errors) = PolicyEngine::load(&[(dir.as_path(), crate::policy::Tier::User)], true);
    assert!(errors.is_empty(), "{errors:?}");
    let args = json!({"text": "b"});
    let call = crate::policy::PolicyCall {
        name: "quick",
        args: &args,
        server_name: None,
        annotations: None,
        canonical: None,
    };
    let v = engine.check(&call, ApprovalMode::Default);
    assert_eq!(v.decision, Decision::Allow, "a new session allows it without asking");
}

/// Issue 22 (a search reading many files peaked at twice its output): the response the model receives
/// shares the tool's text instead of holding a copy of it, so a million-character answer costs
/// its pages once.
#[tokio::test]
async fn the_response_holds_the_tools_text_once() {
    let h = allow_all();
    let done =
        h.scheduler.schedule(vec![call("1", "quick", "hello")], CancellationToken::new()).await;
    let c = &done[0];
    let out = c.response.function_response.response.output().unwrap();
    let Some(crate::result::Content::Shared(text)) = c.result.as_ref().map(|r| &r.llm_content)
    else {
        panic!("{:?}", c.result)
    };
    assert_eq!(out, text.as_str());
    assert_eq!(
        out.as_ptr(),
        text.as_str().as_ptr(),
        "the response holds a copy of the tool's text"
    );
    // What callers see is unchanged: the result is still a string in JSON.
    assert_eq!(serde_json::to_value(&c.result.as_ref().unwrap().llm_content).unwrap(), json!(out));
}

/// Issue 35, finding 2: a call reported as timed out could still write afterwards (the edit
/// computed on the blocking pool never looked at its token before renaming). Held past its
/// commit point by the deadline, it never commits; committed before the deadline, it is
/// reported as done, not as "timed out ... and was stopped".
#[tokio::test]
async fn a_timed_out_call_has_changed_nothing() {
    let h = harness(
        vec![Rule::new("*", Decision::Allow, 1.0, "test")],
        false,
        Arc::new(FixedApprover(Outcome::Cancel)),
        100,
    );
    let done =
        h.scheduler.schedule(vec![call("1", "commits_late", "x")], CancellationToken::new()).await;
    let err = done[0].error.as_ref().expect("timed out");
    assert_eq!(err.kind, ErrorType::ToolCallTimeout, "{}", err.message);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        !h.journal.committed.load(Ordering::SeqCst),
        "the call committed after its timeout was reported"
    );

    let h = harness(
        vec![Rule::new("*", Decision::Allow, 1.0, "test")],
        false,
        Arc::new(FixedApprover(Outcome::Cancel)),
        100,
    );
    let done =
        h.scheduler.schedule(vec![call("1", "commits_early", "x")], CancellationToken::new()).await;
    assert!(h.journal.committed.load(Ordering::SeqCst));
    assert!(
        done[0].error.is_none(),
        "a committed call was reported as stopped: {:?}",
        done[0].error
    );
}

/// Issue 35, finding 7: error paths skipped the caps (a discovered tool printing 1 GB gave a
/// 10 MB error; an MCP `isError` of 12 MiB went through whole). An error's text is cut like a
/// success's and saved whole.
#[tokio::test]
async fn an_error_is_bounded_like_a_success() {
    let h = allow_all();
    let big = "e".repeat(300_000);
    let done = h.scheduler.schedule(vec![call("1", "fail", &big)], CancellationToken::new()).await;
    let err = done[0].error.as_ref().unwrap();
    assert!(err.message.len() < 60_000, "{}", err.message.len());
    assert!(
        err.message.contains("For full output see:"),
        "{}",
        &err.message[err.message.len() - 300..]
    );
    let sent = done[0].response.response_value();
    assert!(sent["error"].as_str().unwrap().len() < 60_000);
}

mod bounds;
