//! `activate_skill`: hands the model one of the session's agent skills (see [`super::skills`]):
//! its instructions and the tree of its folder. A folder outside the workspace joins it for
//! reading, never writing, so the model can open the files the instructions name (a project's
//! own skills are already in a root, and stay as writable as the rest of it).

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::result::{ErrorType, ToolResult};
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv,
};

use super::skills::Skill;
use crate::fs::folder_structure::folder_structure;

pub const NAME: &str = "activate_skill";

/// The tool over the skills found when the session started.
pub struct ActivateSkill {
    skills: Arc<Vec<Skill>>,
}

impl ActivateSkill {
    /// The tool offering `skills` (upstream registers it only when there is one).
    pub fn new(skills: Arc<Vec<Skill>>) -> Self {
        Self { skills }
    }
}

#[derive(serde::Deserialize)]
struct Params {
    name: String,
}

impl Tool for ActivateSkill {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "Activate Skill"
    }
    fn kind(&self) -> Kind {
        Kind::Other
    }

    /// It reads a skill and widens what may be read; it writes nothing.
    fn effects(&self) -> toolbelt_core::kind::Effects {
        toolbelt_core::kind::Effects::of_kind(Kind::Read)
    }

    fn declaration(&self, _family: ModelFamily) -> Declaration {
        let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        let hint = if names.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
            format!(" (Available: {})", quoted.join(", "))
        };
        let name = if names.is_empty() {
            json!({"type": "string", "description": "No skills are available in this session."})
        } else {
            json!({"type": "string", "enum": names, "description": "Which skill to activate."})
        };
        Declaration {
            name: NAME.into(),
            description: include_str!("descriptions/activate_skill.md")
                .trim_end()
                .replace("{hint}", &hint),
            parameters: json!({
                "type": "object",
                "properties": {"name": name},
                "required": ["name"],
                "additionalProperties": false,
                "$schema": "http://json-schema.org/draft-07/schema#"
            }),
        }
    }

    fn build(&self, params: Value, _env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let Params { name } = toolbelt_core::schema::parse_params(params)?;
        // Found in any case, as upstream looks skills up.
        let lower = name.to_lowercase();
        let skill = self.skills.iter().find(|s| s.name.to_lowercase() == lower).cloned();
        Ok(Box::new(ActivateCall { name, skill, all: self.skills.clone(), tree: OnceLock::new() }))
    }
}

struct ActivateCall {
    name: String,
    skill: Option<Skill>,
    all: Arc<Vec<Skill>>,
    /// The folder's tree, drawn once for the confirmation and the result.
    tree: OnceLock<String>,
}

impl ActivateCall {
    fn tree(&self, skill: &Skill) -> String {
        self.tree.get_or_init(|| folder_structure(skill.dir())).clone()
    }
}

#[async_trait]
impl Invocation for ActivateCall {
    fn description(&self) -> String {
        match &self.skill {
            Some(s) => format!("\"{}\": {}", self.name, s.description),
            None => format!("\"{}\" (?) unknown skill", self.name),
        }
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        let skill = self.skill.as_ref()?;
        Some(ConfirmationDetails::Info {
            title: format!("Activate Skill: {}", self.name),
            prompt: format!(
                "You are about to enable the specialized agent skill **{}**.\n\n**Description:**\n{}\n\n**Resources to be shared with the model:**\n{}",
                self.name,
                skill.description,
                self.tree(skill)
            ),
            urls: Vec::new(),
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let Some(skill) = &self.skill else {
            let names: Vec<&str> = self.all.iter().map(|s| s.name.as_str()).collect();
            let message = format!(
                "Skill \"{}\" not found. Available skills are: {}",
                self.name,
                names.join(", ")
            );
            return ToolResult::error(
                ErrorType::InvalidToolParams,
                message.clone(),
                format!("Error: {message}"),
                format!("Error: {message}"),
            );
        };
        let dir = skill.dir();
        if let Some(env) = &ctx.env
            && let Err(e) = env.add_read_only_root(dir)
        {
            return ToolResult::simple_error(
                ErrorType::ExecutionFailed,
                format!("Skill \"{}\" cannot be activated: {e}", self.name),
            );
        }
        let tree = self.tree(skill);
        ToolResult::text(
            format!(
                "<activated_skill name=\"{}\">\n  <instructions>\n    {}\n  </instructions>\n\n  <available_resources>\n    {tree}\n  </available_resources>\n</activated_skill>",
                self.name, skill.body
            ),
            format!(
                "Skill **{}** activated. Resources loaded from `{}`:\n\n{tree}",
                self.name,
                dir.display()
            ),
        )
    }
}
