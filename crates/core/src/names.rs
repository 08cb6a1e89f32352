//! Names the engine and its policy share with the tools: a leaf module (it imports nothing),
//! so that `tool`, `registry` and `policy` can all read it without depending on each other.

/// Names models trained on older versions still call (`search_file_content` is `grep_search`).
pub const LEGACY_ALIASES: &[(&str, &str)] =
    &[("search_file_content", "grep_search"), ("smart-edit", "replace")];

/// The prefix of every MCP tool's name: `mcp_<server>_<tool>`.
pub const MCP_PREFIX: &str = "mcp_";

/// The names policy rules use for the shell tool (upstream's current and legacy names): rules
/// for them match commands (`commandPrefix`, `commandRegex`) rather than arguments alone.
pub const SHELL_TOOL_NAMES: &[&str] = &["run_shell_command", "ShellTool"];

/// The names settings lists (`tools.allowed`, `tools.confirmationRequired`) accept for the
/// shell tool.
pub const SHELL_SETTING_NAMES: &[&str] = &["run_shell_command", "ShellTool", "Shell"];

/// The argument upstream adds to every declaration (gemini-3 family): `true` makes a call wait
/// until every earlier call of its turn has finished.
pub const WAIT_FOR_PREVIOUS: &str = "wait_for_previous";

/// The current name for a legacy alias, or `name` itself.
pub fn canonical(name: &str) -> &str {
    LEGACY_ALIASES.iter().find(|(old, _)| *old == name).map_or(name, |(_, new)| new)
}

/// Whether `name` is an MCP tool's qualified name.
pub fn is_mcp(name: &str) -> bool {
    name.starts_with(MCP_PREFIX)
}

/// `mcp_<server>_<tool>` (no sanitising: see the MCP client's naming for that).
pub fn mcp_tool(server: &str, tool: &str) -> String {
    format!("{MCP_PREFIX}{server}_{tool}")
}

/// The policy wildcard for every tool of one server: `mcp_<server>_*`.
pub fn mcp_server_wildcard(server: &str) -> String {
    format!("{MCP_PREFIX}{server}_*")
}

/// The policy wildcard for every MCP tool: `mcp_*`.
pub const MCP_WILDCARD: &str = "mcp_*";

/// Gemini CLI's class names of its built-in tools, and the tools they name: upstream's
/// registry also leaves out a tool whose class name is in `tools.exclude` (`ShellTool`).
pub const CLASS_NAMES: &[(&str, &str)] = &[
    ("ReadFileTool", "read_file"),
    ("WriteFileTool", "write_file"),
    ("EditTool", "replace"),
    ("GlobTool", "glob"),
    ("GrepTool", "grep_search"),
    ("RipGrepTool", "grep_search"),
    ("LSTool", "list_directory"),
    ("ReadManyFilesTool", "read_many_files"),
    ("ShellTool", "run_shell_command"),
    ("WebFetchTool", "web_fetch"),
    ("WebSearchTool", "google_web_search"),
    ("MemoryTool", "save_memory"),
    ("WriteTodosTool", "write_todos"),
    ("AskUserTool", "ask_user"),
    ("EnterPlanModeTool", "enter_plan_mode"),
    ("ExitPlanModeTool", "exit_plan_mode"),
    ("ListBackgroundProcessesTool", "list_background_processes"),
    ("ReadBackgroundOutputTool", "read_background_output"),
    ("ActivateSkillTool", "activate_skill"),
    ("UpdateTopicTool", "update_topic"),
];

/// The tool a class name names, if it is one.
pub fn tool_of_class(name: &str) -> Option<&'static str> {
    CLASS_NAMES.iter().find(|(c, _)| *c == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_mcp_names() {
        assert_eq!(canonical("search_file_content"), "grep_search");
        assert_eq!(canonical("read_file"), "read_file");
        assert_eq!(mcp_tool("gh", "issues"), "mcp_gh_issues");
        assert_eq!(mcp_server_wildcard("gh"), "mcp_gh_*");
        assert!(is_mcp("mcp_gh_issues") && !is_mcp("read_file"));
    }
}
