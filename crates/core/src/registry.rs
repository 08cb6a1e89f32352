//! The tool registry: built once from a list of tools, read-only afterwards.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::names;
use crate::result::ErrorType;
use crate::schema::ParamValidator;
use crate::tool::{Declaration, Invocation, ModelFamily, Tool, ToolEnv};

/// A registry that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Two tools share this name.
    #[error("tool name {0:?} is registered twice")]
    Duplicate(String),
    /// A tool has an empty name.
    #[error("tool name must not be empty")]
    EmptyName,
}

struct Entry {
    tool: Arc<dyn Tool>,
    validator: OnceLock<ParamValidator>,
}

/// Collects tools; [`RegistryBuilder::build`] refuses duplicate names.
#[derive(Default)]
pub struct RegistryBuilder {
    tools: Vec<Arc<dyn Tool>>,
}

impl RegistryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one tool.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// The registry, or an error for an empty or duplicate name.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let mut by_name = HashMap::with_capacity(self.tools.len());
        let mut entries = Vec::with_capacity(self.tools.len());
        for tool in self.tools {
            let name = tool.name().to_string();
            if name.is_empty() {
                return Err(RegistryError::EmptyName);
            }
            if by_name.insert(name.clone(), entries.len()).is_some() {
                return Err(RegistryError::Duplicate(name));
            }
            entries.push(Entry { tool, validator: OnceLock::new() });
        }
        Ok(Registry { entries, by_name })
    }
}

/// A call that could not be built: the error the model receives.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildError {
    /// The error type the model receives.
    pub kind: ErrorType,
    /// The message the model receives.
    pub message: String,
}

/// A built call: the tool, its invocation, and the arguments after alias renaming.
pub struct Built {
    /// The tool.
    pub tool: Arc<dyn Tool>,
    /// The bound call.
    pub invocation: Box<dyn Invocation>,
    /// The arguments after renaming old parameter names.
    pub args: Value,
}

/// The tools of a session, by name; read-only once built.
pub struct Registry {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// A builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::new()
    }

    /// Looks a tool up by name, then by legacy alias.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.index(name).map(|i| &self.entries[i].tool)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.by_name
            .get(name)
            .copied()
            .or_else(|| self.by_name.get(names::canonical(name)).copied())
    }

    /// Registered names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.tool.name()).collect()
    }

    /// The tools in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|e| &e.tool)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The function declarations for one model family, in registration order.
    pub fn declarations(&self, family: ModelFamily) -> Vec<Declaration> {
        self.entries.iter().map(|e| e.tool.declaration(family)).collect()
    }

    /// The tools a model or client is not shown in `mode`: denied outright by `policy`, or
    /// named by a plain `tools.exclude` entry (`tool(args)` entries narrow a rule instead).
    pub fn hidden_tools(
        &self,
        policy: &crate::policy::PolicyEngine,
        mode: crate::policy::ApprovalMode,
        exclude: &[String],
    ) -> std::collections::HashSet<String> {
        let facts = self.tools().map(|t| crate::policy::sources::ToolFacts {
            name: t.name(),
            server_name: t.server_name(),
            annotations: t.annotations(),
            canonical: t.canonical_name(),
        });
        let mut hidden = policy.excluded_tools(facts, mode);
        hidden.extend(exclude.iter().filter(|e| !e.contains('(')).cloned());
        hidden
    }

    /// Upstream's not-found text with up to three suggestions by edit distance.
    pub fn not_found_message(&self, name: &str) -> String {
        not_found_among(name, self.names())
    }

    /// Renames legacy parameters, validates against the tool's schema (legacy family, as
    /// upstream), then lets the tool check values and bind its parameters.
    pub fn build_call(
        &self,
        name: &str,
        mut args: Value,
        env: &ToolEnv,
    ) -> Result<Built, BuildError> {
        let Some(i) = self.index(name) else {
            return Err(BuildError {
                kind: ErrorType::ToolNotRegistered,
                message: self.not_found_message(name),
            });
        };
        let entry = &self.entries[i];
        let invalid = |message: String| BuildError { kind: ErrorType::InvalidToolParams, message };
        entry.tool.normalize_args(&mut args);
        let validator = entry.validator.get_or_init(|| {
            let schema = entry.tool.accepted_parameters();
            ParamValidator::new(
                schema.unwrap_or_else(|| entry.tool.declaration(ModelFamily::Legacy).parameters),
            )
        });
        validator.validate(&args).map_err(invalid)?;
        let invocation = entry.tool.build(args.clone(), env).map_err(invalid)?;
        Ok(Built { tool: entry.tool.clone(), invocation, args })
    }
}

pub use crate::spelling::levenshtein;

/// `Tool "X" not found.` with up to three suggestions among `candidates` (a front end passes
/// only the tools its client can see).
pub fn not_found_among<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let mut scored: Vec<(usize, &str)> =
        candidates.into_iter().map(|n| (levenshtein(name, n), n)).collect();
    scored.sort_by_key(|(d, _)| *d);
    let top: Vec<String> = scored.iter().take(3).map(|(_, n)| format!("\"{n}\"")).collect();
    let suggestion = match top.len() {
        0 => String::new(),
        1 => format!(" Did you mean {}?", top[0]),
        _ => format!(" Did you mean one of: {}?", top.join(", ")),
    };
    format!("Tool \"{name}\" not found.{suggestion}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{EchoTool, test_env};

    fn registry() -> Registry {
        Registry::builder()
            .tool(Arc::new(EchoTool::named("read_file")))
            .tool(Arc::new(EchoTool::named("grep_search")))
            .tool(Arc::new(EchoTool::named("glob")))
            .tool(Arc::new(EchoTool::named("write_file")))
            .build()
            .unwrap()
    }

    #[test]
    fn duplicate_names_are_an_error() {
        let err = Registry::builder()
            .tool(Arc::new(EchoTool::named("a")))
            .tool(Arc::new(EchoTool::named("a")))
            .build()
            .unwrap_err();
        assert_eq!(err.to_string(), "tool name \"a\" is registered twice");
    }

    #[test]
    fn legacy_alias_finds_grep_search() {
        let r = registry();
        assert_eq!(r.get("search_file_content").unwrap().name(), "grep_search");
        assert!(r.get("nope").is_none());
    }

    #[test]
    fn not_found_suggests_the_three_closest_names() {
        let r = registry();
        assert_eq!(
            r.not_found_message("read_fil"),
            "Tool \"read_fil\" not found. Did you mean one of: \"read_file\", \"write_file\", \"glob\"?"
        );
        let one = Registry::builder().tool(Arc::new(EchoTool::named("glob"))).build().unwrap();
        assert_eq!(one.not_found_message("x"), "Tool \"x\" not found. Did you mean \"glob\"?");
        let none = Registry::builder().build().unwrap();
        assert_eq!(none.not_found_message("x"), "Tool \"x\" not found.");
    }

    #[test]
    fn build_call_validates_and_reports_kinds() {
        let (_d, env) = test_env();
        let r = registry();
        let err = r.build_call("read_file", serde_json::json!({}), &env).err().unwrap();
        assert_eq!(err.kind, ErrorType::InvalidToolParams);
        assert_eq!(err.message, "params must have required property 'text'");
        let err = r.build_call("zzz", serde_json::json!({}), &env).err().unwrap();
        assert_eq!(err.kind, ErrorType::ToolNotRegistered);
        let ok = r.build_call("glob", serde_json::json!({"message": "hi"}), &env).ok().unwrap();
        assert_eq!(ok.args, serde_json::json!({"text": "hi"}), "legacy name renamed");
    }

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
    }
}
