/// The keys a `[[rule]]` table may hold (`name` is toolbelt's label; `safety_checker`
/// sub-tables appear in upstream's bundled files, and upstream ignores them too).
const RULE_KEYS: &[&str] = &[
    "name",
    "toolName",
    "mcpName",
    "subagent",
    "argsPattern",
    "commandPrefix",
    "commandRegex",
    "decision",
    "priority",
    "modes",
    "interactive",
    "toolAnnotations",
    "allowRedirection",
    "allow_redirection",
    "denyMessage",
    "deny_message",
    "safety_checker",
];
