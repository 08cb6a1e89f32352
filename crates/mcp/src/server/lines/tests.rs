//! The line transport's tests: how lines are read and judged.

use super::*;

#[test]
fn the_leading_id_is_the_top_level_one() {
    let id = |s: &str| leading_id(s.as_bytes());
    assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"method":"x""#), Some(json!(7)));
    assert_eq!(id(r#"{"params":{"id":1},"id":"a\"b","#), Some(json!("a\"b")));
    assert_eq!(id(r#"{"method":"x","params":{"text":"\"id\":5"#), None);
    assert_eq!(id(r#"{"x":"id","id" : -3}"#), Some(json!(-3)));
    assert_eq!(id(r#"{"id":1.5}"#), None);
    assert_eq!(id(r#"{"id":{"a":1}}"#), None);
    assert_eq!(id("\u{e9}\"id\":1"), None);
}

/// rmcp's service loop selects over `receive` and its other work (answers going out), so a
/// read waiting for the rest of a line is dropped whenever an answer is sent first. The
/// bytes it had taken from the buffer went with it: with requests pipelined, every line
/// across a 64 KiB boundary of the read buffer was lost and never answered (66 of 50,000
/// read_file calls).
#[tokio::test]
async fn a_read_dropped_in_the_middle_of_a_line_loses_none_of_it() {
    use tokio::io::AsyncWriteExt as _;
    let (mut client, server) = tokio::io::duplex(1024);
    let mut t = LineTransport::new(server, tokio::io::sink(), 64);
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    for (i, part) in line.chunks(7).enumerate() {
        client.write_all(part).await.unwrap();
        let wait = std::time::Duration::from_millis(if i % 2 == 0 { 0 } else { 20 });
        assert!(tokio::time::timeout(wait, t.next_line()).await.is_err());
    }
    client.write_all(b"\n").await.unwrap();
    match t.next_line().await {
        Ok(Some(Line::Whole(got))) => {
            assert_eq!(got, line, "{}", String::from_utf8_lossy(&got))
        }
        Ok(Some(Line::TooLong { total, .. })) => panic!("too long: {total}"),
        other => panic!("{:?}", other.map(|l| l.is_some())),
    }
    // The same with a line over the limit: its length and id survive the drops too.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"x":"{}"}}}}"#,
        "y".repeat(100)
    );
    for part in long.as_bytes().chunks(9) {
        client.write_all(part).await.unwrap();
        assert!(tokio::time::timeout(std::time::Duration::ZERO, t.next_line()).await.is_err());
    }
    client.write_all(b"\n").await.unwrap();
    match t.next_line().await {
        Ok(Some(Line::TooLong { prefix, total })) => {
            assert_eq!(total, long.len());
            assert_eq!(leading_id(&prefix), Some(json!(7)));
        }
        other => panic!("{:?}", other.map(|l| l.is_some())),
    }
}

#[test]
fn blank_lines_and_unreadable_responses_are_not_answered() {
    assert!(matches!(judge(b"   \r"), Verdict::Ignore));
    assert!(!matches!(judge(br#"{"jsonrpc":"2.0","id":1,"result":7}"#), Verdict::Answer(_)));
    assert!(!matches!(judge(br#"{"jsonrpc":"2.0","id":1,"error":5}"#), Verdict::Answer(_)));
    assert!(matches!(
        judge(br#"{"jsonrpc":"2.0","method":"x/y"}"#),
        Verdict::Message(_) | Verdict::Ignore
    ));
    assert!(matches!(judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Verdict::Message(_)));
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::{Verdict, judge, leading_id};

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
        prop_oneof![
            prop::sample::select(super::super::KNOWN_METHODS).prop_map(String::from),
            "[a-z/]{0,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: toolbelt_core::testing::proptest_cases(),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Any bytes: a verdict, never a panic; the id finder never panics either.
        #[test]
        fn any_line_gets_a_verdict(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = judge(&bytes);
            let _ = leading_id(&bytes);
        }

        /// Issue 20: every request gets exactly one answer: from the server (a message it
        /// reads) or from the transport, with the request's own id.
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
            let line = serde_json::to_vec(&msg).unwrap();
            match judge(&line) {
                Verdict::Message(_) => {}
                Verdict::Answer(a) => prop_assert_eq!(&a["id"], &id, "{}", a),
                Verdict::Ignore => prop_assert!(false, "request ignored: {}", msg),
            }
        }
    }
}

mod in_flight {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use rmcp::RoleServer;
    use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
    use rmcp::transport::Transport as _;
    use serde_json::json;
    use tokio::io::AsyncWriteExt as _;

    use super::super::LineTransport;

    fn ping(id: usize) -> Vec<u8> {
        format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).into_bytes()
    }

    fn answer(id: usize) -> TxJsonRpcMessage<RoleServer> {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap()
    }

    fn id_of(m: Option<RxJsonRpcMessage<RoleServer>>) -> serde_json::Value {
        serde_json::to_value(m.expect("a message")).unwrap()["id"].clone()
    }

    /// Found while profiling issue 22: a client that wrote 50,000 read_file calls without
    /// reading the answers grew the server to 500 MB (a task for every request read). Now at
    /// most so many requests run; later ones wait in order, and once enough wait, reading
    /// stops and the client's pipe holds it back. Notifications and responses still get
    /// through while requests wait (a call waiting for the client's answer must not block it).
    #[tokio::test]
    async fn requests_past_the_limit_wait_in_order_and_reading_stops_when_enough_wait() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut t = LineTransport::new(server, tokio::io::sink(), 1 << 20).with_limits(2, 3);
        let written = Arc::new(AtomicUsize::new(0));
        let counter = written.clone();
        let writer = tokio::spawn(async move {
            for id in 1..=40 {
                client.write_all(&ping(id)).await.unwrap();
                counter.store(id, Ordering::SeqCst);
            }
            client
        });
        assert_eq!(id_of(t.receive().await), json!(1));
        assert_eq!(id_of(t.receive().await), json!(2));
        // Two run: the third waits.
        assert!(tokio::time::timeout(Duration::from_millis(100), t.receive()).await.is_err());
        let read = written.load(Ordering::SeqCst);
        assert!(read < 12, "{read} requests taken in with 2 running and 3 waiting");
        t.send(answer(1)).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(3));
        t.send(answer(2)).await.unwrap();
        t.send(answer(3)).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(4));
        assert_eq!(id_of(t.receive().await), json!(5));
        writer.abort();
    }

    /// A waiting request the client cancels is dropped (never answered, as a cancelled
    /// request is not); the cancellation itself reaches the server at once.
    #[tokio::test]
    async fn a_waiting_request_the_client_cancels_never_runs() {
        let (mut client, server) = tokio::io::duplex(4096);
        let mut t = LineTransport::new(server, tokio::io::sink(), 1 << 20).with_limits(1, 8);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        client.write_all(format!("{init}\n").as_bytes()).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(0));
        t.send(answer(0)).await.unwrap();
        client.write_all(&ping(1)).await.unwrap();
        client.write_all(&ping(2)).await.unwrap();
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
        client.write_all(format!("{cancel}\n").as_bytes()).await.unwrap();
        client.write_all(&ping(3)).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(1));
        let passed = serde_json::to_value(t.receive().await.unwrap()).unwrap();
        assert_eq!(passed["method"], "notifications/cancelled", "{passed}");
        t.send(answer(1)).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(3));
    }
}
