//! `toolbelt call`'s common command lines read without clap: building clap's definition and
//! parsing with it was a twentieth of a small call's start-up (issue 37). Only the plain
//! forms are read here — long options (`--root DIR`, `--root=DIR`), each flag once, the tool
//! and its JSON; anything else (help, a short option, `--`, `-`, a repeated flag, a value that
//! clap would refuse or read differently) returns `None`, and clap parses the line as ever,
//! so what a mistake prints does not change. The tests check that both read every line
//! alike.

use std::ffi::OsString;
use std::path::PathBuf;

use toolbelt_core::ModelFamily;

use super::{CallArgs, SessionArgs};

/// `args` are the words after `call`.
pub(super) fn parse(args: &[OsString]) -> Option<CallArgs> {
    let mut call = CallArgs {
        tool: String::new(),
        args: "{}".into(),
        json: false,
        raw: false,
        timeout_ms: None,
        model_family: ModelFamily::Legacy,
        allow_sensitive: Vec::new(),
        events: false,
        keep_background: false,
        pty: false,
        session: SessionArgs {
            approval_mode: None,
            roots: Vec::new(),
            policies: Vec::new(),
            non_interactive: false,
            interactive: false,
            sandbox: false,
        },
    };
    let (mut positional, mut seen) = (0, Vec::new());
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let word = word.to_str()?;
        if word.is_empty() || word == "-" || word.starts_with('-') && !word.starts_with("--") {
            return None;
        }
        let Some(option) = word.strip_prefix("--") else {
            match positional {
                0 => call.tool = word.to_string(),
                1 => call.args = word.to_string(),
                _ => return None,
            }
            positional += 1;
            continue;
        };
        let (name, inline) = match option.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (option, None),
        };
        // A flag given twice is an error for clap; an option repeated collects its values.
        let repeatable = matches!(name, "root" | "policy" | "allow-sensitive");
        if !repeatable {
            if seen.contains(&name) {
                return None;
            }
            seen.push(name);
        }
        let flag = match name {
            "json" => &mut call.json,
            "raw" => &mut call.raw,
            "events" => &mut call.events,
            "keep-background" => &mut call.keep_background,
            "pty" => &mut call.pty,
            "non-interactive" => &mut call.session.non_interactive,
            "interactive" => &mut call.session.interactive,
            "sandbox" => &mut call.session.sandbox,
            _ => {
                let value = match inline {
                    Some(v) => v,
                    None => words.next()?.to_str()?,
                };
                if value.is_empty() || value.starts_with('-') {
                    return None;
                }
                match name {
                    "root" => call.session.roots.push(PathBuf::from(value)),
                    "policy" => call.session.policies.push(PathBuf::from(value)),
                    "allow-sensitive" => call.allow_sensitive.push(value.to_string()),
                    "timeout-ms"
                        if value.len() <= 18 && value.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        call.timeout_ms = Some(value.parse().ok()?);
                    }
                    "model-family" if super::MODEL_FAMILIES.contains(&value) => {
                        call.model_family = ModelFamily::parse(value)?;
                    }
                    "approval-mode" => {
                        call.session.approval_mode = Some(super::approval_mode_named(value)?);
                    }
                    _ => return None,
                }
                continue;
            }
        };
        if inline.is_some() {
            return None;
        }
        *flag = true;
    }
    let conflict =
        call.json && call.raw || call.session.non_interactive && call.session.interactive;
    (positional > 0 && !conflict).then_some(call)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args as _, FromArgMatches as _};
    use toolbelt_core::policy::ApprovalMode;

    fn words(line: &[&str]) -> Vec<OsString> {
        line.iter().map(OsString::from).collect()
    }

    /// What clap makes of `call LINE`, or `None` where it refuses it.
    fn clap_reading(line: &[&str]) -> Option<CallArgs> {
        let cmd = CallArgs::augment_args(clap::Command::default().name("call"));
        let mut argv = words(&["call"]);
        argv.extend(words(line));
        let matches = cmd.try_get_matches_from(argv).ok()?;
        CallArgs::from_arg_matches(&matches).ok()
    }

    /// Every line read here is read so by clap; lines clap refuses are left to it.
    #[test]
    fn the_lines_read_here_are_read_alike_by_clap() {
        let read_here: &[&[&str]] = &[
            &["read_file", r#"{"file_path":"a.txt"}"#],
            &["--root", "/tmp/x", "read_file", "{}"],
            &["--root=/tmp/x", "--root", "y", "glob", r#"{"pattern":"*"}"#],
            &["read_file"],
            &["--json", "--timeout-ms", "3000", "run_shell_command", r#"{"command":"ls"}"#],
            &["--timeout-ms=0", "--raw", "--events", "--keep-background", "--pty", "x"],
            &["--model-family", "gemini-3", "--approval-mode", "auto-edit", "x"],
            &["--approval-mode=autoEdit", "--model-family=legacy", "x", "{}"],
            &["--approval-mode", "auto_edit", "--non-interactive", "--sandbox", "x"],
            &["--interactive", "--approval-mode", "yolo", "--policy", "p.toml", "x"],
            &["--allow-sensitive", "**/.env", "--allow-sensitive=*.pem", "x", "{}"],
            &["x", "{}", "--json"],
            &["--approval-mode", "plan", "x", "--root", "r"],
            &["--approval-mode", "default", "x"],
        ];
        for line in read_here {
            let here = parse(&words(line));
            assert!(here.is_some(), "{line:?} should be read here");
            assert_eq!(format!("{here:?}"), format!("{:?}", clap_reading(line)), "{line:?}");
        }
        // Every spelling names its own mode (both readers share the table, so check it too):
        // auto-edit is auto_edit, never the default and never yolo.
        for (spelling, mode) in [
            ("default", ApprovalMode::Default),
            ("auto_edit", ApprovalMode::AutoEdit),
            ("auto-edit", ApprovalMode::AutoEdit),
            ("autoEdit", ApprovalMode::AutoEdit),
            ("yolo", ApprovalMode::Yolo),
            ("plan", ApprovalMode::Plan),
        ] {
            let line = ["--approval-mode", spelling, "x"];
            assert_eq!(clap_reading(&line).and_then(|c| c.session.approval_mode), Some(mode));
        }
        let left_to_clap: &[&[&str]] = &[
            &[],
            &["--help"],
            &["-s", "x"],
            &["x", "-"],
            &["--", "x"],
            &["--json", "--json", "x"],
            &["--json", "--raw", "x"],
            &["--interactive", "--non-interactive", "x"],
            &["--timeout-ms", "abc", "x"],
            &["--timeout-ms", "+5", "x"],
            &["--timeout-ms", "99999999999999999999", "x"],
            &["--approval-mode", "YOLO", "x"],
            // A mode given twice, empty, or swallowing the next option: clap decides.
            &["--approval-mode", "yolo", "--approval-mode=default", "x"],
            &["--approval-mode=", "yolo", "x"],
            &["--approval-mode", "--json", "yolo", "x"],
            &["--approval-mode=auto edit", "x"],
            &["--model-family", "gemini-2", "x"],
            &["--root"],
            &["--root", "--json", "x"],
            &["--json=true", "x"],
            &["--unknown", "x"],
            &["a", "b", "c"],
            &["x", ""],
        ];
        for line in left_to_clap {
            assert!(parse(&words(line)).is_none(), "{line:?} should be left to clap");
        }
    }
}
