//! The MCP client against real server processes: a Python fixture over stdio, and toolbelt's
//! own server over Streamable HTTP.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::testing::test_env;
use toolbelt_core::tool::ExecContext;
use toolbelt_core::{Content, ErrorType, Tool};
use toolbelt_mcp::client::{McpClients, ServerSpec, ServerState, Transport, connect_all, spec};

fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/server.py").display().to_string()
}

pub(crate) fn stdio(name: &str, extra: &[&str], timeout_ms: u64) -> ServerSpec {
    let mut args = vec![fixture()];
    args.extend(extra.iter().map(|s| s.to_string()));
    ServerSpec {
        name: name.into(),
        transport: Transport::Stdio {
            command: "python3".into(),
            args,
            env: Default::default(),
            inherit: std::env::vars().collect(),
            cwd: None,
        },
        timeout_ms,
        timeout_given: true,
        trust: false,
        include: Vec::new(),
        exclude: Vec::new(),
        oauth_dir: None,
        oauth: Default::default(),
    }
}

pub(crate) async fn clients(specs: Vec<ServerSpec>) -> McpClients {
    connect_all(specs.into_iter().map(Ok).collect(), &std::env::temp_dir(), Duration::from_secs(5))
        .await
}

fn tool<'a>(c: &'a McpClients, name: &str) -> &'a Arc<toolbelt_mcp::client::McpTool> {
    c.tools.iter().find(|t| t.name() == name).unwrap_or_else(|| panic!("no {name}"))
}

pub(crate) async fn call(
    c: &McpClients,
    name: &str,
    args: Value,
    ctx: ExecContext,
) -> toolbelt_core::ToolResult {
    let (_d, env) = test_env();
    tool(c, name).build(args, &env).unwrap().execute(ctx).await
}

pub(crate) fn ctx() -> ExecContext {
    ExecContext::new("c1", CancellationToken::new())
}

#[tokio::test]
async fn discovers_tools_and_calls_them() {
    let c = clients(vec![stdio("fx", &[], 5_000)]).await;
    let ServerState::Connected { tools, dropped } = &c.servers[0].1 else {
        panic!("{:?}", c.servers)
    };
    assert!(tools.contains(&"mcp_fx_echo".to_string()));
    assert_eq!(dropped.len(), 1, "only the unrepairable schema is dropped: {dropped:?}");
    assert_eq!(dropped[0].0, "bad");
    let t = tool(&c, "mcp_fx_echo");
    assert_eq!(t.server_name(), Some("fx"));
    assert_eq!(t.annotations().unwrap()["_serverName"], "fx");
    let decl = tool(&c, "mcp_fx_nullable").declaration(toolbelt_core::ModelFamily::Legacy);
    assert_eq!(decl.parameters["properties"]["n"], json!({"type": "integer", "nullable": true}));
    assert_eq!(decl.parameters["properties"]["p"]["properties"]["x"]["type"], "number");

    let r = call(&c, "mcp_fx_echo", json!({"text": "hello"}), ctx()).await;
    assert_eq!(
        r.llm_content,
        Content::Text("<untrusted_context>\nhello\n</untrusted_context>".into())
    );
    let r = call(&c, "mcp_fx_fail", json!({}), ctx()).await;
    assert_eq!(r.error.unwrap().kind, ErrorType::McpToolError);
    let r = call(&c, "mcp_fx_image", json!({}), ctx()).await;
    assert!(matches!(r.llm_content, Content::Parts(ref p) if p.len() == 2));
    c.shutdown().await;
}

#[tokio::test]
async fn every_page_of_a_500_tool_server_is_read() {
    let c = clients(vec![stdio("big", &["--tools", "500", "--page", "37"], 5_000)]).await;
    let ServerState::Connected { tools, .. } = &c.servers[0].1 else { panic!("{:?}", c.servers) };
    assert_eq!(tools.len(), 509, "9 named tools (one dropped) + 500 fillers");
    assert!(tools.contains(&"mcp_big_t499".to_string()));
    c.shutdown().await;
}

/// Issue 35: the 100,000-tools test timed only the naming of tools. A server offering 100,000
/// tools (a 10 MB list) gets its first 2,000 used and the reason for the rest said; a list
/// whose pages never end, or come back round, is cut with the reason too (rmcp's
/// `list_all_tools` followed the cursors for ever).
#[tokio::test]
async fn a_server_with_a_hundred_thousand_tools_or_endless_pages_is_cut_and_says_so() {
    let c = clients(vec![
        stdio("many", &["--tools", "100000"], 20_000),
        stdio("endless", &["--tools", "3", "--page", "2", "--endless"], 20_000),
        stdio("circle", &["--tools", "3", "--page", "4", "--circle"], 20_000),
    ])
    .await;
    let state = |name: &str| c.servers.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let ServerState::Connected { tools, dropped } = state("many") else {
        panic!("{:?}", c.servers)
    };
    // 2,000 listed, less the one whose schema cannot be repaired.
    assert_eq!(tools.len(), toolbelt_core::limits::MCP_TOOLS_PER_SERVER - 1);
    // The first ones in the server's order: the fillers t0, t1, ... up to where the 2,000 end.
    let filler = |n: &String| {
        n.strip_prefix("mcp_many_t").is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    };
    let fillers = tools.iter().filter(|n| filler(n)).count();
    assert!(fillers > 1900, "{fillers}");
    assert!(
        tools.contains(&format!("mcp_many_t{}", fillers - 1))
            && !tools.contains(&format!("mcp_many_t{fillers}")),
        "{:?}",
        &tools[tools.len() - 3..]
    );
    assert!(dropped.iter().any(|(_, why)| why.contains("more than 2000 tools")), "{dropped:?}");
    let ServerState::Connected { tools, dropped } = state("endless") else {
        panic!("{:?}", c.servers)
    };
    // The fixture's named tools (one dropped for its schema) and the three fillers.
    assert_eq!(tools.len(), 12, "every tool on the pages: {tools:?}");
    assert!(
        dropped.iter().any(|(_, why)| why.contains("did not end after 1000 pages")),
        "{dropped:?}"
    );
    let ServerState::Connected { tools, dropped } = state("circle") else {
        panic!("{:?}", c.servers)
    };
    assert_eq!(tools.len(), 12, "{tools:?}");
    assert!(dropped.iter().any(|(_, why)| why.contains("a cursor came back")), "{dropped:?}");
    c.shutdown().await;
}

/// Issue 35: what a server sends about its tools is bounded: a schema over 256 KiB leaves its
/// tool out with the reason, a description is cut at 16,384 characters with a notice.
#[tokio::test]
async fn huge_schemas_and_descriptions_are_bounded() {
    let c = clients(vec![stdio("big", &["--huge"], 20_000)]).await;
    let ServerState::Connected { tools, dropped } = &c.servers[0].1 else {
        panic!("{:?}", c.servers)
    };
    assert!(!tools.contains(&"mcp_big_bigschema".to_string()));
    assert!(
        dropped.iter().any(|(t, why)| t == "bigschema" && why.contains("over the limit of 262144")),
        "{dropped:?}"
    );
    let d = tool(&c, "mcp_big_bigdesc").declaration(toolbelt_core::ModelFamily::Legacy).description;
    assert!(d.starts_with(&"d".repeat(16_384)) && !d.contains(&"d".repeat(16_385)), "{}", d.len());
    assert!(d.contains("[description cut at 16384 characters; the server sent 83616 more]"));
    c.shutdown().await;
}

#[tokio::test]
async fn progress_streams_and_cancellation_reaches_the_server() {
    let marker = tempfile::NamedTempFile::new().unwrap();
    let m = marker.path().display().to_string();
    let c = clients(vec![stdio("fx", &["--marker", &m], 5_000)]).await;
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    let mut x = ctx();
    x.output = Some(Arc::new(move |s: &str| sink.lock().unwrap().push(s.to_string())));
    let r = call(&c, "mcp_fx_slow", json!({}), x).await;
    assert_eq!(
        r.llm_content,
        Content::Text("<untrusted_context>\nslow done\n</untrusted_context>".into())
    );
    assert_eq!(*seen.lock().unwrap(), ["step 1\n", "step 2\n", "step 3\n", "step 4\n", "step 5\n"]);

    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        t2.cancel();
    });
    let start = Instant::now();
    let r = call(&c, "mcp_fx_slow", json!({}), ExecContext::new("c2", token)).await;
    assert!(start.elapsed() < Duration::from_millis(450));
    // Stopped: the progress so far is the partial output the engine reports with the
    // cancellation or timeout (issue 19).
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(
        r.llm_content,
        Content::Text("<untrusted_context>\nstep 1\n</untrusted_context>".into())
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        std::fs::read_to_string(marker.path()).unwrap().contains("cancelled"),
        "the server was told"
    );
    c.shutdown().await;
}

#[tokio::test]
async fn hanging_crashing_and_dead_servers_are_reported_not_waited_for() {
    let c = clients(vec![stdio("fx", &[], 400)]).await;
    let start = Instant::now();
    let r = call(&c, "mcp_fx_hang", json!({}), ctx()).await;
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(r.error.unwrap().message.contains("timed out after 400 ms"));
    let start = Instant::now();
    let r = call(&c, "mcp_fx_crash", json!({}), ctx()).await;
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(r.error.unwrap().kind, ErrorType::McpToolError);
    c.shutdown().await;

    let dead = ServerSpec {
        transport: Transport::Stdio {
            command: "/no/such/server".into(),
            args: vec![],
            env: Default::default(),
            inherit: std::env::vars().collect(),
            cwd: None,
        },
        ..stdio("dead", &[], 1000)
    };
    let marker = format!("--marker-{}-{}", std::process::id(), start_marker());
    let slow =
        ServerSpec { timeout_given: false, ..stdio("slow", &["--hang-init", &marker], 1000) };
    // Issue 49 F9: a server's own `timeout` is its deadline for starting too.
    let patient = stdio("patient", &["--hang-init", &marker], 1500);
    let start = Instant::now();
    let good = stdio("good", &[], 1000);
    let c = connect_all(
        vec![Ok(dead), Ok(slow), Ok(patient), Ok(good)],
        &std::env::temp_dir(),
        Duration::from_millis(700),
    )
    .await;
    assert!(start.elapsed() < Duration::from_secs(3), "servers start in parallel");
    let state = |n: &str| c.servers.iter().find(|(s, _)| s == n).unwrap().1.clone();
    assert!(
        matches!(state("dead"), ServerState::Failed(ref w) if w.contains("cannot start")),
        "{:?}",
        state("dead")
    );
    assert!(
        matches!(state("slow"), ServerState::Failed(ref w) if w.contains("no answer within 700 ms")),
        "{:?}",
        state("slow")
    );
    assert!(
        matches!(state("patient"), ServerState::Failed(ref w) if w.contains("no answer within 1500 ms")),
        "{:?}",
        state("patient")
    );
    assert!(matches!(state("good"), ServerState::Connected { .. }));
    // Issue 20: the server that missed its deadline was left running (re-parented to PID 1).
    if cfg!(target_os = "linux") {
        assert!(processes_with(&marker).is_empty(), "the timed-out server still runs");
    }
    c.shutdown().await;
}

fn start_marker() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

/// Live processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_name().to_str()?.parse::<u32>().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let zombie = stat.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'));
            let text = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (!zombie && text.contains(marker)).then_some(text)
        })
        .collect()
}

#[tokio::test]
async fn settings_entries_become_specs() {
    let bad = spec(
        &toolbelt_core::settings::McpServerSettings {
            name: "x".into(),
            definition: json!({"type": "http"}),
        },
        &Default::default(),
    );
    assert!(bad.unwrap_err().starts_with("Invalid configuration: missing httpUrl"));
}

/// Starts a Python fixture that serves HTTP on a loopback port (it prints `PORT n` first);
/// returns the process and its base URL.
pub(crate) fn http_fixture(script: &str, args: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(script);
    let mut child = std::process::Command::new("python3")
        .arg(script)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().strip_prefix("PORT ").unwrap_or_else(|| panic!("{line:?}")).to_string();
    (child, format!("http://127.0.0.1:{port}"))
}

/// The fixture in `--sse` mode, with its base URL.
fn sse_fixture() -> (std::process::Child, String) {
    http_fixture("server.py", &["--sse"])
}

pub(crate) fn remote(name: &str, transport: Transport) -> ServerSpec {
    ServerSpec { transport, ..stdio(name, &[], 5_000) }
}

#[tokio::test]
async fn legacy_sse_servers_connect_list_and_call() {
    let (mut child, base) = sse_fixture();
    let url = format!("{base}/sse");
    let sse = Transport::Sse { url: url.clone(), headers: Default::default() };
    // `url` without a type: Streamable HTTP is tried first (the fixture refuses the POST), then SSE.
    let either = Transport::HttpOrSse { url, headers: Default::default() };
    let c = clients(vec![remote("old", sse)]).await;
    let ServerState::Connected { tools, .. } = &c.servers[0].1 else { panic!("{:?}", c.servers) };
    assert!(tools.contains(&"mcp_old_echo".to_string()), "{tools:?}");
    let r = call(&c, "mcp_old_echo", json!({"text": "over sse"}), ctx()).await;
    assert_eq!(
        r.llm_content,
        Content::Text("<untrusted_context>\nover sse\n</untrusted_context>".into())
    );
    c.shutdown().await;
    let c = clients(vec![remote("auto", either)]).await;
    assert!(matches!(c.servers[0].1, ServerState::Connected { .. }), "{:?}", c.servers);
    let r = call(&c, "mcp_auto_echo", json!({"text": "fallback"}), ctx()).await;
    assert!(format!("{:?}", r.llm_content).contains("fallback"));
    c.shutdown().await;
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn an_sse_url_that_is_not_an_event_stream_is_reported() {
    let (mut child, base) = sse_fixture();
    let c = clients(vec![remote(
        "wrong",
        Transport::Sse { url: format!("{base}/nothing"), headers: Default::default() },
    )])
    .await;
    let ServerState::Failed(why) = &c.servers[0].1 else { panic!("{:?}", c.servers) };
    assert!(why.contains("404"), "{why}");
    let _ = child.kill();
    let _ = child.wait();
}

/// The OAuth fixture, with its base URL.
fn oauth_fixture(expires_s: u32) -> (std::process::Child, String) {
    http_fixture("oauth_server.py", &["--expires", &expires_s.to_string()])
}

/// What the OAuth fixture saw: the authorization requests (client ID and scope) and the number
/// of dynamic registrations.
async fn oauth_stats(base: &str) -> (Vec<(String, String)>, u64) {
    toolbelt_core::tls::ready();
    let v: Value = reqwest::get(format!("{base}/stats")).await.unwrap().json().await.unwrap();
    let auths = v["authorizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (a["client_id"].as_str().unwrap().to_string(), a["scope"].as_str().unwrap().to_string())
        })
        .collect();
    (auths, v["registrations"].as_u64().unwrap())
}

/// Signs in to `url` as `toolbelt mcp auth` does, with the fixture approving at once.
async fn sign_in(
    url: &str,
    store: &toolbelt_mcp::client::oauth::FileCredentialStore,
    options: &toolbelt_mcp::client::oauth::OAuthOptions,
) -> Result<(), String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let login = toolbelt_mcp::client::oauth::login(url, store.clone(), options, None, move |u| {
        let _ = tx.send(u.to_string());
    });
    let browser = async move {
        if let Ok(u) = rx.await {
            browse(u).await;
        }
    };
    tokio::join!(login, browser).0
}

fn kill(mut child: std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn a_call_refused_for_want_of_scopes_names_them_and_a_new_sign_in_adds_them() {
    let (child, base) = http_fixture("oauth_server.py", &["--call-scopes", "mcp:basic mcp:write"]);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{base}/mcp");
    let server = ServerSpec {
        oauth_dir: Some(dir.path().to_path_buf()),
        ..remote("secure", Transport::Http { url: url.clone(), headers: Default::default() })
    };
    let store = server.oauth_store().unwrap();
    // The first sign-in asks for what the server's 401 names: mcp:basic.
    sign_in(&url, &store, &Default::default()).await.unwrap();
    let c = clients(vec![server.clone()]).await;
    assert!(matches!(c.servers[0].1, ServerState::Connected { .. }), "{:?}", c.servers);
    let r = call(&c, "mcp_secure_whoami", json!({}), ctx()).await;
    let error = r.error.expect("a 403 is an error");
    assert!(
        error.message.contains("needs more OAuth scopes (mcp:basic mcp:write)")
            && error.message.contains("`toolbelt mcp auth secure --scope 'mcp:basic mcp:write'`"),
        "{}",
        error.message
    );
    c.shutdown().await;

    // `toolbelt mcp auth secure --scope mcp:write`: the scopes granted before are kept.
    let options = toolbelt_mcp::client::oauth::OAuthOptions {
        scopes: vec!["mcp:write".into()],
        ..Default::default()
    };
    sign_in(&url, &store, &options).await.unwrap();
    let (auths, _) = oauth_stats(&base).await;
    let scopes: Vec<&str> = auths.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(scopes, ["mcp:basic", "mcp:write mcp:basic"]);
    let c = clients(vec![server]).await;
    let r = call(&c, "mcp_secure_whoami", json!({}), ctx()).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(format!("{:?}", r.llm_content).contains("at-2"), "{:?}", r.llm_content);
    c.shutdown().await;
    kill(child);
}

#[tokio::test]
async fn the_probe_signs_in_again_for_more_scopes_and_gives_up_after_three_refusals() {
    use toolbelt_mcp::client::probe::probe;
    let (child, base) = http_fixture("oauth_server.py", &["--call-scopes", "mcp:basic mcp:write"]);
    let probed = probe(&format!("{base}/mcp"), &Default::default()).await.unwrap();
    assert_eq!(probed.len(), 1);
    assert!(probed[0].ok, "{probed:?}");
    let (auths, _) = oauth_stats(&base).await;
    let scopes: Vec<&str> = auths.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(scopes, ["mcp:basic", "mcp:basic mcp:write"]);
    kill(child);

    let (child, base) = http_fixture("oauth_server.py", &["--never-enough"]);
    let e = probe(&format!("{base}/mcp"), &Default::default()).await.unwrap_err();
    assert!(e.contains("the server still refuses after 3 sign-ins"), "{e}");
    let (auths, _) = oauth_stats(&base).await;
    assert_eq!(auths.len(), 3, "{auths:?}");
    kill(child);
}

#[tokio::test]
async fn pre_registered_clients_and_client_metadata_documents_replace_registration() {
    use toolbelt_mcp::client::probe::{options, probe};
    let (child, base) = http_fixture("oauth_server.py", &["--preregistered", "pre-id:pre-secret"]);
    // The conformance suite's way of handing over the credentials.
    let context = r#"{"name": "auth/pre-registration", "client_id": "pre-id", "client_secret": "pre-secret"}"#;
    let with_context = options(None, None, None, Some(context));
    let probed = probe(&format!("{base}/mcp"), &with_context).await.unwrap();
    assert!(probed[0].ok, "{probed:?}");
    let (auths, registrations) = oauth_stats(&base).await;
    assert_eq!((auths[0].0.as_str(), registrations), ("pre-id", 0));
    // Wrong credentials: the token endpoint refuses, and the probe says so.
    let wrong = options(Some("pre-id".into()), Some("nope".into()), None, Some(context));
    let e = probe(&format!("{base}/mcp"), &wrong).await.unwrap_err();
    assert!(e.contains("OAuth sign-in failed"), "{e}");
    kill(child);

    let (child, base) = http_fixture("oauth_server.py", &["--cimd"]);
    let document = "https://toolbelt.example/oauth/client.json";
    let probed =
        probe(&format!("{base}/mcp"), &options(None, None, Some(document.into()), None)).await;
    assert!(probed.unwrap()[0].ok);
    let (auths, registrations) = oauth_stats(&base).await;
    assert_eq!((auths[0].0.as_str(), registrations), (document, 0));
    kill(child);
}

#[tokio::test]
async fn legacy_metadata_is_accepted_from_the_servers_own_origin_only() {
    use toolbelt_mcp::client::probe::probe;
    // 2025-03-26: no resource metadata; the root's metadata names <origin>/oauth as issuer.
    let (child, base) = http_fixture("oauth_server.py", &["--legacy"]);
    let probed = probe(&format!("{base}/mcp"), &Default::default()).await.unwrap();
    assert!(probed[0].ok, "{probed:?}");
    kill(child);
    // The same metadata naming an issuer elsewhere is refused.
    let (child, base) = http_fixture("oauth_server.py", &["--foreign-issuer"]);
    let e = probe(&format!("{base}/mcp"), &Default::default()).await.unwrap_err();
    assert!(
        e.contains("the authorization server's metadata names issuer http://evil.example"),
        "{e}"
    );
    let (auths, _) = oauth_stats(&base).await;
    assert!(auths.is_empty(), "{auths:?}");
    kill(child);
}

/// Plays the browser: follows the authorization URL's redirect to the local callback.
async fn browse(url: String) {
    toolbelt_core::tls::ready();
    let r = reqwest::get(&url).await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
}

#[tokio::test]
async fn oauth_sign_in_saves_tokens_that_later_connections_use_and_refresh() {
    let (mut child, base) = oauth_fixture(31);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{base}/mcp");
    let server = ServerSpec {
        oauth_dir: Some(dir.path().to_path_buf()),
        ..remote("secure", Transport::Http { url: url.clone(), headers: Default::default() })
    };
    // Before signing in: the 401 is reported with what to do.
    let c = clients(vec![server.clone()]).await;
    let ServerState::Failed(why) = &c.servers[0].1 else { panic!("{:?}", c.servers) };
    assert!(why.contains("toolbelt mcp auth secure"), "{why}");

    let store = server.oauth_store().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let options = toolbelt_mcp::client::oauth::OAuthOptions::default();
    let login = toolbelt_mcp::client::oauth::login(&url, store.clone(), &options, None, move |u| {
        let _ = tx.send(u.to_string());
    });
    let browser = async move { browse(rx.await.unwrap()).await };
    let (r, ()) = tokio::join!(login, browser);
    r.unwrap();
    assert!(store.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let c = clients(vec![server.clone()]).await;
    let r = call(&c, "mcp_secure_whoami", json!({}), ctx()).await;
    assert!(format!("{:?}", r.llm_content).contains("at-1"), "{:?}", r.llm_content);
    c.shutdown().await;

    // The access token lives 31 s and the SDK refreshes 30 s ahead of expiry: 2 s later the
    // next connection refreshes it and saves the new one.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let c = clients(vec![server.clone()]).await;
    assert!(matches!(c.servers[0].1, ServerState::Connected { .. }), "{:?}", c.servers);
    let r = call(&c, "mcp_secure_whoami", json!({}), ctx()).await;
    assert!(format!("{:?}", r.llm_content).contains("at-2"), "{:?}", r.llm_content);
    c.shutdown().await;
    let saved = std::fs::read_to_string(store.path()).unwrap();
    assert!(saved.contains("at-2") && !saved.contains("\"at-1\""), "{saved}");
    let _ = child.kill();
    let _ = child.wait();
}

/// Issue 35 (second attack): servers that ignore SIGTERM and stay after their input ends were
/// stopped one after the other, each with its whole grace: thirty kept `toolbelt call` from
/// exiting for two minutes. Now they stop together: five take about one grace, not five.
#[tokio::test]
async fn lingering_servers_are_stopped_together() {
    let specs = (0..5).map(|i| stdio(&format!("l{i}"), &["--linger"], 5_000)).collect();
    let c = clients(specs).await;
    assert!(c.servers.iter().all(|(_, s)| matches!(s, ServerState::Connected { .. })));
    let started = Instant::now();
    c.shutdown().await;
    let took = started.elapsed();
    // One server's grace is about 4 s (2 s for the transport, 2 s after SIGTERM).
    assert!(took < Duration::from_secs(10), "five lingering servers took {took:?} to stop");
}
