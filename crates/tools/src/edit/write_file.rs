//! `write_file`: replaces or creates a whole file, atomically, keeping its line endings and BOM.

use std::path::PathBuf;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{AlwaysAllow, AlwaysScope};
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, Location, ModelFamily, Tool, ToolEnv,
};
use toolbelt_core::workspace::Access;

use super::target::{EditTarget, ReadError};

use super::{DiffView, FileStyle, create_patch, is_build_file, placeholder, stale_message};
use crate::fs::shorten_path;

pub const NAME: &str = "write_file";

#[derive(Debug, Deserialize)]
struct Params {
    file_path: String,
    content: String,
    #[serde(default)]
    modified_by_user: bool,
    /// Older Gemini CLI: the file ends with a newline (compat T5).
    #[serde(default)]
    require_final_newline: bool,
}

pub struct WriteFile;

impl Tool for WriteFile {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "WriteFile"
    }
    fn kind(&self) -> Kind {
        Kind::Edit
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::Argument("file_path"), enables_auto_edit: true }
    }

    fn declaration(&self, family: ModelFamily) -> Declaration {
        let (description, path_doc, content_doc) = match family {
            ModelFamily::Legacy => (
                include_str!("descriptions/write_file.legacy.md"),
                "The file to write, absolute or relative to the workspace root.",
                "The complete new content of the file. No omission placeholders such as '(rest of methods ...)' or 'unchanged code'.",
            ),
            ModelFamily::Gemini3 => (
                include_str!("descriptions/write_file.gemini3.md"),
                "The file to write.",
                "The whole file content; never placeholders like '// ... rest of code'.",
            ),
        };
        Declaration {
            name: NAME.into(),
            description: description.into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": path_doc},
                    "content": {"type": "string", "description": content_doc}
                },
                "required": ["file_path", "content"]
            }),
        }
    }

    fn modified_args(&self, args: &Value, _current: &str, edited: &str) -> Option<Value> {
        let mut a = args.clone();
        let proposed = a.get("content").cloned().unwrap_or(Value::Null);
        let map = a.as_object_mut()?;
        map.insert("content".into(), Value::String(edited.to_string()));
        map.insert("ai_proposed_content".into(), proposed);
        map.insert("modified_by_user".into(), Value::Bool(true));
        Some(a)
    }

    fn normalize_args(&self, args: &mut Value) {
        toolbelt_core::schema::rename_params(
            args,
            &[("absolute_path", "file_path"), ("path", "file_path")],
        );
    }

    /// The declared schema plus `require_final_newline` (older Gemini CLI).
    fn accepted_parameters(&self) -> Option<Value> {
        Some(toolbelt_core::schema::with_properties(
            self.declaration(ModelFamily::Legacy).parameters,
            &[("require_final_newline", serde_json::json!({"type": "boolean"}))],
        ))
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        if p.file_path.is_empty() {
            return Err("Missing or empty \"file_path\"".into());
        }
        let ws = &env.workspace;
        // In plan mode a name means a file in the plans folder (as upstream).
        let file_path = if env.plan_mode {
            crate::session::plan_path(&p.file_path, env)?
        } else {
            p.file_path.clone()
        };
        let path = ws.resolve_checked(&file_path, Access::Write).map_err(|e| e.to_string())?;
        match std::fs::symlink_metadata(&path.real) {
            Ok(m) if m.is_dir() => {
                return Err(format!("Path is a directory, not a file: {}", path.real.display()));
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "Error accessing path properties for validation: {}. Reason: {e}",
                    path.real.display()
                ));
            }
            _ => {}
        }
        if !placeholder::find(&p.content).is_empty() {
            return Err("`content` contains an omission placeholder (for example 'rest of methods ...'). Provide complete file content.".into());
        }
        Ok(Box::new(WriteCall {
            seen: env.files.clone(),
            shown: shorten_path(&ws.relative(&path.real)),
            path: path.real.clone(),
            target: std::sync::Arc::new(
                EditTarget::new(ws.clone(), path, env.config.edit_max_file_bytes)
                    .with_editor(env.editor.clone()),
            ),
            content: if p.require_final_newline
                && !p.content.is_empty()
                && !p.content.ends_with('\n')
            {
                format!("{}\n", p.content)
            } else {
                p.content
            },
            modified_by_user: p.modified_by_user,
        }))
    }
}

#[derive(Clone)]
struct WriteCall {
    seen: std::sync::Arc<toolbelt_core::ledger::FileLedger>,
    path: PathBuf,
    target: std::sync::Arc<EditTarget>,
    shown: String,
    content: String,
    modified_by_user: bool,
}

/// The file as text (invalid UTF-8 replaced): `None` when it does not exist.
fn current(target: &EditTarget) -> Result<Option<String>, ReadError> {
    Ok(target.read()?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

impl WriteCall {
    /// The write itself: read the old file, write the new one, report.
    fn run(&self, gate: &toolbelt_core::commit::CommitGate) -> ToolResult {
        let path = self.path.clone();
        let original_bytes = match self.target.read() {
            Ok(o) => o,
            Err(ReadError::Refused(kind, msg)) => return ToolResult::simple_error(kind, msg),
            Err(ReadError::Io(e)) => {
                let msg = match e.raw_os_error() {
                    Some(_) => format!("Error checking existing file '{}': {e}", path.display()),
                    None => format!("Error checking existing file: {e}"),
                };
                return ToolResult::simple_error(ErrorType::FileWriteFailure, msg);
            }
        };
        if original_bytes.as_ref().is_some_and(|b| self.seen.is_stale(&path, b)) {
            let msg = stale_message(&path, "writing it, so the write");
            return ToolResult::simple_error(ErrorType::FileWriteFailure, msg);
        }
        let original = original_bytes.map(|b| String::from_utf8_lossy(&b).into_owned());
        let is_new = original.is_none();
        let proposed = self.proposed(original.as_deref());
        let bytes = proposed.clone().into_bytes();
        let written = self.target.write(&bytes, gate).map(|()| self.seen.record(&path, &bytes));
        if let Err(e) = written {
            let p = path.display();
            let (kind, msg) = match e.raw_os_error() {
                Some(13) => (
                    ErrorType::PermissionDenied,
                    format!("Permission denied writing to file: {p} (EACCES)"),
                ),
                Some(28) => {
                    (ErrorType::NoSpaceLeft, format!("No space left on device: {p} (ENOSPC)"))
                }
                Some(21) => (
                    ErrorType::TargetIsDirectory,
                    format!("Target is a directory, not a file: {p} (EISDIR)"),
                ),
                _ => (ErrorType::FileWriteFailure, format!("Error writing to file '{p}': {e}")),
            };
            return ToolResult::simple_error(kind, msg);
        }
        let old = original.unwrap_or_default();
        let mut pieces = vec![if is_new {
            format!("Successfully created and wrote to new file: {}.", path.display())
        } else {
            format!("Successfully overwrote file: {}.", path.display())
        }];
        if self.modified_by_user {
            pieces.push(format!("User modified the `content` to be: {}", self.content));
        }
        // The model is shown its own text (LF); the file on disk keeps its line endings.
        let content = &self.content;
        let view = DiffView::new(&old, content);
        pieces.push(format!("Here is the updated code:\n{}", view.snippet(5)));
        let stat = view.stat();
        let patch = view.patch(&self.file_name(), "Original", "Written");
        ToolResult {
            llm_content: toolbelt_core::Content::Text(pieces.join(" ")),
            return_display: json!({
                "fileDiff": patch,
                "fileName": self.file_name(),
                "filePath": path.display().to_string(),
                "originalContent": old,
                "newContent": content,
                "diffStat": stat.to_json(),
                "isBuildFile": is_build_file(&path),
                "isNewFile": is_new,
            }),
            summary: Some(format!("{} added, {} removed", stat.added_lines, stat.removed_lines)),
            ..ToolResult::default()
        }
    }

    /// What will be written: the new content in the old file's style.
    fn proposed(&self, original: Option<&str>) -> String {
        match original {
            Some(o) if !o.is_empty() => FileStyle::of(o).apply(&self.content),
            _ => self.content.clone(),
        }
    }

    fn file_name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

#[async_trait]
impl Invocation for WriteCall {
    fn description(&self) -> String {
        format!("Writing to {}", self.shown)
    }

    fn locations(&self) -> Vec<Location> {
        vec![Location { path: self.path.display().to_string(), line: None }]
    }

    fn writes(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }

    fn respects_auto_edit(&self) -> bool {
        true
    }

    fn costly_turns(&self) -> u32 {
        super::edit_turns(&self.path, self.content.len())
    }

    fn proposal(&self) -> Option<(String, String)> {
        let original = current(&self.target).ok()?;
        Some((original.unwrap_or_default(), self.content.clone()))
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        let original = current(&self.target).ok()?;
        let proposed = self.proposed(original.as_deref());
        Some(ConfirmationDetails::Edit {
            title: format!("Confirm Write: {}", self.shown),
            file_name: self.file_name(),
            file_path: self.path.display().to_string(),
            file_diff: create_patch(
                &self.file_name(),
                original.as_deref().unwrap_or(""),
                &proposed,
                "Current",
                "Proposed",
            ),
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let this = self.clone();
        let gate = ctx.commit.clone();
        super::off_the_scheduler("write_file", &ctx, move || this.run(&gate)).await
    }
}
