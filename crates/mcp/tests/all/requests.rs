//! Issue 20, made to mean its name in issue 35 (it used to accept a request passed on to the
//! server without checking that an answer came back): any request, of a known method or not,
//! with any params, sent to a running server over the line transport gets exactly one answer,
//! carrying the request's own id. One server takes every case, so a request that leaves it
//! broken fails the cases after it too.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use toolbelt_core::policy::{ApprovalMode, default_rules};
use toolbelt_mcp::server::lines::{KNOWN_METHODS, LineTransport};
use toolbelt_mcp::server::{self, ToolbeltServer};

struct Conn {
    to_server: DuplexStream,
    answers: BufReader<DuplexStream>,
    _dir: toolbelt_core::testing::TempTree,
}

fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

/// The next line from the server that answers `id`; anything else it sends (a
/// notification, a question) is passed over. `None` when nothing answers within 10 s.
async fn answer_to(c: &mut Conn, id: &Value) -> Option<Value> {
    loop {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(10), c.answers.read_line(&mut line));
        match read.await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return None,
        }
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if v.get("method").is_none() && v["id"] == *id {
            return Some(v);
        }
    }
}

fn conn() -> &'static Mutex<Conn> {
    static CONN: OnceLock<Mutex<Conn>> = OnceLock::new();
    CONN.get_or_init(|| {
        let (dir, parts) = crate::server::parts(default_rules().rules, ApprovalMode::Default);
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, answers) = tokio::io::duplex(1 << 16);
        rt().spawn(async move {
            let t = LineTransport::new(server_in, server_out, 1 << 20);
            let server = ToolbeltServer::new(server::shared(parts));
            if let Ok(s) = rmcp::ServiceExt::serve(server, t).await {
                let _ = s.waiting().await;
            }
        });
        let mut c = Conn { to_server, answers: BufReader::new(answers), _dir: dir };
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let got = rt().block_on(async {
            c.to_server.write_all(format!("{init}\n{done}\n").as_bytes()).await.unwrap();
            answer_to(&mut c, &json!("init")).await
        });
        assert!(got.is_some_and(|a| a.get("result").is_some()), "not initialised");
        Mutex::new(c)
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![prop::sample::select(KNOWN_METHODS).prop_map(String::from), "[a-z/]{0,12}",]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: toolbelt_core::testing::proptest_cases().min(300),
        max_shrink_iters: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_request_is_answered_with_its_id(
        id in prop_oneof![any::<i64>().prop_map(Value::from), "[a-z0-9-]{1,8}".prop_map(Value::from)],
        method in method(),
        params in prop::option::of(json_value()),
    ) {
        let mut msg = json!({"jsonrpc": "2.0", "id": id.clone(), "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        let mut c = conn().lock().unwrap_or_else(|e| e.into_inner());
        let got = rt().block_on(async {
            c.to_server.write_all(format!("{msg}\n").as_bytes()).await.unwrap();
            answer_to(&mut c, &id).await
        });
        let answer = got.unwrap_or_else(|| panic!("no answer to {msg}"));
        prop_assert!(answer.get("result").is_some() != answer.get("error").is_some(), "{}", answer);
    }
}
