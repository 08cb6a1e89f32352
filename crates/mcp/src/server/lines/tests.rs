//! The line transport's tests: how lines are read and judged.

use super::*;
use serde_json::json;

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

/// Issue 35, second attack: a request with an argument nested 123 levels deep (300 bytes)
/// was answered only with a null id.
#[test]
fn a_request_nested_too_deep_is_answered_with_its_id() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"grep_search","arguments":{{"pattern":"a","x":{}{}}}}}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    match judge(deep.as_bytes()) {
        Verdict::Answer(a) => {
            assert_eq!(a["id"], json!(1), "{a}");
            assert_eq!(a["error"]["code"], -32600);
        }
        other => panic!("{other:?}"),
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

    use super::super::{judge, leading_id};

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
    }
}

mod in_flight {
    use std::time::Duration;

    use rmcp::RoleServer;
    use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
    use rmcp::transport::Transport as _;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};

    use super::super::{LineTransport, flow::Limits};

    fn ping(id: usize) -> Vec<u8> {
        format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).into_bytes()
    }

    fn answer(id: usize) -> TxJsonRpcMessage<RoleServer> {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap()
    }

    fn id_of(m: Option<RxJsonRpcMessage<RoleServer>>) -> Value {
        serde_json::to_value(m.expect("a message")).unwrap()["id"].clone()
    }

    fn limits(running: usize, waiting_bytes: usize) -> Limits {
        Limits { running, running_bytes: 1 << 20, waiting_bytes, unwritten: 64 }
    }

    type Transport = LineTransport<DuplexStream, DuplexStream>;

    /// A transport with pipes both ways: (transport, client's input end, client's output end).
    fn pipes(out_buffer: usize, l: Limits) -> (Transport, DuplexStream, BufReader<DuplexStream>) {
        let (client, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, answers) = tokio::io::duplex(out_buffer);
        let t = LineTransport::new(server_in, server_out, 1 << 20).with_limits(l);
        (t, client, BufReader::new(answers))
    }

    async fn next_answer(answers: &mut BufReader<DuplexStream>) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(5), answers.read_line(&mut line));
        assert!(read.await.is_ok(), "no whole answer: {line:?}");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    async fn initialized(t: &mut Transport, client: &mut DuplexStream) {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        client.write_all(format!("{init}\n").as_bytes()).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(0));
        t.send(answer(0)).await.unwrap();
    }

    /// Found while profiling issue 22: a client that wrote 50,000 read_file calls without
    /// reading the answers grew the server to 500 MB (a task for every request read). Now so
    /// many requests run; later ones wait in order, and past the waiting limit a request is
    /// answered at once that the server is busy.
    #[tokio::test]
    async fn requests_past_the_limit_wait_in_order_and_past_the_waiting_limit_are_refused() {
        let (mut t, mut client, mut answers) = pipes(1 << 16, limits(2, 3 * ping(9).len()));
        for id in 1..=8 {
            client.write_all(&ping(id)).await.unwrap();
        }
        assert_eq!(id_of(t.receive().await), json!(1));
        assert_eq!(id_of(t.receive().await), json!(2));
        // Two run, three wait, three are refused; nothing more reaches the server.
        assert!(tokio::time::timeout(Duration::from_millis(100), t.receive()).await.is_err());
        for id in 6..=8 {
            let a = next_answer(&mut answers).await;
            assert_eq!(
                (a["id"].clone(), a["error"]["code"].clone()),
                (json!(id), json!(-32000)),
                "{a}"
            );
        }
        t.send(answer(1)).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(3));
        t.send(answer(2)).await.unwrap();
        t.send(answer(3)).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(4));
        assert_eq!(id_of(t.receive().await), json!(5));
    }

    /// A waiting request the client cancels is dropped (never answered, as a cancelled
    /// request is not); the cancellation itself reaches the server at once.
    #[tokio::test]
    async fn a_waiting_request_the_client_cancels_never_runs() {
        let (mut t, mut client, _answers) = pipes(1 << 16, limits(1, 1 << 20));
        initialized(&mut t, &mut client).await;
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

    /// Found by the review of the limit: with every place taken by calls that wait for the
    /// client's answer to a question (a confirmation), and requests waiting, the server stopped
    /// reading, so the answer they waited for was never read. Reading never stops for waiting
    /// requests: responses and notifications behind them get through.
    #[tokio::test]
    async fn the_clients_answers_get_through_when_every_place_is_taken() {
        let (mut t, mut client, mut answers) = pipes(1 << 16, limits(1, ping(9).len()));
        initialized(&mut t, &mut client).await;
        client.write_all(&ping(1)).await.unwrap();
        client.write_all(&ping(2)).await.unwrap();
        client.write_all(&ping(3)).await.unwrap();
        let reply =
            json!({"jsonrpc": "2.0", "id": "from-server-7", "result": {"action": "decline"}});
        client.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(1));
        assert_eq!(id_of(t.receive().await), json!("from-server-7"));
        assert_eq!(next_answer(&mut answers).await["id"], json!(0));
        assert_eq!(next_answer(&mut answers).await["error"]["code"], json!(-32000));
    }

    /// Found by the review of the limit: the transport's own answers (to an unknown method, a
    /// parse error, a reused id) were written inside the read that rmcp drops when other work
    /// is ready, so under pipelining some were lost or cut off. They are written by tasks of
    /// their own now.
    #[tokio::test]
    async fn the_transports_own_answers_survive_a_dropped_read() {
        let (mut t, mut client, mut answers) = pipes(8, limits(4, 1 << 20));
        client.write_all(br#"{"jsonrpc":"2.0","id":"u1","method":"no/such"}"#).await.unwrap();
        client.write_all(b"\n").await.unwrap();
        for _ in 0..5 {
            assert!(tokio::time::timeout(Duration::from_millis(20), t.receive()).await.is_err());
        }
        let a = next_answer(&mut answers).await;
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!("u1"), json!(-32601)),
            "{a}"
        );
    }

    /// Found by the review of the limit: a request reusing a pending id with an unknown method
    /// got a second answer with that id (-32601) instead of the refusal of the id.
    #[tokio::test]
    async fn an_unknown_method_with_a_pending_id_is_refused_as_a_reused_id() {
        let (mut t, mut client, mut answers) = pipes(1 << 16, limits(4, 1 << 20));
        client.write_all(&ping(1)).await.unwrap();
        assert_eq!(id_of(t.receive().await), json!(1));
        client.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#).await.unwrap();
        client.write_all(b"\n").await.unwrap();
        assert!(tokio::time::timeout(Duration::from_millis(50), t.receive()).await.is_err());
        let a = next_answer(&mut answers).await;
        assert_eq!(a["error"]["code"], json!(-32600), "{a}");
    }
}

/// Issue 35 (fourth attack, L1): a batch of two pings, a request holding a byte that is not
/// UTF-8 and one holding a lone surrogate escape were answered with a null id: the client
/// waited for ids 1, 2, 5 and 6 for ever.
#[test]
fn batches_and_unreadable_strings_are_answered_with_their_ids() {
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"ping"}]"#;
    match judge(batch) {
        Verdict::Answer(Value::Array(a)) => {
            let ids: Vec<&Value> = a.iter().map(|m| &m["id"]).collect();
            assert_eq!(ids, [&json!(1), &json!("b")]);
            assert!(
                a[0]["error"]["message"].as_str().unwrap().contains("batches are not supported")
            );
        }
        other => panic!("{other:?}"),
    }
    let mut bad = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"a"#.to_vec();
    bad.extend(b"\xff\"}}}");
    assert!(matches!(judge(&bad), Verdict::Message(_)), "{:?}", judge(&bad));
    let surrogate = br#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"\udcff"}}"#;
    match judge(surrogate) {
        Verdict::Answer(a) => assert_eq!(a["id"], json!(6), "{a}"),
        Verdict::Message(_) => {}
        other => panic!("{other:?}"),
    }
}
