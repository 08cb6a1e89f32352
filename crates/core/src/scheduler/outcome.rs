//! How a call ends: a success (with the engine's truncation), a failure, a cancellation with or
//! without output, and what each sends back to the model.

use std::time::Instant;

use serde_json::Value;

use super::{CallRequest, CallState, CompletedCall, Scheduler};
use crate::registry::Built;
use crate::response::{self, ResponseParts};
use crate::result::{Content, ErrorType, Part, ToolError, ToolResult};
use crate::truncate;

/// Parts of one result taken as they are, at most: past this (or past the output limit in
/// their text) the text parts become one text, bounded as any text is.
const MAX_PARTS: usize = 1_000;
/// Media parts kept of a result whose parts were joined.
const MAX_MEDIA_PARTS: usize = 32;

impl Scheduler {
    /// A tool returned normally: success (with truncation) or its own error.
    pub(super) fn finish(
        &self,
        b: &Built,
        req: CallRequest,
        mut result: ToolResult,
        start: Instant,
    ) -> CompletedCall {
        if let Some(err) = result.error.clone() {
            return self.failed(req, err, Some(result), start);
        }
        let output_file = self.bound_output(b.tool.truncates_output(), &req, &mut result);
        let response = self.respond(&req, &mut result);
        self.emit(&req.call_id, &req.name, CallState::Success, None);
        CompletedCall {
            locations: Vec::new(),
            decision: None,
            request: req,
            status: CallState::Success,
            response,
            result: Some(result),
            error: None,
            refusal: None,
            hint: None,
            output_file,
            duration_ms: elapsed_ms(start),
        }
    }

    pub(super) fn failed(
        &self,
        req: CallRequest,
        error: ToolError,
        result: Option<ToolResult>,
        start: Instant,
    ) -> CompletedCall {
        let error = self.bound_error(&req, error);
        self.emit(&req.call_id, &req.name, CallState::Error, Some(error.message.clone()));
        CompletedCall {
            locations: Vec::new(),
            decision: None,
            response: ResponseParts::error(&req.call_id, &req.name, &error.message),
            request: req,
            status: CallState::Error,
            result,
            error: Some(error),
            refusal: None,
            hint: None,
            output_file: None,
            duration_ms: elapsed_ms(start),
        }
    }

    /// An error's text is bounded as a success's is (issue 35: a discovered tool printing 1 GB
    /// gave a 10 MB error, an MCP `isError` answer of 12 MiB went through whole): cut at the
    /// output threshold, the whole saved to a file the notice names.
    fn bound_error(&self, req: &CallRequest, mut error: ToolError) -> ToolError {
        let env = self.env();
        let threshold = match env.config.truncate_tool_output_threshold_chars {
            n if n > 0 => n.min(truncate::MAX_OUTPUT_CHARS),
            _ => truncate::MAX_OUTPUT_CHARS,
        };
        if error.message.len() <= threshold {
            return error;
        }
        let dir = env.workspace.temp_dir().join("tool-outputs");
        if let Some(t) =
            truncate::truncate(&error.message, threshold, &dir, &req.name, &req.call_id)
        {
            if t.output_file.is_some() {
                crate::files::prune_kept(
                    &env.config.home_dir.join("tmp"),
                    crate::limits::KEPT_TOTAL_BYTES,
                );
            }
            error.message = t.text;
        }
        error
    }

    /// State-level cancellation: `[Operation Cancelled] Reason: <reason>`.
    pub(super) fn cancelled(
        &self,
        req: CallRequest,
        reason: &str,
        result: Option<ToolResult>,
        start: Instant,
    ) -> CompletedCall {
        let msg = format!("[Operation Cancelled] Reason: {reason}");
        self.emit(&req.call_id, &req.name, CallState::Cancelled, Some(reason.to_string()));
        CompletedCall {
            locations: Vec::new(),
            decision: None,
            response: ResponseParts::error(&req.call_id, &req.name, &msg),
            request: req,
            status: CallState::Cancelled,
            result,
            error: Some(ToolError::new(ErrorType::Cancelled, msg)),
            refusal: None,
            hint: None,
            output_file: None,
            duration_ms: elapsed_ms(start),
        }
    }

    /// What the model receives for a returned result, sharing its text (held once from here
    /// on: the result keeps it as [`Content::Shared`]).
    fn respond(&self, req: &CallRequest, result: &mut ToolResult) -> ResponseParts {
        result.llm_content = std::mem::take(&mut result.llm_content).into_shared();
        response::success(&req.call_id, &req.name, &result.llm_content, self.family)
    }

    /// The engine's truncation: the setting for tools that opt in, [`truncate::MAX_OUTPUT_CHARS`]
    /// for every tool; returns where the full text is.
    pub(super) fn bound_output(
        &self,
        truncates: bool,
        req: &CallRequest,
        result: &mut ToolResult,
    ) -> Option<std::path::PathBuf> {
        // Many parts, or much text in them (an MCP server's 400,000 text parts printed 17 MB;
        // issue 35): one text of every text part, bounded as any text is, with the first
        // media parts after it.
        let mut media: Vec<Part> = Vec::new();
        if let Content::Parts(parts) = &mut result.llm_content
            && parts.len() > 1
        {
            let text_len: usize = parts
                .iter()
                .map(|p| if let Part::Text { text } = p { text.len() } else { 0 })
                .sum();
            if parts.len() > MAX_PARTS || text_len > truncate::MAX_OUTPUT_CHARS {
                let mut joined = String::with_capacity(text_len + parts.len());
                for p in parts.drain(..) {
                    match p {
                        Part::Text { text } => {
                            if !joined.is_empty() {
                                joined.push('\n');
                            }
                            joined.push_str(&text);
                        }
                        other if media.len() < MAX_MEDIA_PARTS => media.push(other),
                        _ => {}
                    }
                }
                result.llm_content = Content::Text(joined);
            }
        }
        let saved = self.bound_text(truncates, req, result);
        if !media.is_empty() {
            let text = match std::mem::replace(&mut result.llm_content, Content::Parts(Vec::new()))
            {
                Content::Text(text) => text,
                _ => String::new(),
            };
            media.insert(0, Part::Text { text });
            result.llm_content = Content::Parts(media);
        }
        saved
    }

    /// [`Self::bound_output`] for a result of one text.
    fn bound_text(
        &self,
        truncates: bool,
        req: &CallRequest,
        result: &mut ToolResult,
    ) -> Option<std::path::PathBuf> {
        let text = match &result.llm_content {
            Content::Text(text) | Content::Part(Part::Text { text }) => text.as_str(),
            Content::Parts(parts) => match parts.as_slice() {
                [Part::Text { text }] => text.as_str(),
                _ => return None,
            },
            Content::Shared(t) if t.len() == 1 => t.as_str(),
            Content::Part(_) | Content::Shared(_) => return None,
        };
        // Every tool's text is bounded (outputs that grow with their input: listings, search
        // hits, discovered tools); the shell and MCP tools by the setting, as upstream.
        let setting = self.env().config.truncate_tool_output_threshold_chars;
        let threshold = match (truncates, setting) {
            (true, n) if n > 0 => n.min(truncate::MAX_OUTPUT_CHARS),
            _ => truncate::MAX_OUTPUT_CHARS,
        };
        // No more bytes than the threshold: no more characters either (the common case).
        if text.len() <= threshold {
            return None;
        }
        let t = match &result.full_output {
            Some(full) => truncate::truncate_saved(text, threshold, full),
            None => {
                let env = self.env();
                let dir = env.workspace.temp_dir().join("tool-outputs");
                let t = truncate::truncate(text, threshold, &dir, &req.name, &req.call_id);
                // What toolbelt keeps stays within its total, the oldest going first.
                if t.as_ref().is_some_and(|t| t.output_file.is_some()) {
                    let kept = env.config.home_dir.join("tmp");
                    crate::files::prune_kept(&kept, crate::limits::KEPT_TOTAL_BYTES);
                }
                t
            }
        }?;
        result.llm_content = Content::Text(t.text);
        t.output_file
    }

    /// Cancelled while running but the tool returned: its output plus the cancellation error.
    pub(super) fn cancelled_with_output(
        &self,
        req: CallRequest,
        mut result: ToolResult,
        truncates: bool,
        start: Instant,
    ) -> CompletedCall {
        let output_file = self.bound_output(truncates, &req, &mut result);
        let msg = "[Operation Cancelled] User cancelled tool execution.".to_string();
        let mut response = self.respond(&req, &mut result);
        response.function_response.response.insert("error", Value::String(msg.clone()));
        self.emit(
            &req.call_id,
            &req.name,
            CallState::Cancelled,
            Some("User cancelled tool execution.".into()),
        );
        CompletedCall {
            locations: Vec::new(),
            decision: None,
            request: req,
            status: CallState::Cancelled,
            response,
            result: Some(result),
            error: Some(ToolError::new(ErrorType::Cancelled, msg)),
            refusal: None,
            hint: None,
            output_file,
            duration_ms: elapsed_ms(start),
        }
    }
}

pub(super) fn content_text(c: &Content) -> String {
    c.parts()
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            Part::InlineData { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}
