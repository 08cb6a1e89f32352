//! Generated-input tests (proptest) for the parsers and matchers that take outside input:
//! policy TOML, settings JSON, the shell-command parser behind the policy, and path
//! resolution. Each property runs `TOOLBELT_PROPTEST_CASES` cases (default 1,000).

use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use toolbelt_core::config::Config;
use toolbelt_core::policy::toml::load_str;
use toolbelt_core::policy::{
    ApprovalMode, Decision, PolicyCall, PolicyEngine, Tier, default_rules,
};
use toolbelt_core::settings::{Scope, parse_file};
use toolbelt_core::workspace::{Access, Workspace};

/// Cases per property: 1,000, or `TOOLBELT_PROPTEST_CASES`.
pub fn config() -> ProptestConfig {
    let cases =
        std::env::var("TOOLBELT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// A TOML value of the kinds a policy key may (or may not) hold.
fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_*()\"\\\\.^$|+?\\[\\]{} -]{0,12}".prop_map(|s| format!("{s:?}")),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        prop::collection::vec("[a-z_* ]{0,6}", 0..3).prop_map(|v| format!("{v:?}")),
        Just("{ a = 1 }".to_string()),
        Just("1.5".to_string()),
        Just("\"allow\"".to_string()),
        Just("\"deny\"".to_string()),
        Just("\"ask_user\"".to_string()),
        Just("[\"yolo\", \"plan\"]".to_string()),
        "[^\\n]{0,10}",
    ]
}

const POLICY_KEYS: &[&str] = &[
    "toolName",
    "decision",
    "priority",
    "commandPrefix",
    "commandRegex",
    "argsPattern",
    "modes",
    "interactive",
    "mcpName",
    "toolAnnotations",
    "denyMessage",
    "allowRedirection",
    "subagent",
    "argPattern",
    "",
    "toolname",
];

fn policy_text() -> impl Strategy<Value = String> {
    let line =
        (prop::sample::select(POLICY_KEYS), toml_value()).prop_map(|(k, v)| format!("{k} = {v}"));
    let table = (
        prop::sample::select(&["[[rule]]", "[[safety_checker]]", "[rule]", "[[rule.x]]", ""][..]),
        prop::collection::vec(line, 0..6),
    )
        .prop_map(|(head, lines)| format!("{head}\n{}", lines.join("\n")));
    prop_oneof![prop::collection::vec(table, 0..4).prop_map(|t| t.join("\n\n")), "\\PC{0,200}",]
}

fn settings_value(depth: u32) -> BoxedStrategy<serde_json::Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(|b| json!(b)),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-zA-Z_./*() -]{0,10}".prop_map(|s| json!(s)),
        prop::collection::vec("[a-z_]{0,6}", 0..3).prop_map(|v| json!(v)),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let keys = prop::sample::select(
        &[
            "tools",
            "exclude",
            "allowed",
            "core",
            "sandbox",
            "mcpServers",
            "command",
            "args",
            "hooks",
            "BeforeTool",
            "security",
            "folderTrust",
            "enabled",
            "general",
            "defaultApprovalMode",
            "context",
            "includeDirectories",
            "skills",
            "disabled",
            "toolTimeoutsMs",
            "excludeTools",
            "x",
            "",
        ][..],
    );
    prop_oneof![
        leaf,
        prop::collection::vec((keys, settings_value(depth - 1)), 0..4).prop_map(|kv| {
            serde_json::Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        }),
        prop::collection::vec(settings_value(depth - 1), 0..3).prop_map(serde_json::Value::Array),
    ]
    .boxed()
}

/// Shell text built from words that matter to the policy, operators and quoting.
fn shell_text() -> impl Strategy<Value = String> {
    let word = prop::sample::select(
        &[
            "ls",
            "rm",
            "-rf",
            "echo",
            "cat",
            "bash",
            "sh",
            "-c",
            "env",
            "sudo",
            "git",
            "-C",
            "sed",
            "-n",
            "'1p'",
            "uniq",
            "a.txt",
            "../x",
            "/etc/passwd",
            "|",
            ";",
            "&&",
            "||",
            "&",
            "$(",
            ")",
            "`",
            "'",
            "\"",
            ">",
            ">>",
            "<",
            "<<<",
            "<<EOF",
            "{",
            "}",
            "*",
            "~",
            "$HOME",
            "${x}",
            "$'\\x72m'",
            "x=rm",
            "$x",
            "\\",
            "\n",
            "#",
            "(",
            "!",
            "eval",
            "xargs",
            "find",
            "-exec",
            "{}",
            "\\;",
            "coproc",
            "LD_PRELOAD=x",
            "PATH=.",
            "--",
            "-e",
            "w",
            "out",
        ][..],
    );
    prop_oneof![
        prop::collection::vec(word.clone(), 1..10).prop_map(|w| w.join(" ")),
        prop::collection::vec(word, 1..10).prop_map(|w| w.concat()),
        "\\PC{0,40}",
    ]
}

fn shell_engine(root: &Path) -> PolicyEngine {
    let mut loaded = default_rules();
    let user = load_str(
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"ls\", \"echo\"]\ndecision = \"allow\"\npriority = 100\n\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 200\n",
        Tier::User,
        "shell.toml",
        None,
    );
    loaded.extend(user);
    PolicyEngine::new(loaded.rules, true).with_workspace(root.to_path_buf())
}

fn decide(e: &PolicyEngine, command: &str, mode: ApprovalMode) -> Decision {
    let args = json!({ "command": command });
    e.check(
        &PolicyCall {
            name: "run_shell_command",
            args: &args,
            server_name: None,
            annotations: None,
            canonical: None,
        },
        mode,
    )
    .decision
}

proptest! {
    #![proptest_config(config())]

    /// A policy file never panics the loader; what it cannot use is an error naming the file
    /// and, when known, a line inside it.
    #[test]
    fn policy_files_load_or_name_the_problem(text in policy_text()) {
        let loaded = load_str(&text, Tier::User, "gen.toml", None);
        let lines = text.lines().count().max(1);
        for e in &loaded.errors {
            prop_assert_eq!(&e.file, "gen.toml");
            prop_assert!(!e.message.is_empty());
            if let Some(l) = e.line {
                prop_assert!(l >= 1 && l <= lines + 1, "line {} of {}: {}", l, lines, e.message);
            }
        }
    }

    /// Settings text never panics the parser; a bad file names the file and a line.
    #[test]
    fn settings_files_parse_or_name_the_problem(
        value in settings_value(4),
        noise in "\\PC{0,30}",
        comment in any::<bool>(),
        garbage in any::<bool>(),
    ) {
        let mut text = serde_json::to_string_pretty(&value).unwrap();
        if comment { text = format!("// settings\n{text}"); }
        if garbage { text.push_str(&noise); }
        let path = Path::new("/gen/settings.json");
        if let Err(e) = parse_file(&text, path, Scope::User) {
            prop_assert_eq!(e.path.as_path(), path);
            prop_assert!(!e.message.is_empty());
            if let Some(l) = e.line {
                prop_assert!(l >= 1 && l <= text.lines().count().max(1) + 1, "line {}: {}", l, e.message);
            }
        }
    }

    /// The shell policy never panics, and a command the parser cannot read is never allowed
    /// without asking (an allow rule for `ls` and `echo` notwithstanding); in yolo mode, with a
    /// deny rule for shell commands, it is denied.
    #[test]
    fn unparsable_commands_are_never_allowed_unasked(command in shell_text()) {
        let dir = tempfile::tempdir().unwrap();
        let e = shell_engine(dir.path());
        let decision = decide(&e, &command, ApprovalMode::Default);
        let unreadable = toolbelt_core::shell::parse::parse_command(&command)
            .is_none_or(|p| p.has_error);
        if unreadable && !command.trim().is_empty() {
            prop_assert_ne!(decision, Decision::Allow, "{:?}", command);
            prop_assert_eq!(decide(&e, &command, ApprovalMode::Yolo), Decision::Deny, "{:?}", command);
        }
    }
}

/// A fixed tree: a root with folders, links inside and links out, and a secret outside.
struct Tree {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    ws: Workspace,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    std::fs::write(root.join("a/file"), "f").unwrap();
    std::fs::write(root.join(".env"), "k").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(&outside, root.join("out")).unwrap();
        symlink("../outside/secret", root.join("a/rel_out")).unwrap();
        symlink("b", root.join("a/in")).unwrap();
        symlink(".", root.join("a/b/loop")).unwrap();
        symlink("../..", root.join("a/b/up")).unwrap();
        symlink(root.join(".env"), root.join("a/env_link")).unwrap();
    }
    let cfg = Config { home_dir: base.join("home"), ..Config::default() };
    let ws = Workspace::new(std::slice::from_ref(&root), &cfg).unwrap();
    Tree { _dir: dir, root, outside, ws }
}

fn path_text() -> impl Strategy<Value = String> {
    let part = prop::sample::select(
        &[
            ".", "..", "a", "b", "file", "out", "rel_out", "in", "loop", "up", "secret", "outside",
            "root", ".env", "env_link", "", "%2e%2e", "@a", "x",
        ][..],
    );
    (any::<bool>(), prop::collection::vec(part, 0..8)).prop_map(|(abs, parts)| {
        let rel = parts.join("/");
        if abs { format!("/{rel}") } else { rel }
    })
}

thread_local! {
    static TREE: Tree = tree();
}

proptest! {
    #![proptest_config(config())]

    /// Whatever path a model sends, what resolves and opens lies beneath the root (or the
    /// temp folder), and never is a sensitive file.
    #[test]
    fn resolved_and_opened_paths_stay_beneath_the_root(raw in path_text(), absolute_root in any::<bool>()) {
        TREE.with(|t| {
            let raw = if absolute_root && !raw.starts_with('/') {
                format!("{}/{raw}", t.root.display())
            } else {
                raw
            };
            if let Ok(p) = t.ws.resolve_checked(&raw, Access::Read) {
                prop_assert!(p.real.starts_with(&t.root) || p.real.starts_with(t.ws.temp_dir()), "{} -> {}", raw, p.real.display());
                prop_assert!(!p.real.starts_with(&t.outside));
                #[cfg(unix)]
                if let Ok(f) = t.ws.open_read(&p) {
                    use std::os::fd::AsRawFd;
                    let real = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap();
                    prop_assert!(real.starts_with(&t.root), "{} opened {}", raw, real.display());
                    prop_assert!(!real.ends_with(".env"), "{} opened {}", raw, real.display());
                }
            }
            Ok(())
        })?;
    }
}
