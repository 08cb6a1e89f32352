//! The pipeline's own cost per call, in process (no transport): one read_file of a small file
//! through each phase (build with path resolution, policy with the bundled rules, execution)
//! and through the whole scheduler.
//! Run with `cargo bench -p agent-toolbelt --bench pipeline`.

#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::approver::{FixedApprover, Outcome};
use toolbelt_core::policy::{ApprovalMode, PolicyCall, PolicyEngine, default_rules};
use toolbelt_core::scheduler::CallRequest;
use toolbelt_core::tool::ExecContext;
use toolbelt_core::workspace::Access;
use toolbelt_core::{Registry, Scheduler, SchedulerOptions};

const N: u32 = 50_000;

fn per_call(what: &str, elapsed: Duration) {
    println!("{what}: {:.2} us per call ({N} calls)", elapsed.as_secs_f64() * 1e6 / f64::from(N));
}

fn main() {
    let (_dir, env) = toolbelt_core::testing::test_env();
    let root = env.workspace.primary().to_path_buf();
    std::fs::write(root.join("small.txt"), "line one\nline two\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let registry = Arc::new(
        Registry::builder()
            .tools(toolbelt_tools::builtin_tools())
            .build()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let policy = Arc::new(PolicyEngine::new(default_rules().rules, false).with_workspace(&root));
    let args = json!({"file_path": "small.txt"});

    let t = Instant::now();
    for _ in 0..N {
        let r = env.workspace.resolve_checked("small.txt", Access::Read);
        assert!(r.is_ok());
    }
    per_call("path resolution and checks", t.elapsed());

    let t = Instant::now();
    for _ in 0..N {
        assert!(registry.build_call("read_file", args.clone(), &env).is_ok());
    }
    per_call("build (validation, resolution)", t.elapsed());

    let built =
        registry.build_call("read_file", args.clone(), &env).unwrap_or_else(|e| panic!("{e:?}"));
    let call = PolicyCall {
        name: "read_file",
        args: &built.args,
        server_name: None,
        annotations: built.tool.annotations(),
        canonical: None,
    };
    let t = Instant::now();
    for _ in 0..N {
        assert_eq!(policy.check(&call, ApprovalMode::Default).decision.as_str(), "allow");
    }
    per_call("policy check (bundled rules)", t.elapsed());

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let t = Instant::now();
        for i in 0..N {
            let ctx = ExecContext::new(format!("c{i}"), CancellationToken::new());
            assert!(built.invocation.execute(ctx).await.error.is_none());
        }
        per_call("execution (open, read, format)", t.elapsed());

        let approver = Arc::new(FixedApprover(Outcome::ProceedOnce));
        let scheduler = Scheduler::new(
            registry.clone(),
            policy,
            approver,
            env.clone(),
            SchedulerOptions::default(),
        );
        let t = Instant::now();
        for i in 0..N {
            let req = CallRequest::new(format!("c{i}"), "read_file", args.clone());
            let done = scheduler.schedule(vec![req], CancellationToken::new()).await;
            assert!(done[0].error.is_none());
        }
        per_call("whole scheduler (all of the above, deadline, events, response)", t.elapsed());
    });
}
