//! Tests of git's judgement: configuration that names programs.

use super::*;

/// Issue 46 (G9): every key of the list, in a repository's config, is judged as naming a
/// program, in any case and under a subsection.
#[test]
fn every_program_key_is_judged() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("config");
    for (section, key) in PROGRAM_KEYS {
        for text in [
            format!("[{section}]\n\t{key} = ./evil.sh\n"),
            format!("[{section} \"Sub\"]\n\t{} = ./evil.sh\n", key.to_uppercase()),
        ] {
            std::fs::write(&f, &text).unwrap();
            assert!(config_runs_programs(&f), "{text:?}");
        }
    }
    for section in PROGRAM_SECTIONS {
        std::fs::write(&f, format!("[{section} \"x\"]\n\tanything = y\n")).unwrap();
        assert!(config_runs_programs(&f), "{section}");
    }
    for (section, key) in
        [("remote", "url"), ("remote", "fetch"), ("core", "bare"), ("user", "name")]
    {
        std::fs::write(&f, format!("[{section}]\n\t{key} = x\n")).unwrap();
        assert!(!config_runs_programs(&f), "{section}.{key}");
    }
}

/// Issue 34: a tab before `=` on the header's line, or a byte-order mark, hid
/// `diff.external` from the check; git reads both.
#[test]
fn every_spelling_git_reads_is_judged() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("config");
    for text in [
        "[diff]\n\texternal = ./evil.sh\n",
        "[diff] external\t= ./evil.sh\n",
        "\u{feff}[diff]\n\texternal = ./evil.sh\n",
        "[DIFF]\n\tExternal=./evil.sh\n",
        "[diff \"x\"]\n\ttextconv = ./evil.sh\n",
        "[diff.x]\n\ttextconv = ./evil.sh\n",
        "[filter \"lfs\"]\n\tclean = ./evil.sh\n",
        "[include]\n\tpath = other\n",
        "[includeIf \"gitdir:/\"]\n\tpath = other\n",
        "[core]\n\tworktree = /etc\n",
        "[gpg]\n\tprogram = ./evil.sh\n",
        "[core]\r\n\tfsmonitor = ./evil.sh\r\n",
    ] {
        std::fs::write(&f, text).unwrap();
        assert!(config_runs_programs(&f), "{text:?}");
    }
    for text in ["[core]\n\tbare = false\n", "[user]\n\tname = x\n", "# [diff] external = x\n"] {
        std::fs::write(&f, text).unwrap();
        assert!(!config_runs_programs(&f), "{text:?}");
    }
}
