//! What a tool call produces: model-facing content, user-facing display, and an optional error.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Upstream's `ToolErrorType` string values, plus `tool_call_timeout` (the timeout upstream
/// planned and never shipped) and `cancelled` (used only in toolbelt's own JSON reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// Denied by policy.
    PolicyViolation,
    /// The arguments do not fit the schema or the tool's checks.
    InvalidToolParams,
    /// Something unknown went wrong.
    Unknown,
    /// A failure the tool did not handle (also: confirmation needed with nobody to ask).
    UnhandledException,
    /// No tool has the name.
    ToolNotRegistered,
    /// The tool ran and failed.
    ExecutionFailed,
    /// The file does not exist.
    FileNotFound,
    /// The file could not be written.
    FileWriteFailure,
    /// The file could not be read.
    ReadContentFailure,
    /// The file to create exists already.
    AttemptToCreateExistingFile,
    /// The file is too large to read.
    FileTooLarge,
    /// The operating system refused access.
    PermissionDenied,
    /// The disk is full.
    NoSpaceLeft,
    /// A folder where a file was expected.
    TargetIsDirectory,
    /// The path is outside the workspace (or refused by the sensitive-path rules).
    PathNotInWorkspace,
    /// The search path does not exist.
    SearchPathNotFound,
    /// The search path is not a folder.
    SearchPathNotADirectory,
    /// The edit could not be prepared.
    EditPreparationFailure,
    /// `old_string` was not found.
    EditNoOccurrenceFound,
    /// `old_string` was found a different number of times than expected.
    EditExpectedOccurrenceMismatch,
    /// The edit would change nothing.
    EditNoChange,
    /// The edit was judged to change nothing.
    EditNoChangeLlmJudgement,
    /// glob failed.
    GlobExecutionError,
    /// grep_search failed.
    GrepExecutionError,
    /// list_directory failed.
    LsExecutionError,
    /// The path is not a folder.
    PathIsNotADirectory,
    /// The MCP server reported an error.
    McpToolError,
    /// The MCP resource does not exist.
    McpResourceNotFound,
    /// save_memory failed.
    MemoryToolExecutionError,
    /// read_many_files failed.
    ReadManyFilesSearchError,
    /// The shell command could not be run.
    ShellExecuteError,
    /// The sandbox would have to be widened.
    SandboxExpansionRequired,
    /// A discovered tool failed.
    DiscoveredToolExecutionError,
    /// web_fetch found no URL in the prompt.
    WebFetchNoUrlInPrompt,
    /// web_fetch's direct fetch failed.
    WebFetchFallbackFailed,
    /// web_fetch could not process the page.
    WebFetchProcessingError,
    /// google_web_search failed.
    WebSearchFailed,
    /// A hook asked to stop the agent.
    StopExecution,
    /// The call ran out of time and was stopped.
    ToolCallTimeout,
    /// The call was cancelled.
    Cancelled,
}

impl ErrorType {
    /// The wire string, e.g. `file_not_found`.
    pub fn as_str(self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::String(s)) => s,
            _ => "unknown".to_string(),
        }
    }

    /// Errors after which the session cannot sensibly go on (upstream: only a full disk).
    pub fn is_fatal(self) -> bool {
        self == ErrorType::NoSpaceLeft
    }
}

/// A failed call: the model sees only `message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    /// Upstream's error type.
    #[serde(rename = "type")]
    pub kind: ErrorType,
    /// What the model reads.
    pub message: String,
}

impl ToolError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}

/// One part of model-facing content, in the Gemini API's shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// Base64 data with its MIME type.
    InlineData {
        /// The data.
        #[serde(rename = "inlineData")]
        inline_data: InlineData,
    },
}

/// Base64 data with its MIME type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InlineData {
    /// The MIME type.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// The data, base64.
    pub data: String,
}

impl Part {
    /// A text part.
    pub fn text(s: impl Into<String>) -> Self {
        Part::Text { text: s.into() }
    }

    /// An inline-data part.
    pub fn inline(mime_type: impl Into<String>, data: impl Into<String>) -> Self {
        Part::InlineData {
            inline_data: InlineData { mime_type: mime_type.into(), data: data.into() },
        }
    }
}

/// Model-facing content: a plain string, a single part, or a list of parts (upstream's
/// `PartListUnion`; the shapes differ in JSON reports, not in what the model receives).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// A plain string.
    Text(String),
    /// One part.
    Part(Part),
    /// Several parts.
    Parts(Vec<Part>),
    /// Text held once and shared with the response the engine builds from it (see
    /// [`SharedText`]); JSON shows it as a string or a list of text parts, like the above.
    #[serde(skip_deserializing)]
    Shared(SharedText),
}

/// Text as the model receives it, held once: a plain string, or text parts joined by newlines
/// into one string with where each part ends. A finished call's result and its response share
/// it, and a tool with many text parts (read_many_files) builds it in one buffer, so an answer
/// of a million characters costs its pages once instead of once per copy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SharedText {
    text: Arc<String>,
    /// Where each part ends; `None` for a plain string.
    ends: Option<Vec<usize>>,
}

impl SharedText {
    /// A plain string (moved, not copied).
    pub fn plain(text: String) -> Self {
        Self { text: Arc::new(text), ends: None }
    }

    /// No text parts yet; add them with [`SharedText::push_part`].
    pub fn parts() -> Self {
        Self { text: Arc::default(), ends: Some(Vec::new()) }
    }

    /// Room for `bytes` more bytes of text (pages are only touched as the text is written).
    pub fn reserve(&mut self, bytes: usize) {
        Arc::make_mut(&mut self.text).reserve(bytes);
    }

    /// Adds a text part (to a plain string: appends the text).
    pub fn push_part(&mut self, part: &str) {
        let text = Arc::make_mut(&mut self.text);
        match &mut self.ends {
            Some(ends) => {
                if !ends.is_empty() {
                    text.push('\n');
                }
                text.push_str(part);
                ends.push(text.len());
            }
            None => text.push_str(part),
        }
    }

    /// The whole text, parts joined by newlines.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The storage, to share.
    pub fn shared(&self) -> &Arc<String> {
        &self.text
    }

    /// The text parts (a plain string is one).
    pub fn texts(&self) -> Vec<&str> {
        let Some(ends) = &self.ends else { return vec![self.text.as_str()] };
        let mut start = 0;
        ends.iter()
            .map(|&end| {
                let part = &self.text[start..end];
                start = end + 1;
                part
            })
            .collect()
    }

    /// How many parts (a plain string is one).
    pub fn len(&self) -> usize {
        self.ends.as_ref().map_or(1, Vec::len)
    }

    /// Whether it is a list with no parts.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether it is a plain string rather than parts.
    pub fn is_plain(&self) -> bool {
        self.ends.is_none()
    }
}

impl Serialize for SharedText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        if self.is_plain() {
            return s.serialize_str(&self.text);
        }
        #[derive(Serialize)]
        struct TextPart<'a> {
            text: &'a str,
        }
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for text in self.texts() {
            seq.serialize_element(&TextPart { text })?;
        }
        seq.end()
    }
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl Content {
    /// The parts of this content (a string is one text part).
    pub fn parts(&self) -> Vec<Part> {
        match self {
            Content::Text(s) => vec![Part::text(s.clone())],
            Content::Part(p) => vec![p.clone()],
            Content::Parts(p) => p.clone(),
            Content::Shared(t) => t.texts().into_iter().map(Part::text).collect(),
        }
    }

    /// The same content with its text held once, to share with the response: a plain string
    /// is moved, text parts are joined (parts with inline data stay as they are).
    pub fn into_shared(self) -> Content {
        match self {
            Content::Text(s) => Content::Shared(SharedText::plain(s)),
            Content::Parts(ps) if ps.iter().all(|p| matches!(p, Part::Text { .. })) => {
                let mut shared = SharedText::parts();
                for p in ps {
                    if let Part::Text { text } = p {
                        shared.push_part(&text);
                    }
                }
                Content::Shared(shared)
            }
            other => other,
        }
    }

    /// Length in characters of the text in this content.
    pub fn text_len(&self) -> usize {
        match self {
            Content::Text(s) => s.chars().count(),
            Content::Shared(t) => t.as_str().chars().count() - t.len().saturating_sub(1),
            Content::Part(_) | Content::Parts(_) => self
                .parts()
                .iter()
                .map(|p| match p {
                    Part::Text { text } => text.chars().count(),
                    Part::InlineData { .. } => 0,
                })
                .sum(),
        }
    }
}

/// The result of executing one invocation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolResult {
    /// What the model receives on success.
    #[serde(rename = "llmContent")]
    pub llm_content: Content,
    /// What a person is shown: a string, or a structured value (e.g. a listing).
    #[serde(rename = "returnDisplay")]
    pub return_display: Value,
    /// Presence means failure; the model then sees only the message.
    pub error: Option<ToolError>,
    /// Structured payload for callers (not sent to the model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// A short summary for front ends, e.g. `6-8 of 20`.
    #[serde(rename = "resultSummary", skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Set by tools that kept only part of a huge output in `llm_content` and saved all of it:
    /// truncation then names this file instead of saving the partial text.
    #[serde(skip)]
    pub full_output: Option<FullOutput>,
}

/// Where a tool saved an output too large to keep, and its length in characters.
#[derive(Clone, Debug, PartialEq)]
pub struct FullOutput {
    /// The saved file.
    pub path: std::path::PathBuf,
    /// The whole output's length in characters.
    pub chars: u64,
    /// Set when the file holds only the output's first so many bytes (a file toolbelt keeps
    /// has a size cap): the notice then says so instead of "full output".
    pub only_first_bytes: Option<u64>,
}

impl ToolResult {
    /// A successful text result with a display string.
    pub fn text(llm: impl Into<String>, display: impl Into<String>) -> Self {
        Self {
            llm_content: Content::Text(llm.into()),
            return_display: Value::String(display.into()),
            ..Self::default()
        }
    }

    /// A failed result: `llm` and `display` are kept for callers other than the model.
    pub fn error(
        kind: ErrorType,
        message: impl Into<String>,
        llm: impl Into<String>,
        display: impl Into<String>,
    ) -> Self {
        Self {
            llm_content: Content::Text(llm.into()),
            return_display: Value::String(display.into()),
            error: Some(ToolError::new(kind, message)),
            ..Self::default()
        }
    }

    /// A failure whose model text, display and message are the same string.
    pub fn simple_error(kind: ErrorType, message: impl Into<String>) -> Self {
        let m = message.into();
        Self::error(kind, m.clone(), m.clone(), m)
    }

    /// Sets the one-line summary shown to people.
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }
}

pub use crate::untrusted::untrusted;

/// An error with its causes, `outer: inner: innermost` (e.g. which address refused a
/// connection behind "error sending request").
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        s.push_str(": ");
        s.push_str(&c.to_string());
        source = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_types_serialize_as_upstream_strings() {
        assert_eq!(ErrorType::FileNotFound.as_str(), "file_not_found");
        assert_eq!(ErrorType::PathIsNotADirectory.as_str(), "path_is_not_a_directory");
        assert_eq!(ErrorType::SearchPathNotADirectory.as_str(), "search_path_not_a_directory");
        assert_eq!(ErrorType::EditNoChangeLlmJudgement.as_str(), "edit_no_change_llm_judgement");
        assert_eq!(ErrorType::ToolCallTimeout.as_str(), "tool_call_timeout");
        assert!(ErrorType::NoSpaceLeft.is_fatal());
        assert!(!ErrorType::FileNotFound.is_fatal());
    }

    #[test]
    fn parts_serialize_in_gemini_shape() {
        let c = Content::Parts(vec![Part::text("a"), Part::inline("image/png", "AAA=")]);
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::json!([{"text": "a"}, {"inlineData": {"mimeType": "image/png", "data": "AAA="}}])
        );
        assert_eq!(c.text_len(), 1);
    }

    #[test]
    fn shared_text_keeps_the_shape_callers_see() {
        let plain = Content::Text("héllo".into()).into_shared();
        assert_eq!(serde_json::to_value(&plain).unwrap(), serde_json::json!("héllo"));
        assert_eq!(plain.text_len(), 5);
        let parts = Content::Parts(vec![Part::text("a"), Part::text(""), Part::text("b\nc")]);
        let shared = parts.clone().into_shared();
        let Content::Shared(t) = &shared else { panic!("{shared:?}") };
        assert_eq!(t.as_str(), "a\n\nb\nc");
        assert_eq!(t.texts(), ["a", "", "b\nc"]);
        assert_eq!(serde_json::to_value(&shared).unwrap(), serde_json::to_value(&parts).unwrap());
        assert_eq!(shared.parts(), parts.parts());
        assert_eq!(shared.text_len(), parts.text_len());
        let none = Content::Parts(vec![]).into_shared();
        assert_eq!(serde_json::to_value(&none).unwrap(), serde_json::json!([]));
        // Parts with inline data stay a list.
        let media = Content::Parts(vec![Part::text("a"), Part::inline("image/png", "AAA=")]);
        assert_eq!(media.clone().into_shared(), media);
    }
}
