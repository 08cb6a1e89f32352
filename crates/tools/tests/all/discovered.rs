//! Tools from a discovery command: valid, empty, malformed and slow discovery; calls that
//! succeed, fail, and are cancelled.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::tool::{ExecContext, ModelFamily, Tool};
use toolbelt_test_support::TempTree;
use toolbelt_tools::discovered::{DiscoveryConfig, DiscoveryError, discover};

fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/bash\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p.display().to_string()
}

fn cfg(dir: &Path, discovery: String, call: Option<String>, timeout_ms: u64) -> DiscoveryConfig {
    DiscoveryConfig {
        env_redaction: Default::default(),
        sandbox: None,
        discovery_command: discovery,
        call_command: call,
        cwd: dir.to_path_buf(),
        discovery_timeout_ms: timeout_ms,
    }
}

/// A workspace over `dir`, for the sandbox's roots (none is set here).
fn ws(dir: &Path) -> toolbelt_core::Workspace {
    toolbelt_core::Workspace::new(&[dir.to_path_buf()], &Default::default()).unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

const DECLS: &str = r#"[{"function_declarations": [{"name": "deploy", "description": "Deploys it.", "parametersJsonSchema": {"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]}}]},
 {"name": "lint", "description": "Lints.", "parameters": {"type": "OBJECT", "properties": {"n": {"type": "INTEGER"}}}},
 {"description": "nameless, skipped"}]"#;

#[test]
fn discovery_registers_prefixed_tools_of_kind_other() {
    let t = TempTree::new();
    let d = script(t.root(), "discover.sh", &format!("cat <<'EOF'\n{DECLS}\nEOF"));
    let tools = rt()
        .block_on(discover(&cfg(t.root(), format!("{d} --json"), None, 5000), &ws(t.root())))
        .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["discovered_tool_deploy", "discovered_tool_lint"]);
    assert_eq!(tools[0].kind(), toolbelt_core::Kind::Other);
    let decl = tools[0].declaration(ModelFamily::Legacy);
    assert!(
        decl.description
            .starts_with("Deploys it.\n\nThis tool comes from the project's discovery command")
    );
    assert_eq!(decl.parameters["required"], json!(["env"]));
    // Issue 19: the `parameters` form keeps its schema (upstream ignores it; compat M11).
    assert_eq!(
        tools[1].declaration(ModelFamily::Legacy).parameters,
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
    );
}

/// Issue 19: a multi-word call command (`bash call.sh`) failed with "could not start ...: No such
/// file", and arguments of a `parameters`-form declaration were not validated at all.
#[test]
fn a_multi_word_call_command_runs_and_parameters_schemas_are_enforced() {
    let t = TempTree::new();
    let d = script(t.root(), "d.sh", &format!("cat <<'EOF'\n{DECLS}\nEOF"));
    std::fs::write(t.root().join("call.sh"), "read -r input; echo \"$1 got $input\"\n").unwrap();
    let r = rt();
    let call = Some("bash call.sh".to_string());
    let tools = r.block_on(discover(&cfg(t.root(), d, call, 5000), &ws(t.root()))).unwrap();
    let registry = toolbelt_core::Registry::builder()
        .tools(tools.iter().map(|t| t.clone() as std::sync::Arc<dyn Tool>))
        .build()
        .unwrap();
    let env = harness_env(&t);
    let bad = registry.build_call("discovered_tool_lint", json!({"n": "three"}), &env).err();
    assert_eq!(bad.map(|e| e.message).as_deref(), Some("params/n must be integer"));
    let built = registry.build_call("discovered_tool_lint", json!({"n": 3}), &env).ok().unwrap();
    let ok = r.block_on(built.invocation.execute(ExecContext::new("c1", CancellationToken::new())));
    assert!(ok.error.is_none(), "{:?}", ok.error);
    let text = format!("{:?}", ok.llm_content);
    assert!(text.contains(r#"lint got {\"n\":3}"#), "{text}");
}

/// Review of the change: a call command that is a relative path with a space (`./call
/// tool.sh`) was looked for in toolbelt's own working folder, not the project, so it was split
/// at the space and could not start.
#[test]
fn a_relative_call_command_with_a_space_is_found_in_the_project() {
    let t = TempTree::new();
    let d = script(t.root(), "d.sh", &format!("cat <<'EOF'\n{DECLS}\nEOF"));
    script(t.root(), "call tool.sh", "read -r input; echo \"$1 ran\"");
    let r = rt();
    let call = Some("./call tool.sh".to_string());
    let tools = r.block_on(discover(&cfg(t.root(), d, call, 5000), &ws(t.root()))).unwrap();
    let lint = tools.iter().find(|t| t.name() == "discovered_tool_lint").unwrap();
    let built = lint.build(json!({"n": 3}), &harness_env(&t)).unwrap();
    let ok = r.block_on(built.execute(ExecContext::new("c1", CancellationToken::new())));
    assert!(ok.error.is_none(), "{:?}", ok.error);
    assert!(format!("{:?}", ok.llm_content).contains("lint ran"), "{:?}", ok.llm_content);
}

#[test]
fn empty_malformed_failing_and_slow_discovery() {
    let t = TempTree::new();
    let run = |body: &str, timeout: u64| {
        let d = script(t.root(), "d.sh", body);
        rt().block_on(discover(&cfg(t.root(), d, None, timeout), &ws(t.root())))
    };
    assert!(run("echo '[]'", 5000).unwrap().is_empty());
    let e = run("echo 'not json'", 5000).unwrap_err();
    assert!(
        e.to_string().starts_with("Tool discovery command did not return a JSON array of tools. ("),
        "{e}"
    );
    assert!(matches!(run("echo '{\"name\": \"x\"}'", 5000), Err(DiscoveryError::NotArray { .. })));
    let e = run("echo oops >&2; exit 3", 5000).unwrap_err();
    assert_eq!(e.to_string(), "Tool discovery command failed with exit code 3: oops");
    let start = Instant::now();
    assert_eq!(run("sleep 30", 300).unwrap_err(), DiscoveryError::Timeout(300));
    assert!(start.elapsed() < Duration::from_secs(3));
    let missing = rt()
        .block_on(discover(&cfg(t.root(), "/no/such/discoverer".into(), None, 1000), &ws(t.root())))
        .unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("Tool discovery command could not be started (/no/such/discoverer)"),
        "{missing}"
    );
}

#[test]
fn calls_pass_arguments_on_stdin_and_report_failures_in_five_lines() {
    let t = TempTree::new();
    let d = script(t.root(), "d.sh", &format!("cat <<'EOF'\n{DECLS}\nEOF"));
    let call = script(
        t.root(),
        "call.sh",
        r#"input=$(cat); case "$1" in deploy) echo "deploying $input";; lint) echo "lint broke" >&2; echo partial; exit 4;; esac"#,
    );
    let r = rt();
    let tools = r.block_on(discover(&cfg(t.root(), d, Some(call), 5000), &ws(t.root()))).unwrap();
    let env = harness_env(&t);
    let run = |i: usize, args: serde_json::Value| {
        let inv = tools[i].build(args, &env).unwrap();
        r.block_on(inv.execute(ExecContext::new("c1", CancellationToken::new())))
    };
    let ok = run(0, json!({"env": "prod"}));
    assert!(ok.error.is_none());
    assert_eq!(
        ok.llm_content,
        toolbelt_core::Content::Text(
            "<untrusted_context>\ndeploying {\"env\":\"prod\"}\n\n</untrusted_context>".into()
        )
    );
    let bad = run(1, json!({}));
    let e = bad.error.unwrap();
    assert_eq!(e.kind, toolbelt_core::ErrorType::DiscoveredToolExecutionError);
    assert_eq!(
        e.message,
        "<untrusted_context>\nStdout: partial\n\nStderr: lint broke\n\nError: (none)\nExit Code: 4\nSignal: (none)\n</untrusted_context>"
    );
}

#[test]
fn a_cancelled_call_stops_its_process() {
    let t = TempTree::new();
    let d = script(t.root(), "d.sh", r#"echo '[{"name": "slow"}]'"#);
    let marker = t.root().join("finished");
    let call = script(t.root(), "call.sh", &format!("sleep 5; touch {}", marker.display()));
    let r = rt();
    let tools = r.block_on(discover(&cfg(t.root(), d, Some(call), 5000), &ws(t.root()))).unwrap();
    let env = harness_env(&t);
    let token = CancellationToken::new();
    let inv = tools[0].build(json!({}), &env).unwrap();
    let t2 = token.clone();
    let start = Instant::now();
    let res = r.block_on(async move {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            t2.cancel();
        });
        inv.execute(ExecContext::new("c1", token)).await
    });
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(res.error.unwrap().message.contains("cancelled or timed out"));
    std::thread::sleep(Duration::from_millis(5500 - start.elapsed().as_millis().min(5500) as u64));
    assert!(!marker.exists(), "the call's process was killed");
}

fn harness_env(t: &TempTree) -> toolbelt_core::ToolEnv {
    crate::harness::env_for(t, &[])
}

/// Issue 35 (fourth attack, N7): a discovery command declaring 500,000 tools (9.4 MB, under
/// the output limit) made as many tools, 607 MB on every call. The first 2,000 are taken and
/// the rest counted.
#[test]
fn only_the_first_two_thousand_discovered_tools_are_taken() {
    let t = TempTree::new();
    let d = script(
        t.root(),
        "d.sh",
        r#"python3 -c "import json; print(json.dumps([{'name': 't%d' % i} for i in range(5000)]))""#,
    );
    let r = rt();
    let (tools, left_out) = r
        .block_on(toolbelt_tools::discovered::discover_counted(
            &cfg(t.root(), d, None, 20_000),
            &ws(t.root()),
        ))
        .unwrap();
    assert_eq!((tools.len(), left_out), (2_000, 3_000));
    assert_eq!(tools[0].name(), "discovered_tool_t0");
}

/// Issue 47: a discovery command's output (up to 10 MiB) was parsed whole: 9 MiB of `0,` took
/// gigabytes. It is measured first and refused, naming the limit.
#[test]
fn a_discovery_output_of_tiny_values_is_refused_before_it_is_parsed() {
    let t = TempTree::new();
    let d = script(
        t.root(),
        "d.sh",
        "python3 -c 'import sys; sys.stdout.write(\"[\" + \"0,\" * 4500000 + \"0]\")'",
    );
    let e = rt().block_on(discover(&cfg(t.root(), d, None, 20_000), &ws(t.root()))).unwrap_err();
    assert!(matches!(e, DiscoveryError::NotArray { .. }), "{e}");
    assert!(e.to_string().contains("more than 250000 JSON values"), "{e}");
}
