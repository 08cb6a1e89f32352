//! Tools with predictable behaviour, for the engine's tests and benchmarks.

use crate::sync::LockExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::kind::Kind;
use crate::result::{ErrorType, ToolResult};
use crate::schema::rename_params;
use crate::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

/// What a [`FakeTool`] does when run.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// Returns `text` after `delay` (honouring cancellation while it waits).
    Echo {
        /// How long to wait first.
        delay: Duration,
    },
    /// Sleeps forever and ignores its cancellation token.
    Stubborn,
    /// Runs a busy loop on a thread that stops only when the token fires.
    Cooperative,
    /// Returns an error result.
    Fail,
    /// Panics.
    Panic,
    /// Returns `n` characters of output.
    Big {
        /// How many characters.
        n: usize,
    },
    /// Returns `n` text parts of "part" and an image part after each hundred.
    ManyParts {
        /// How many text parts.
        n: usize,
    },
    /// Blocking work that ignores its token (as an edit computing on the blocking pool): waits
    /// `before`, commits through the call's gate (setting `Journal::committed`), waits `after`.
    Commits {
        /// Before the commit.
        before: Duration,
        /// After it.
        after: Duration,
    },
    /// Fails with its own timeout after `after` (cancellation honoured), as an MCP tool whose
    /// server's `timeout` is also the engine's deadline.
    OwnDeadline {
        /// When the tool gives up by itself.
        after: Duration,
    },
    /// A costly call whose blocking work (`work` long) ignores its token, as a search stuck in
    /// one huge line: counted in `Journal::blocking_now` / `blocking_most`.
    CostlyBlocking {
        /// How long the work runs.
        work: Duration,
    },
}

/// Records of what fake tools did, for assertions.
#[derive(Debug, Default)]
pub struct Journal {
    /// (call text, started, finished)
    pub runs: Mutex<Vec<(String, Instant, Instant)>>,
    /// Set when a cooperative worker thread saw its token and stopped.
    pub worker_stopped: AtomicBool,
    /// How many calls started to run.
    pub executions: AtomicUsize,
    /// Set when a `Commits` call's commit went through its gate.
    pub committed: AtomicBool,
    /// `CostlyBlocking` works running now, and the most that ran at once.
    pub blocking_now: AtomicUsize,
    /// See `blocking_now`.
    pub blocking_most: AtomicUsize,
}

/// A configurable tool: parameter `text` (string, required; older name `message`).
pub struct FakeTool {
    name: String,
    kind: Kind,
    behaviour: Behaviour,
    journal: Arc<Journal>,
    truncates: bool,
}

impl FakeTool {
    /// A tool named `name` of `kind` that behaves as `behaviour` and writes to `journal`.
    pub fn new(name: &str, kind: Kind, behaviour: Behaviour, journal: Arc<Journal>) -> Self {
        Self { name: name.into(), kind, behaviour, journal, truncates: false }
    }

    /// Lets the engine truncate its output.
    pub fn truncating(mut self) -> Self {
        self.truncates = true;
        self
    }
}

/// A read-only echo tool with no delay.
pub struct EchoTool(FakeTool);

impl EchoTool {
    /// An echo tool called `name`.
    pub fn named(name: &str) -> Self {
        Self(FakeTool::new(
            name,
            Kind::Read,
            Behaviour::Echo { delay: Duration::ZERO },
            Arc::default(),
        ))
    }
}

impl Tool for EchoTool {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn display_name(&self) -> &str {
        self.0.display_name()
    }
    fn kind(&self) -> Kind {
        self.0.kind()
    }
    fn declaration(&self, family: ModelFamily) -> Declaration {
        self.0.declaration(family)
    }
    fn normalize_args(&self, args: &mut Value) {
        self.0.normalize_args(args);
    }
    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        self.0.build(params, env)
    }
}

impl Tool for FakeTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn display_name(&self) -> &str {
        &self.name
    }
    fn kind(&self) -> Kind {
        self.kind
    }
    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: self.name.clone(),
            description: "A test tool.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            }),
        }
    }
    fn normalize_args(&self, args: &mut Value) {
        rename_params(args, &[("message", "text")]);
    }
    fn truncates_output(&self) -> bool {
        self.truncates
    }
    fn build(&self, params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let text = params.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
        if text == "invalid" {
            return Err("The 'text' parameter must not be \"invalid\".".into());
        }
        Ok(Box::new(FakeInvocation {
            text,
            behaviour: self.behaviour.clone(),
            journal: self.journal.clone(),
        }))
    }
}

struct FakeInvocation {
    text: String,
    behaviour: Behaviour,
    journal: Arc<Journal>,
}

#[async_trait]
impl Invocation for FakeInvocation {
    fn description(&self) -> String {
        format!("fake: {}", self.text)
    }

    fn costly_turns(&self) -> u32 {
        u32::from(matches!(self.behaviour, Behaviour::CostlyBlocking { .. }))
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let started = Instant::now();
        self.journal.executions.fetch_add(1, Ordering::SeqCst);
        let result = match &self.behaviour {
            Behaviour::Echo { delay } => {
                if !delay.is_zero() {
                    tokio::select! {
                        () = tokio::time::sleep(*delay) => {}
                        () = ctx.cancel.cancelled() => {}
                    }
                }
                ctx.emit(&self.text);
                ToolResult::text(self.text.clone(), self.text.clone())
            }
            Behaviour::Stubborn => loop {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            },
            Behaviour::Cooperative => {
                let token = ctx.cancel.clone();
                let journal = self.journal.clone();
                let worker = std::thread::spawn(move || {
                    while !token.is_cancelled() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    journal.worker_stopped.store(true, Ordering::SeqCst);
                });
                let _ = tokio::task::spawn_blocking(move || worker.join()).await;
                ToolResult::text("partial work", "")
            }
            Behaviour::OwnDeadline { after } => {
                tokio::select! {
                    () = tokio::time::sleep(*after) => ToolResult::simple_error(
                        ErrorType::McpToolError,
                        format!("{} timed out by itself", self.text),
                    ),
                    () = ctx.cancel.cancelled() => ToolResult::text(String::new(), String::new()),
                }
            }
            Behaviour::Fail => ToolResult::simple_error(
                ErrorType::ExecutionFailed,
                format!("failed: {}", self.text),
            ),
            Behaviour::Panic => panic!("fake tool panicked on {}", self.text),
            Behaviour::Big { n } => ToolResult::text("x".repeat(*n), ""),
            Behaviour::ManyParts { n } => {
                use crate::result::{Content, InlineData, Part};
                let mut parts = Vec::new();
                for i in 0..*n {
                    parts.push(Part::Text { text: "part".into() });
                    if i % 100 == 0 {
                        let inline_data =
                            InlineData { mime_type: "image/png".into(), data: "AAAA".into() };
                        parts.push(Part::InlineData { inline_data });
                    }
                }
                let mut r = ToolResult::text(String::new(), "");
                r.llm_content = Content::Parts(parts);
                r
            }
            Behaviour::Commits { before, after } => {
                let (before, after) = (*before, *after);
                let gate = ctx.commit.clone();
                let journal = self.journal.clone();
                let done = tokio::task::spawn_blocking(move || {
                    std::thread::sleep(before);
                    let r = gate.commit(|| {
                        journal.committed.store(true, Ordering::SeqCst);
                        Ok(())
                    });
                    std::thread::sleep(after);
                    r
                })
                .await;
                match done {
                    Ok(Ok(())) => ToolResult::text("committed", "committed"),
                    _ => ToolResult::simple_error(ErrorType::Cancelled, "not committed"),
                }
            }
            Behaviour::CostlyBlocking { work } => {
                let (work, journal) = (*work, self.journal.clone());
                let done = ctx.spawn_blocking(move || {
                    let now = journal.blocking_now.fetch_add(1, Ordering::SeqCst) + 1;
                    journal.blocking_most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(work);
                    journal.blocking_now.fetch_sub(1, Ordering::SeqCst);
                });
                let _ = done.await;
                ToolResult::text("searched", "searched")
            }
        };
        self.journal.runs.locked().push((self.text.clone(), started, Instant::now()));
        result
    }
}
