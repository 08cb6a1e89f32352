//! `replace`: exact-or-forgiving text replacement in one file, written atomically.

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

use super::matching::{self, Replacement};
use super::target::{EditTarget, ReadError};
use super::{DiffView, create_patch, is_build_file, placeholder, stale_message};
use crate::fs::shorten_path;

pub const NAME: &str = "replace";

#[derive(Clone, Debug, Deserialize)]
struct Params {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    allow_multiple: bool,
    #[serde(default)]
    modified_by_user: bool,
    /// Older Gemini CLI: exactly this many occurrences, all replaced (compat T5).
    #[serde(default)]
    expected_replacements: Option<usize>,
    /// Older Gemini CLI: the file ends with a newline after the edit.
    #[serde(default)]
    require_final_newline: bool,
}

pub struct Replace;

impl Tool for Replace {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Edit"
    }
    fn kind(&self) -> Kind {
        Kind::Edit
    }
    fn always_allow(&self) -> AlwaysAllow {
        AlwaysAllow { scope: AlwaysScope::Argument("file_path"), enables_auto_edit: true }
    }

    fn declaration(&self, family: ModelFamily) -> Declaration {
        let escaped = match family {
            ModelFamily::Legacy => "preferably unescaped",
            ModelFamily::Gemini3 => "unescaped",
        };
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/replace.md").into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The file to change."},
                    "instruction": {"type": "string", "description": "What the change is for, in one or two self-contained sentences (why, where, what)."},
                    "old_string": {"type": "string", "description": format!("The literal text to replace, {escaped}, exactly as it appears in the file including whitespace, with enough context to be unique.")},
                    "new_string": {"type": "string", "description": format!("The literal replacement text, {escaped}; complete code, never placeholders such as '(rest of methods ...)'.")},
                    "allow_multiple": {"type": "boolean", "description": "If true, every occurrence of old_string is replaced; if false (default) exactly one must exist."}
                },
                "required": ["file_path", "instruction", "old_string", "new_string"]
            }),
        }
    }

    fn modified_args(&self, args: &Value, current: &str, edited: &str) -> Option<Value> {
        let mut a = args.clone();
        let proposed = a.get("new_string").cloned().unwrap_or(Value::Null);
        let map = a.as_object_mut()?;
        map.insert("old_string".into(), Value::String(current.to_string()));
        map.insert("new_string".into(), Value::String(edited.to_string()));
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

    /// The declared schema, plus older parameters (`expected_replacements`,
    /// `require_final_newline`) and without `instruction` required (calls that follow the
    /// design documents have none; compat T5).
    fn accepted_parameters(&self) -> Option<Value> {
        let mut schema = toolbelt_core::schema::with_properties(
            self.declaration(ModelFamily::Legacy).parameters,
            &[
                ("expected_replacements", serde_json::json!({"type": "integer", "minimum": 1})),
                ("require_final_newline", serde_json::json!({"type": "boolean"})),
            ],
        );
        if let Some(required) = schema["required"].as_array_mut() {
            required.retain(|r| r != "instruction");
        }
        Some(schema)
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let p: Params = toolbelt_core::schema::parse_params(params)?;
        if p.file_path.trim().is_empty() {
            return Err("The 'file_path' parameter must be non-empty.".into());
        }
        let in_old = placeholder::find(&p.old_string);
        if placeholder::find(&p.new_string).iter().any(|ph| !in_old.contains(ph)) {
            return Err("`new_string` contains an omission placeholder (for example 'rest of methods ...'). Provide exact literal replacement text.".into());
        }
        let ws = &env.workspace;
        // In plan mode a name means a file in the plans folder (as upstream).
        let file_path = if env.plan_mode {
            crate::session::plan_path(&p.file_path, env)?
        } else {
            // A relative path that names no file may name one deeper in (S5, as upstream).
            super::correct::corrected(ws, &p.file_path)
                .map_or_else(|| p.file_path.clone(), |c| c.display().to_string())
        };
        let path = ws.resolve_checked(&file_path, Access::Write).map_err(|e| e.to_string())?;
        Ok(Box::new(ReplaceCall {
            seen: env.files.clone(),
            shown: shorten_path(&ws.relative(&path.real)),
            path: path.real.clone(),
            target: EditTarget::new(ws.clone(), path, env.config.edit_max_file_bytes)
                .with_editor(env.editor.clone()),
            p,
        }))
    }
}

#[derive(Clone)]
struct ReplaceCall {
    seen: std::sync::Arc<toolbelt_core::ledger::FileLedger>,
    path: PathBuf,
    target: EditTarget,
    shown: String,
    p: Params,
}

/// How the file's bytes map to text and back.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Encoding {
    Utf8,
    /// Not valid UTF-8: each byte is one character (Latin-1), written back the same way.
    Latin1,
}

/// A computed edit, not yet written.
struct Edit {
    /// Text before (line ends normalised to `\n`) and after.
    before: String,
    after: String,
    created: bool,
    occurrences: usize,
    crlf: bool,
    encoding: Encoding,
    fuzzy_lines: Vec<(usize, usize)>,
}

/// A failure with the model-facing message and the short display text.
struct Failure {
    kind: ErrorType,
    raw: String,
    display: String,
}

/// The file's text by the rule read_file uses (see [`crate::fs::text::charset`]), or the
/// number of bytes an edit would lose: UTF-8 text with stray bytes is not edited.
fn decode(bytes: Vec<u8>) -> Result<(String, Encoding), usize> {
    use crate::fs::text::{Charset, charset, latin1};
    let bytes = match String::from_utf8(bytes) {
        Ok(s) => return Ok((s, Encoding::Utf8)),
        Err(e) => e.into_bytes(),
    };
    match charset(&bytes) {
        Charset::DamagedUtf8 { invalid } => Err(invalid),
        _ => Ok((latin1(&bytes), Encoding::Latin1)),
    }
}

fn encode(text: &str, enc: Encoding) -> Result<std::borrow::Cow<'_, [u8]>, char> {
    match enc {
        Encoding::Utf8 => Ok(text.as_bytes().into()),
        Encoding::Latin1 => {
            text.chars().map(|c| u8::try_from(u32::from(c)).map_err(|_| c)).collect()
        }
    }
}

impl ReplaceCall {
    /// The edit itself: read, match, write, report.
    fn run(&self, gate: &toolbelt_core::commit::CommitGate) -> ToolResult {
        let edit = match self.calculate() {
            Ok(e) => e,
            Err(f) => {
                return ToolResult::error(
                    f.kind,
                    f.raw.clone(),
                    f.raw,
                    format!("Error: {}", f.display),
                );
            }
        };
        if let Err(msg) = write(&self.target, &edit, &self.seen, gate) {
            return ToolResult::error(
                ErrorType::FileWriteFailure,
                format!("Error executing edit: {msg}"),
                format!("Error executing edit: {msg}"),
                format!("Error writing file: {msg}"),
            );
        }
        let path = self.path.display();
        let mut pieces = vec![if edit.created {
            format!("Created new file: {path} with provided content.")
        } else {
            format!("Successfully modified file: {path} ({} replacements).", edit.occurrences)
        }];
        let view = DiffView::new(&edit.before, &edit.after);
        pieces.push(format!("Here is the updated code:\n{}", view.snippet(5)));
        if !edit.fuzzy_lines.is_empty() {
            let ranges: Vec<String> = edit
                .fuzzy_lines
                .iter()
                .map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
                .collect();
            let word = if ranges.len() == 1 { "line" } else { "lines" };
            pieces.push(format!("Applied fuzzy match at {word} {}.", ranges.join(", ")));
        }
        if self.p.modified_by_user {
            pieces.push(format!(
                "User modified the `new_string` content to be: {}.",
                self.p.new_string
            ));
        }
        let stat = view.stat();
        let display = if edit.created {
            Value::String(format!("Created {}", self.shown))
        } else {
            let patch = view.patch(&self.file_name(), "Current", "Proposed");
            let mut d = json!({
                "fileDiff": patch,
                "fileName": self.file_name(),
                "filePath": self.path.display().to_string(),
                "diffStat": stat.to_json(),
                "isBuildFile": is_build_file(&self.path),
                "isNewFile": false,
            });
            // Moved in, not serialised: `json!` would copy both (possibly large) texts.
            if let Value::Object(m) = &mut d {
                m.insert("originalContent".into(), Value::String(edit.before));
                m.insert("newContent".into(), Value::String(edit.after));
            }
            d
        };
        ToolResult {
            llm_content: toolbelt_core::Content::Text(pieces.join(" ")),
            return_display: display,
            summary: Some(format!("{} added, {} removed", stat.added_lines, stat.removed_lines)),
            ..ToolResult::default()
        }
    }

    fn calculate(&self) -> Result<Edit, Failure> {
        let p = &self.p;
        let given = &p.file_path;
        let existing = match self.target.read() {
            Ok(Some(b)) if self.seen.is_stale(&self.path, &b) => {
                let m = stale_message(&self.path, "editing it, so the edit");
                return Err(Failure {
                    kind: ErrorType::EditPreparationFailure,
                    raw: m.clone(),
                    display: m,
                });
            }
            Ok(Some(b)) => match decode(b) {
                Ok(text) => Some(text),
                Err(invalid) => {
                    let m = format!(
                        "Failed to edit: {} is UTF-8 text with {invalid} byte(s) that are not UTF-8; an edit would have to replace them, so the file is left alone. Fix its encoding first (or rewrite it whole with write_file).",
                        self.path.display()
                    );
                    return Err(Failure {
                        kind: ErrorType::EditPreparationFailure,
                        raw: m.clone(),
                        display: m,
                    });
                }
            },
            Ok(None) => None,
            Err(ReadError::Refused(kind, m)) => {
                return Err(Failure { kind, raw: m.clone(), display: m });
            }
            Err(ReadError::Io(e)) => {
                let m = if self.path.is_dir() {
                    "EISDIR: illegal operation on a directory, read".to_string()
                } else {
                    crate::fs::node_error(&e, "open", &self.path)
                };
                return Err(Failure {
                    kind: ErrorType::EditPreparationFailure,
                    raw: m.clone(),
                    display: format!("Error preparing edit: {m}"),
                });
            }
        };
        let old = p.old_string.replace("\r\n", "\n");
        let new = p.new_string.replace("\r\n", "\n");
        let Some((raw, encoding)) = existing else {
            if old.is_empty() {
                return Ok(Edit {
                    before: String::new(),
                    after: p.new_string.clone(),
                    created: true,
                    occurrences: 1,
                    crlf: false,
                    encoding: Encoding::Utf8,
                    fuzzy_lines: Vec::new(),
                });
            }
            return Err(Failure {
                kind: ErrorType::FileNotFound,
                raw: format!("File not found: {}", self.path.display()),
                display: "File not found. Cannot apply edit. Use an empty old_string to create a new file.".into(),
            });
        };
        if old.is_empty() {
            return Err(Failure {
                kind: ErrorType::AttemptToCreateExistingFile,
                raw: format!("File already exists, cannot create: {}", self.path.display()),
                display: "Failed to edit. Attempted to create a file that already exists.".into(),
            });
        }
        let crlf = raw.contains("\r\n");
        let before = if crlf { raw.replace("\r\n", "\n") } else { raw };
        let expected = p.expected_replacements;
        let multiple = p.allow_multiple || expected.is_some_and(|n| n > 1);
        // What the edit would make is bounded like what it reads: replacing every `a` of a
        // 20 MB file with 100 characters took 1.5 GB and wrote a 1 GB file (issue 35).
        let limit = self.target.limit();
        let too_big = |size: u64, n: usize| {
            let m = format!(
                "Failed to edit: replacing {n} occurrence(s) would make {} {:.2}MB, over the {}MB limit for a file an edit makes. Replace fewer occurrences at a time (a narrower old_string), or use a shell command for an edit this large.",
                self.path.display(),
                size as f64 / 1_048_576.0,
                limit / 1_048_576
            );
            Failure { kind: ErrorType::FileTooLarge, raw: m.clone(), display: m }
        };
        if multiple && new.len() > old.len() {
            let n = before.matches(old.as_str()).count();
            let grown = before.len() as u64 + (n as u64) * (new.len() - old.len()) as u64;
            if grown > limit {
                return Err(too_big(grown, n));
            }
        }
        let Replacement { content: mut after, occurrences, fuzzy_lines, .. } =
            matching::replace(&before, &old, &new, multiple);
        if after.len() as u64 > limit {
            return Err(too_big(after.len() as u64, occurrences));
        }
        if p.require_final_newline && !after.is_empty() && !after.ends_with('\n') {
            after.push('\n');
        }
        if occurrences == 0 {
            let mut m = format!(
                "Could not find an exact match for 'old_string' in '{given}'. If previous edits modified the file or you are modifying lines outside your recent read window, please use ReadFile to inspect the target lines before retrying with an exact 'old_string'."
            );
            if let Some(hint) = matching::nearest_region(&before, &old) {
                m.push('\n');
                m.push_str(&hint);
            }
            return Err(Failure {
                kind: ErrorType::EditNoOccurrenceFound,
                raw: m,
                display: "Failed to edit, could not find the string to replace.".into(),
            });
        }
        if let Some(n) = expected
            && occurrences != n
        {
            let term = if n == 1 { "occurrence" } else { "occurrences" };
            return Err(Failure {
                kind: ErrorType::EditExpectedOccurrenceMismatch,
                raw: format!(
                    "Failed to edit, Expected {n} {term} but found {occurrences} for old_string in file: {given}"
                ),
                display: format!("Failed to edit, expected {n} {term} but found {occurrences}."),
            });
        }
        if !multiple && occurrences != 1 {
            return Err(Failure {
                kind: ErrorType::EditExpectedOccurrenceMismatch,
                raw: format!(
                    "Failed to edit, Expected 1 occurrence but found {occurrences} for old_string in file: {given}. If you intended to replace multiple occurrences, set 'allow_multiple' to true."
                ),
                display: format!("Failed to edit, expected 1 occurrence but found {occurrences}."),
            });
        }
        if old == new {
            return Err(Failure {
                kind: ErrorType::EditNoChange,
                raw: format!(
                    "No changes to apply. The old_string and new_string are identical in file: {given}"
                ),
                display: "No changes to apply. The old_string and new_string are identical.".into(),
            });
        }
        Ok(Edit { before, after, created: false, occurrences, crlf, encoding, fuzzy_lines })
    }

    fn file_name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

fn first_line(s: &str) -> String {
    let line = s.split('\n').next().unwrap_or("");
    let cut: String = line.chars().take(30).collect();
    if s.chars().count() > 30 { format!("{cut}...") } else { cut }
}

fn write(
    target: &EditTarget,
    edit: &Edit,
    seen: &toolbelt_core::ledger::FileLedger,
    gate: &toolbelt_core::commit::CommitGate,
) -> Result<(), String> {
    let text: std::borrow::Cow<'_, str> = if edit.crlf {
        edit.after.replace('\n', "\r\n").into()
    } else {
        edit.after.as_str().into()
    };
    let bytes = encode(&text, edit.encoding).map_err(|c| {
        format!("the file is not UTF-8 (read as Latin-1) and {c:?} cannot be written in that encoding; the file was left unchanged")
    })?;
    target.write(&bytes, gate).map_err(|e| e.to_string())?;
    seen.record(&target.path.real, &bytes);
    Ok(())
}

#[async_trait]
impl Invocation for ReplaceCall {
    fn description(&self) -> String {
        let (old, new) = (&self.p.old_string, &self.p.new_string);
        if old.is_empty() {
            format!("Create {}", self.shown)
        } else if old == new {
            format!("No file changes to {}", self.shown)
        } else {
            format!("{}: {} => {}", self.shown, first_line(old), first_line(new))
        }
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
        // What the file could grow to: every occurrence of old_string replaced (a one-byte
        // old_string and a 60 KB new_string made a 300-byte file 18 MB).
        let size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        let (old, new) = (self.p.old_string.len().max(1) as u64, self.p.new_string.len() as u64);
        let grown = size.saturating_add((size / old).saturating_mul(new.saturating_sub(old)));
        super::turns_for(grown.max(new))
    }

    fn proposal(&self) -> Option<(String, String)> {
        let edit = self.calculate().ok()?;
        Some((edit.before, edit.after))
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        let edit = self.calculate().ok()?;
        Some(ConfirmationDetails::Edit {
            title: format!("Confirm Edit: {}", self.shown),
            file_name: self.file_name(),
            file_path: self.path.display().to_string(),
            file_diff: create_patch(
                &self.file_name(),
                &edit.before,
                &edit.after,
                "Current",
                "Proposed",
            ),
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let this = self.clone();
        let gate = ctx.commit.clone();
        super::off_the_scheduler("replace", &ctx, move || this.run(&gate)).await
    }
}
