//! Scheduler overhead for one trivial call: validation + policy + dispatch + response.
//! Target: under 20 µs. Run with `cargo bench -p toolbelt-core`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::approver::{FixedApprover, Outcome};
use toolbelt_core::policy::{ApprovalMode, PolicyCall, PolicyEngine, default_rules};
use toolbelt_core::testing::{EchoTool, test_env};
use toolbelt_core::{CallRequest, Registry, Scheduler, SchedulerOptions};

fn bench(c: &mut Criterion) {
    let (_dir, env) = test_env();
    // `read_file` is allowed by the bundled read-only policy, so the call takes the normal path.
    let registry = Arc::new(
        Registry::builder()
            .tool(Arc::new(EchoTool::named("read_file")))
            .build()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let policy = Arc::new(PolicyEngine::new(default_rules().rules, false));
    let scheduler = Scheduler::new(
        registry.clone(),
        policy.clone(),
        Arc::new(FixedApprover(Outcome::Cancel)),
        env.clone(),
        SchedulerOptions::default(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let args = json!({"text": "hello"});

    c.bench_function("schedule one trivial call (validate + policy + run + respond)", |b| {
        b.iter(|| {
            let done = rt.block_on(scheduler.schedule(
                vec![CallRequest::new("c1", "read_file", args.clone())],
                CancellationToken::new(),
            ));
            assert_eq!(done.len(), 1);
        })
    });
    c.bench_function("validate + build only", |b| {
        b.iter(|| registry.build_call("read_file", args.clone(), &env).is_ok())
    });
    c.bench_function("policy check only (bundled rules)", |b| {
        b.iter(|| {
            policy.check(
                &PolicyCall {
                    name: "read_file",
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
