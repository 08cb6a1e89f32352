//! A scripted MCP client over stdio for the tests: `toolbelt mcp` started in a folder, with or
//! without MCP roots and elicitation; questions the server puts to the person are counted, and
//! answered from `answers` while it lasts, declined after.

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Value, json};
use toolbelt_test_support::TempTree;

/// A `toolbelt mcp` over stdio with the given arguments, started in `cwd`, initialized as a
/// client that offers roots when `roots` is given (they are listed when the server asks).
pub struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: std::io::BufReader<std::process::ChildStdout>,
    next: u64,
    pub asked: usize,
    /// The person's next answers to questions (`"allow once"`, `"allow always (this
    /// session)"`), in order; when none is left, questions are declined.
    pub answers: std::collections::VecDeque<&'static str>,
}

impl Mcp {
    pub fn start(
        tree: &TempTree,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        roots: Option<&[&Path]>,
    ) -> Mcp {
        Self::start_with(tree, cwd, args, env, roots, true)
    }

    /// [`Mcp::start`], the client declaring elicitation (a person it can ask) or not.
    pub fn start_with(
        tree: &TempTree,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        roots: Option<&[&Path]>,
        elicitation: bool,
    ) -> Mcp {
        use std::process::Stdio;
        let mut argv = vec!["mcp"];
        argv.extend_from_slice(args);
        let mut c = super::command(tree, &argv);
        c.current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut m = Mcp { child, stdin, out, next: 1, asked: 0, answers: Default::default() };
        let mut caps = if elicitation { json!({"elicitation": {}}) } else { json!({}) };
        if roots.is_some() {
            caps["roots"] = json!({"listChanged": true});
        }
        m.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": caps,
            "clientInfo": {"name": "t", "version": "1"}}}));
        m.line();
        m.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        if let Some(folders) = roots {
            let ask = m.line();
            assert_eq!(ask["method"], "roots/list", "{ask}");
            let roots: Vec<Value> = folders
                .iter()
                .map(|f| json!({"uri": format!("file://{}", f.display()), "name": "p"}))
                .collect();
            m.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": roots}}));
        }
        m
    }

    fn send(&mut self, v: &Value) {
        writeln!(self.stdin, "{v}").unwrap();
    }

    fn line(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    /// Calls `tool` and returns the text of its answer and whether it is an error. A question
    /// the server puts to the person (elicitation) is counted in `self.asked` and answered
    /// with the next of `self.answers`, or declined.
    pub fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
        loop {
            let v = self.line();
            if v["method"] == "elicitation/create" {
                self.asked += 1;
                let result = match self.answers.pop_front() {
                    Some(a) => json!({"action": "accept", "content": {"decision": a}}),
                    None => json!({"action": "decline"}),
                };
                self.send(&json!({"jsonrpc": "2.0", "id": v["id"], "result": result}));
                continue;
            }
            if v["id"] == json!(id) {
                let r = &v["result"];
                let text = r["content"][0]["text"].as_str().unwrap_or_default().to_string();
                return (text, r["isError"] == json!(true));
            }
        }
    }

    /// Tells the server its roots changed and answers its `roots/list` with `folders`.
    pub fn list_changed(&mut self, folders: &[&Path]) {
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
        let ask = self.line();
        assert_eq!(ask["method"], "roots/list", "{ask}");
        let roots: Vec<Value> = folders
            .iter()
            .map(|f| json!({"uri": format!("file://{}", f.display()), "name": "p"}))
            .collect();
        self.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": roots}}));
    }

    pub fn shell(&mut self, command: &str) -> String {
        self.call("run_shell_command", json!({ "command": command })).0
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
