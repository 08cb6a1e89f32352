//! Shell overhead: 100 sequential `true` commands through one scheduler (policy, spawn of bash
//! under its reaper, output capture, reaping, formatting), the same in the sandbox (Landlock
//! ruleset and seccomp filter built per command, applied before exec), and the policy check of a compound
//! command (tree-sitter parse + sub-command checks). Run with `cargo bench -p toolbelt-tools`.

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::approver::{FixedApprover, Outcome};
use toolbelt_core::policy::{ApprovalMode, PolicyCall, PolicyEngine, default_rules};
use toolbelt_core::process::sandbox::{Profile, Sandbox, support};
use toolbelt_core::testing::test_env;
use toolbelt_core::{CallRequest, Registry, Scheduler, SchedulerOptions};

/// A scheduler running commands in yolo mode, in `sandbox` if set.
fn scheduler(
    policy: &Arc<PolicyEngine>,
    sandbox: bool,
) -> (toolbelt_core::testing::TempTree, Scheduler) {
    let (dir, mut env) = test_env();
    if sandbox {
        let mut config = (*env.config).clone();
        let sandbox = Sandbox::new(Profile::DEFAULT, Some(dir.home()), &[], &[])
            .unwrap_or_else(|e| panic!("{e}"));
        config.sandbox = Some(sandbox);
        env.config = Arc::new(config);
    }
    let services = toolbelt_tools::Services::default();
    let registry = Arc::new(
        Registry::builder()
            .tools(toolbelt_tools::builtin_tools_with(&services))
            .build()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let options = SchedulerOptions { mode: ApprovalMode::Yolo, ..SchedulerOptions::default() };
    let scheduler = Scheduler::new(
        registry,
        policy.clone(),
        Arc::new(FixedApprover(Outcome::Cancel)),
        env,
        options,
    );
    (dir, scheduler)
}

fn bench(c: &mut Criterion) {
    let policy = Arc::new(PolicyEngine::new(default_rules().rules, false));
    let plain = scheduler(&policy, false);
    let sandboxed = support().usable().then(|| scheduler(&policy, true));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("shell");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    let hundred = |scheduler: &Scheduler| {
        for i in 0..100 {
            let req =
                CallRequest::new(format!("c{i}"), "run_shell_command", json!({"command": "true"}));
            let done = rt.block_on(scheduler.schedule(vec![req], CancellationToken::new()));
            assert!(done[0].error.is_none());
        }
    };
    group.bench_function("100 sequential `true` through one scheduler", |b| {
        b.iter(|| hundred(&plain.1))
    });
    if let Some((_, sandboxed)) = &sandboxed {
        group.bench_function("100 sequential `true` in the permissive-open sandbox", |b| {
            b.iter(|| hundred(sandboxed))
        });
    }
    group.finish();
    let args = json!({"command": "git status && ls -la | grep foo; echo done > out.txt"});
    c.bench_function("policy check of a compound shell command", |b| {
        b.iter(|| {
            policy.check(
                &PolicyCall {
                    name: "run_shell_command",
                    args: &args,
                    server_name: None,
                    annotations: None,
                    canonical: None,
                },
                ApprovalMode::Default,
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
