//! `save_memory` (upstream's legacy memory tool): adds a fact under `## Gemini Added Memories`
//! in the global context file, or as a bullet in the project's memory file.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv,
};

use crate::edit::atomic_write;

pub const NAME: &str = "save_memory";
pub const SECTION: &str = "## Gemini Added Memories";

pub struct SaveMemory;

impl Tool for SaveMemory {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "SaveMemory"
    }
    fn kind(&self) -> Kind {
        Kind::Think
    }

    /// It appends to the global memory file (`~/.gemini/GEMINI.md`), which every later session
    /// reads: a write, never read-only.
    fn effects(&self) -> toolbelt_core::kind::Effects {
        toolbelt_core::kind::Effects {
            writes: true,
            destroys: false,
            idempotent: false,
            open_world: false,
        }
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/save_memory.md").trim_end().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "fact": {"type": "string", "description": "The fact or preference to remember, as one clear, self-contained sentence."},
                    "scope": {"type": "string", "enum": ["global", "project"], "description": "Where to keep it: 'global' (all of the user's projects; the default) or 'project' (this project only)."}
                },
                "required": ["fact"],
                "additionalProperties": false
            }),
        }
    }

    /// Older versions called the fact `content`.
    fn normalize_args(&self, args: &mut Value) {
        toolbelt_core::schema::rename_params(args, &[("content", "fact")]);
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let Params { fact, scope } = toolbelt_core::schema::parse_params(params)?;
        let fact = sanitize(&fact);
        if fact.is_empty() {
            return Err("Parameter \"fact\" must be a non-empty string.".into());
        }
        let project = scope.as_deref() == Some("project");
        let path = if project {
            env.workspace.temp_dir().join("memory").join("MEMORY.md")
        } else {
            env.config.memory_file.clone()
        };
        Ok(Box::new(SaveMemoryCall { fact, path, project }))
    }
}

/// Upstream's clean-up: line breaks to spaces, leading dashes removed, `<` `>` blanked. Every
/// character that breaks a line for someone (vertical tab, form feed, NEL, the Unicode line and
/// paragraph separators) is a line break here, not only CR and LF: a fact stays one line of the
/// memories list whoever reads the file.
pub fn sanitize(fact: &str) -> String {
    let one_line =
        fact.replace(['\r', '\n', '\u{0b}', '\u{0c}', '\u{85}', '\u{2028}', '\u{2029}'], " ");
    let mut s = one_line.trim();
    loop {
        let stripped = s.trim_start_matches('-');
        if stripped.len() == s.len() {
            break;
        }
        s = stripped.trim_start();
    }
    s.trim().replace(['<', '>'], " ")
}

/// The global file with the fact added to its memories section.
pub fn add_to_section(content: &str, fact: &str) -> String {
    let entry = format!("- {fact}");
    match content.find(SECTION) {
        None => {
            let sep = if content.is_empty() || content.ends_with("\n\n") {
                ""
            } else if content.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            format!("{content}{sep}{SECTION}\n{entry}\n")
        }
        Some(start) => {
            // As upstream: the item becomes the section's last line; the text is then trimmed
            // to end with exactly one newline.
            let body_start = start + SECTION.len();
            let end = content[body_start..].find("\n## ").map_or(content.len(), |i| body_start + i);
            let before = content[..body_start].trim_end();
            let section = format!("{}\n{entry}", content[body_start..end].trim_end());
            let after = &content[end..];
            format!("{before}\n{}\n{after}", section.trim_start()).trim_end().to_string() + "\n"
        }
    }
}

/// The project file with the fact appended as a bullet.
pub fn add_bullet(content: &str, fact: &str) -> String {
    let sep = if content.is_empty() || content.ends_with('\n') { "" } else { "\n" };
    format!("{content}{sep}- {fact}\n")
}

#[derive(serde::Deserialize)]
struct Params {
    fact: String,
    scope: Option<String>,
}

struct SaveMemoryCall {
    fact: String,
    path: PathBuf,
    project: bool,
}

impl SaveMemoryCall {
    fn proposed(&self) -> std::io::Result<(String, String)> {
        let current = match std::fs::read_to_string(&self.path) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let next = if self.project {
            add_bullet(&current, &self.fact)
        } else {
            add_to_section(&current, &self.fact)
        };
        Ok((current, next))
    }
}

fn shown(path: &Path) -> String {
    match toolbelt_core::files::user_home() {
        Some(home) if path.starts_with(&home) => {
            format!("~/{}", path.strip_prefix(&home).unwrap_or(path).display())
        }
        _ => path.display().to_string(),
    }
}

#[async_trait]
impl Invocation for SaveMemoryCall {
    fn description(&self) -> String {
        format!("in {}", shown(&self.path))
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        let (current, next) = self.proposed().ok()?;
        let name =
            self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Some(ConfirmationDetails::Edit {
            title: format!("Confirm Memory Save: {}", shown(&self.path)),
            file_diff: crate::edit::create_patch(&name, &current, &next, "Current", "Proposed"),
            file_name: name,
            file_path: self.path.display().to_string(),
        })
    }

    async fn execute(&self, _ctx: ExecContext) -> ToolResult {
        let written = self.proposed().and_then(|(_, next)| {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            atomic_write(&self.path, next.as_bytes())
        });
        match written {
            Ok(()) => {
                let message = format!("Okay, I've remembered that: \"{}\"", self.fact);
                ToolResult::text(json!({"success": true, "message": message}).to_string(), message)
            }
            Err(e) => {
                let msg = format!("{}: {e}", self.path.display());
                ToolResult::error(
                    ErrorType::MemoryToolExecutionError,
                    format!("Failed to save memory. Detail: {msg}"),
                    json!({"success": false, "error": format!("Failed to save memory. Detail: {msg}")}).to_string(),
                    format!("Error saving memory: {msg}"),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_cleaned_as_upstream() {
        assert_eq!(sanitize("  - -- keep <this>\nshort "), "keep  this  short");
        assert_eq!(sanitize("---"), "");
        // Issue 50 review: these reached GEMINI.md as they were.
        assert_eq!(
            sanitize("a\u{2028}## Rules\u{2029}b\u{85}c\u{0b}d\u{0c}e"),
            "a ## Rules b c d e"
        );
    }

    #[test]
    fn the_section_is_created_or_extended() {
        assert_eq!(add_to_section("", "a"), "## Gemini Added Memories\n- a\n");
        assert_eq!(add_to_section("# Notes", "a"), "# Notes\n\n## Gemini Added Memories\n- a\n");
        assert_eq!(add_to_section("# Notes\n", "a"), "# Notes\n\n## Gemini Added Memories\n- a\n");
        assert_eq!(
            add_to_section("# Notes\n\n", "a"),
            "# Notes\n\n## Gemini Added Memories\n- a\n"
        );
        let two = add_to_section("## Gemini Added Memories\n- a\n", "b");
        assert_eq!(two, "## Gemini Added Memories\n- a\n- b\n");
        let middle = add_to_section("## Gemini Added Memories\n- a\n\n## Other\ntext\n\n", "b");
        assert_eq!(middle, "## Gemini Added Memories\n- a\n- b\n\n## Other\ntext\n");
        assert_eq!(add_bullet("- a", "b"), "- a\n- b\n");
        assert_eq!(add_bullet("", "b"), "- b\n");
    }
}
