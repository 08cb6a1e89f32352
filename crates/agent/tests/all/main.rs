//! The turn loop against fake model servers (test support, on loopback).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod gemini;
mod openai;
mod replay;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolbelt_agent::agent::{Agent, AgentEvent, RunOutcome};
use toolbelt_agent::client::{ModelClient, RetryPolicy};
use toolbelt_core::approver::{FixedApprover, Outcome};
use toolbelt_core::policy::{Decision, PolicyEngine, Rule};
use toolbelt_core::testing::{Behaviour, FakeTool, Journal, test_env};
use toolbelt_core::tool::Tool;
use toolbelt_core::{Kind, ModelFamily, Registry, Scheduler, SchedulerOptions};

pub const FAST_RETRY: RetryPolicy = RetryPolicy {
    max_attempts: 4,
    base_delay: Duration::from_millis(10),
    max_delay: Duration::from_millis(50),
};

/// Tools `echo`, `slow` (5 s, 200 ms deadline) and `forbidden` (denied by policy); everything
/// else is allowed, headless.
pub fn scheduler() -> (toolbelt_core::testing::TempTree, Arc<Scheduler>) {
    let (dir, mut env) = test_env();
    let mut config = (*env.config).clone();
    config.tool_timeouts_ms.insert("slow".into(), 200);
    env.config = Arc::new(config);
    let journal = Arc::new(Journal::default());
    let tool = |name: &str, b: Behaviour| -> Arc<dyn Tool> {
        Arc::new(FakeTool::new(name, Kind::Read, b, journal.clone()))
    };
    let tools = vec![
        tool("echo", Behaviour::Echo { delay: Duration::ZERO }),
        tool("slow", Behaviour::Echo { delay: Duration::from_secs(5) }),
        tool("forbidden", Behaviour::Echo { delay: Duration::ZERO }),
    ];
    let registry = Arc::new(Registry::builder().tools(tools).build().unwrap());
    let rules = vec![
        Rule::new("*", Decision::Allow, 1.0, "test"),
        Rule::new("forbidden", Decision::Deny, 2.0, "test"),
    ];
    let policy = Arc::new(PolicyEngine::new(rules, false));
    let options = SchedulerOptions { grace: Duration::from_millis(100), ..Default::default() };
    let s =
        Scheduler::new(registry, policy, Arc::new(FixedApprover(Outcome::Cancel)), env, options);
    (dir, Arc::new(s))
}

pub fn agent(client: Arc<dyn ModelClient>, scheduler: Arc<Scheduler>) -> Agent {
    Agent {
        client,
        declare: toolbelt_agent::agent::fixed(
            scheduler.registry().declarations(ModelFamily::Legacy),
        ),
        scheduler,
        system_instruction: Some(toolbelt_agent::agent::fixed_instruction("be brief")),
        max_turns: None,
        masking: None,
    }
}

/// Runs and collects the events as text lines.
pub async fn run(
    agent: &Agent,
    prompt: &str,
    cancel: &CancellationToken,
) -> (RunOutcome, Vec<String>) {
    let mut events = Vec::new();
    let outcome = agent
        .run(prompt, cancel, &mut |e| {
            events.push(match e {
                AgentEvent::Text(t) => format!("text {t}"),
                AgentEvent::Thought(t) => format!("thought {t}"),
                AgentEvent::Retrying { attempt, .. } => format!("retry {attempt}"),
                AgentEvent::ModelAnswered { .. } => "answered".into(),
                AgentEvent::ToolCall { name, .. } => format!("call {name}"),
                AgentEvent::ToolResult { name, response, .. } => {
                    format!("result {name} {}", response.function_response.response.to_value())
                }
            })
        })
        .await;
    (outcome, events)
}
