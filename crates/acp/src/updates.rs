//! What happens in a session, as `session/update` notifications: the model's text as it
//! streams; each tool call announced (title, kind, raw input) before anything is asked about
//! it, then its locations once it is built, `in_progress` when it runs with its live output,
//! and one final status (`completed` or `failed`, a refused or cancelled call included) with
//! its result: a diff for an edit, text otherwise. Mode changes are the protocol's mode
//! updates; `write_todos` is the session's plan; `update_topic` its title.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Diff, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionId, SessionInfoUpdate, SessionNotification, SessionUpdate, TextContent,
    ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use toolbelt_core::policy::ApprovalMode;
use toolbelt_core::response::ResponseParts;
use toolbelt_core::scheduler::{CallState, Event};
use toolbelt_core::sync::LockExt as _;
use toolbelt_core::{CompletedCall, Kind};

/// The connection to the editor, as the agent side holds it.
pub type Peer = ConnectionTo<Client>;

/// Live output kept per call for the editor: the last this many bytes.
const OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// Live output goes out at most this often per call (the final update has all of it).
const OUTPUT_EVERY: Duration = Duration::from_millis(100);

/// A tool's kind as ACP names it.
pub fn kind(k: Kind) -> ToolKind {
    match k {
        Kind::Read => ToolKind::Read,
        Kind::Edit => ToolKind::Edit,
        Kind::Delete => ToolKind::Delete,
        Kind::Move => ToolKind::Move,
        Kind::Search => ToolKind::Search,
        Kind::Execute => ToolKind::Execute,
        Kind::Think | Kind::Plan => ToolKind::Think,
        Kind::Fetch => ToolKind::Fetch,
        Kind::SwitchMode => ToolKind::SwitchMode,
        Kind::Agent | Kind::Communicate | Kind::Other => ToolKind::Other,
    }
}

/// A mode's ACP id (Gemini CLI's ids).
pub fn mode_id(m: ApprovalMode) -> &'static str {
    match m {
        ApprovalMode::Default => "default",
        ApprovalMode::AutoEdit => "autoEdit",
        ApprovalMode::Yolo => "yolo",
        ApprovalMode::Plan => "plan",
    }
}

/// The mode an ACP id names (toolbelt's own spellings taken too).
pub fn mode_of(id: &str) -> Option<ApprovalMode> {
    match id {
        "default" => Some(ApprovalMode::Default),
        "autoEdit" | "auto_edit" => Some(ApprovalMode::AutoEdit),
        "yolo" => Some(ApprovalMode::Yolo),
        "plan" => Some(ApprovalMode::Plan),
        _ => None,
    }
}

#[derive(Default)]
struct Call {
    output: String,
    sent: Option<Instant>,
}

/// Sends one session's updates.
pub struct Reporter {
    peer: Peer,
    sid: SessionId,
    calls: Mutex<HashMap<String, Call>>,
    /// The mode the editor was last told.
    mode: Mutex<Option<ApprovalMode>>,
}

impl Reporter {
    pub fn new(peer: Peer, sid: SessionId) -> Self {
        Self { peer, sid, calls: Mutex::default(), mode: Mutex::default() }
    }

    /// Sends one update (a closed connection drops it: the session ends with it).
    pub fn send(&self, update: SessionUpdate) {
        if let Err(e) =
            self.peer.send_notification(SessionNotification::new(self.sid.clone(), update))
        {
            tracing::debug!("session/update not sent: {e}");
        }
    }

    /// The model's text as it streams in.
    pub fn text(&self, text: &str) {
        if !text.is_empty() {
            self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                TextContent::new(text),
            ))));
        }
    }

    /// The model's thinking, as it streams in.
    pub fn thought(&self, text: &str) {
        if !text.is_empty() {
            self.send(SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(
                TextContent::new(text),
            ))));
        }
    }

    /// A call the model asked for, before anything else happens to it.
    pub fn announce(&self, id: &str, title: String, kind: ToolKind, args: &Value) {
        self.calls.locked().insert(id.to_string(), Call::default());
        self.send(SessionUpdate::ToolCall(
            ToolCall::new(id.to_string(), title)
                .kind(kind)
                .status(ToolCallStatus::Pending)
                .raw_input(args.clone()),
        ));
    }

    /// The scheduler's events: a built call's title and locations, `in_progress` when it runs,
    /// live output.
    pub fn event(&self, e: &Event) {
        match e {
            Event::Built { call_id, title, locations } => {
                let mut fields = ToolCallUpdateFields::new().title(title.clone());
                if !locations.is_empty() {
                    fields = fields.locations(self::locations(locations));
                }
                self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                )));
            }
            Event::State { call_id, state: CallState::Executing, .. } => {
                self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                )));
            }
            Event::State { .. } => {}
            Event::Output { call_id, chunk } => self.output(call_id, chunk),
        }
    }

    /// Live output: kept (its tail) and sent as the call's content, at most every
    /// [`OUTPUT_EVERY`].
    fn output(&self, id: &str, chunk: &str) {
        let text = {
            let mut calls = self.calls.locked();
            let call = calls.entry(id.to_string()).or_default();
            call.output.push_str(chunk);
            if call.output.len() > OUTPUT_TAIL_BYTES {
                let mut cut = call.output.len() - OUTPUT_TAIL_BYTES;
                while !call.output.is_char_boundary(cut) {
                    cut += 1;
                }
                call.output.drain(..cut);
            }
            if call.sent.is_some_and(|t| t.elapsed() < OUTPUT_EVERY) {
                return;
            }
            call.sent = Some(Instant::now());
            call.output.clone()
        };
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_string(),
            ToolCallUpdateFields::new().content(vec![ToolCallContent::from(text)]),
        )));
    }

    /// A call's end: its one final status and what it produced.
    pub fn finished(&self, id: &str, done: Option<&CompletedCall>, response: &ResponseParts) {
        self.calls.locked().remove(id);
        let body =
            serde_json::to_value(&response.function_response.response).unwrap_or(Value::Null);
        let error = body.get("error").cloned();
        let status =
            if error.is_some() { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        let mut content = Vec::new();
        match (done.and_then(|d| d.result.as_ref()), &error) {
            (Some(r), None) => match diff(&r.return_display) {
                Some(d) => content.push(ToolCallContent::Diff(d)),
                None => {
                    let shown = match (&r.return_display, body.get("output")) {
                        (Value::String(s), _) if !s.is_empty() => s.clone(),
                        (_, Some(Value::String(s))) => s.clone(),
                        (_, Some(other)) => other.to_string(),
                        _ => String::new(),
                    };
                    if !shown.is_empty() {
                        content.push(ToolCallContent::from(shown));
                    }
                }
            },
            (_, Some(e)) => content.push(ToolCallContent::from(match e {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })),
            (None, None) => {}
        }
        let mut fields = ToolCallUpdateFields::new().status(status).raw_output(body);
        if !content.is_empty() {
            fields = fields.content(content);
        }
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields)));
    }

    /// Tells the editor the mode when it changed since it was last told.
    pub fn mode(&self, now: ApprovalMode) {
        let mut last = self.mode.locked();
        if *last != Some(now) {
            let first = last.is_none();
            *last = Some(now);
            drop(last);
            if !first {
                self.send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode_id(now))));
            }
        }
    }

    /// Records `now` as known to the editor (it chose it).
    pub fn mode_known(&self, now: ApprovalMode) {
        *self.mode.locked() = Some(now);
    }

    /// The plan, from `write_todos`' list.
    pub fn plan(&self, todos: &Value) {
        let Some(items) = todos.as_array() else { return };
        let entries = items
            .iter()
            .filter_map(|t| {
                let text = t.get("description").and_then(Value::as_str)?;
                let status = match t.get("status").and_then(Value::as_str) {
                    Some("in_progress") => PlanEntryStatus::InProgress,
                    Some("completed" | "cancelled") => PlanEntryStatus::Completed,
                    _ => PlanEntryStatus::Pending,
                };
                Some(PlanEntry::new(text.to_string(), PlanEntryPriority::Medium, status))
            })
            .collect();
        self.send(SessionUpdate::Plan(Plan::new(entries)));
    }

    /// The session's title (`update_topic`).
    pub fn title(&self, title: &str) {
        self.send(SessionUpdate::SessionInfoUpdate(
            SessionInfoUpdate::new().title(title.to_string()),
        ));
    }
}

/// A call's locations as ACP's.
pub fn locations(locations: &[toolbelt_core::tool::Location]) -> Vec<ToolCallLocation> {
    locations
        .iter()
        .map(|l| {
            ToolCallLocation::new(l.path.clone()).line(l.line.and_then(|n| u32::try_from(n).ok()))
        })
        .collect()
}

/// An edit's display as a diff: the file, its text before (none for a new file) and after.
fn diff(display: &Value) -> Option<Diff> {
    let path = display.get("filePath")?.as_str()?;
    let new = display.get("newContent")?.as_str()?;
    let old = match display.get("originalContent") {
        Some(Value::String(s)) if !(s.is_empty() && display["isNewFile"] == Value::Bool(true)) => {
            Some(s.clone())
        }
        _ => None,
    };
    Some(Diff::new(path.to_string(), new.to_string()).old_text(old))
}
