//! Slash commands: what a person types as `/name …` at the start of a prompt, handled by
//! toolbelt itself, not sent to the model. The editor is told of them
//! (`available_commands_update`) and `toolbelt run` takes them too. A `/word` that is not a
//! command (a path, say) goes to the model as it is.

use toolbelt_core::tool::Declaration;
use toolbelt_mcp::client::{McpClients, ServerState};

/// Each command: its name, what it does, and the hint for what follows it.
pub const COMMANDS: &[(&str, &str, Option<&str>)] = &[
    ("help", "List these commands", None),
    (
        "memory",
        "Show the context memory (GEMINI.md files), add a fact to it, or read the files again",
        Some("show | add <fact> | refresh"),
    ),
    ("init", "Study this project and write a GEMINI.md for it", None),
    ("tools", "List the tools the model is offered now", None),
    ("mcp", "List the MCP servers, their state and their tools", None),
    ("compress", "Replace the conversation with a summary of it, to make room", None),
    ("about", "toolbelt's version, the model, the sign-in and the sandbox", None),
];

/// A parsed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    MemoryShow,
    MemoryAdd(String),
    MemoryRefresh,
    Init,
    Tools,
    Mcp,
    Compress,
    About,
}

/// `text` as a command: `None` when it is not one (it goes to the model); `Err` for a known
/// command used wrongly, saying how to use it.
pub fn parse(text: &str) -> Option<Result<Command, String>> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest.trim_end(), ""),
    };
    let simple = |c: Command| {
        if args.is_empty() { Ok(c) } else { Err(format!("/{name} takes nothing after it")) }
    };
    Some(match name {
        "help" => simple(Command::Help),
        "init" => simple(Command::Init),
        "tools" => simple(Command::Tools),
        "mcp" => simple(Command::Mcp),
        "compress" => simple(Command::Compress),
        "about" => simple(Command::About),
        "memory" => {
            let (verb, fact) = match args.split_once(char::is_whitespace) {
                Some((v, f)) => (v, f.trim()),
                None => (args, ""),
            };
            match (verb, fact) {
                ("" | "show", "") => Ok(Command::MemoryShow),
                ("refresh", "") => Ok(Command::MemoryRefresh),
                ("add", "") => {
                    Err("/memory add needs the fact to remember: /memory add <fact>".into())
                }
                ("add", f) => Ok(Command::MemoryAdd(f.to_string())),
                _ => Err("/memory takes show, add <fact> or refresh".into()),
            }
        }
        _ => return None,
    })
}

/// `/help`.
pub fn help_text() -> String {
    let mut s = String::from("Commands (handled by toolbelt, not sent to the model):\n");
    for (name, about, hint) in COMMANDS {
        match hint {
            Some(h) => s.push_str(&format!("- /{name} {h}: {about}\n")),
            None => s.push_str(&format!("- /{name}: {about}\n")),
        }
    }
    s.push_str("Anything else is sent to the model.");
    s
}

/// `/tools`: the tools the session offers the model now (in its mode, for a model of
/// `family`), each with the first sentence of its description.
pub fn tools_text(
    session: &toolbelt_session::Session,
    family: toolbelt_core::ModelFamily,
) -> String {
    let excluded = session.excluded_tools(session.scheduler().mode());
    let offered: Vec<Declaration> = session
        .registry
        .declarations(family)
        .into_iter()
        .filter(|d| !excluded.contains(&d.name))
        .collect();
    let mut s = format!("{} tool(s) offered to the model:\n", offered.len());
    for d in &offered {
        let first = d.description.lines().next().unwrap_or("").trim();
        let first = match first.find(". ") {
            Some(i) => &first[..=i],
            None => first,
        };
        s.push_str(&format!("- {}: {first}\n", d.name));
    }
    s.trim_end().to_string()
}

/// `/memory show`: the context files' text in the system prompt.
pub fn memory_text(context: Option<&str>) -> String {
    match context {
        Some(c) => format!("The context memory (from the context files):\n\n{c}"),
        None => "No context files are loaded: write a GEMINI.md in the project (/init) or in ~/.gemini, or add a fact with /memory add <fact>.".into(),
    }
}

/// `/mcp`.
pub fn mcp_text(clients: Option<&McpClients>) -> String {
    let servers = clients.map(|c| c.servers.as_slice()).unwrap_or_default();
    if servers.is_empty() {
        return "No MCP servers are configured (mcpServers in settings.json, or the editor's own)."
            .into();
    }
    let mut s = String::new();
    for (name, state) in servers {
        match state {
            ServerState::Connected { tools, dropped } => {
                s.push_str(&format!("- {name}: connected, {} tool(s)", tools.len()));
                if !tools.is_empty() {
                    s.push_str(&format!(": {}", tools.join(", ")));
                }
                for (tool, why) in dropped {
                    s.push_str(&format!("\n  - {tool} left out: {why}"));
                }
                s.push('\n');
            }
            ServerState::Failed(why) => s.push_str(&format!(
                "- {name}: failed: {}\n",
                toolbelt_core::url_secrets::without_url_secrets(why)
            )),
        }
    }
    s.trim_end().to_string()
}

/// `/init`: `Ok` with what the model is asked for, or `Err` with the answer when the
/// project's context file (the first configured name, `GEMINI.md` by default) exists already.
pub fn init(session: &toolbelt_session::Session) -> Result<&'static str, String> {
    let name = session.tool_settings.context_file_names.first().map_or("GEMINI.md", String::as_str);
    let path = session.root.join(name);
    if path.exists() {
        return Err(format!(
            "{} exists already; edit it, or ask the model to improve it.",
            path.display()
        ));
    }
    Ok("Study this project and write a GEMINI.md file at its top folder for a coding agent \
        that will work in it later. Explore first: list the top folder, read the README, the \
        build and package files, the CI configuration and a few central source files. Then \
        write GEMINI.md with: what the project is and does; how to build, run, test and lint \
        it (the exact commands); how the code is laid out; the conventions the code follows \
        (style, naming, error handling, testing); and anything an agent must not do. Keep it \
        factual and short, and do not invent what you did not see.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_other_slashes_go_to_the_model() {
        assert_eq!(parse("/help"), Some(Ok(Command::Help)));
        assert_eq!(parse("  /tools  "), Some(Ok(Command::Tools)));
        assert_eq!(parse("/memory"), Some(Ok(Command::MemoryShow)));
        assert_eq!(parse("/memory show"), Some(Ok(Command::MemoryShow)));
        assert_eq!(parse("/memory refresh"), Some(Ok(Command::MemoryRefresh)));
        assert_eq!(
            parse("/memory add  I prefer tabs "),
            Some(Ok(Command::MemoryAdd("I prefer tabs".into())))
        );
        assert!(parse("/memory add").unwrap().unwrap_err().contains("/memory add <fact>"));
        assert!(parse("/memory forget x").unwrap().is_err());
        assert!(parse("/help me").unwrap().unwrap_err().contains("takes nothing"));
        assert_eq!(parse("/usr/bin/env is broken"), None);
        assert_eq!(parse("what does /help do"), None);
        assert_eq!(parse("/unknown"), None);
        let help = help_text();
        for (name, ..) in COMMANDS {
            assert!(help.contains(&format!("- /{name}")), "{name}");
        }
    }

    #[test]
    fn mcp_states_are_listed() {
        assert!(mcp_text(None).starts_with("No MCP servers"));
        let clients = McpClients {
            tools: Vec::new(),
            servers: vec![
                (
                    "docs".into(),
                    ServerState::Connected {
                        tools: vec!["search".into()],
                        dropped: vec![("bad".into(), "no schema".into())],
                    },
                ),
                ("db".into(), ServerState::Failed("connection refused".into())),
                (
                    "web".into(),
                    ServerState::Failed(
                        "cannot reach http://127.0.0.1:1/mcp?key=TOPSECRET: refused".into(),
                    ),
                ),
            ],
        };
        assert_eq!(
            mcp_text(Some(&clients)),
            "- docs: connected, 1 tool(s): search\n  - bad left out: no schema\n- db: failed: connection refused\n- web: failed: cannot reach http://127.0.0.1:1/mcp?…: refused"
        );
    }
}
