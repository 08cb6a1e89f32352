//! Which files' contents a read-only git command can print (issue 46, G8): `git diff`, `git
//! show`, `git log -p` print the contents of whatever files their commits or changes touch,
//! and a tracked `.env` came out of them unasked while `cat .env` asked. A command is known
//! safe only where what it can print is known to hold no file the file tools refuse:
//!
//! - limited by paths (`git log -p -- src/a.rs`, `git show HEAD:src/a.rs`, `-L1,5:src/a.rs`),
//!   each a plain file name that may be read;
//! - or `git diff` of the work tree or the index (no revision named), in a repository whose
//!   index lists no sensitive file (read from `.git/index`, whose names are what it can show);
//! - history (a revision, `git show`, `git log -p` without paths) can hold any file ever
//!   committed: it asks. So does an object id given to `git show` (a blob prints whole).

use std::path::{Path, PathBuf};

use super::Place;

/// Whether the read-only git subcommand `sub` with the words `rest` (after it) prints only
/// contents known to be readable, judged from `at` (where git runs).
pub(super) fn bounded(sub: &str, rest: &[String], at: Place<'_>) -> bool {
    let shape = Shape::of(rest, at.cwd);
    let prints = match sub {
        "diff" => !shape.names_only,
        "show" | "cat-file" => !shape.names_only || shape.object_ids,
        "log" | "whatchanged" => shape.patches,
        // Searches print lines of every file they read; `blame` and `archive` whole files.
        "grep" | "blame" | "archive" | "format-patch" => true,
        _ => false,
    };
    if !prints {
        return true;
    }
    if matches!(sub, "show" | "cat-file") && shape.object_ids {
        return false;
    }
    if shape.line_ranges || !shape.paths.is_empty() {
        // `git log -L` shows the ranges it names; paths limit everything else.
        return shape.paths.iter().all(|p| plain_file(p, at)) && !shape.unplain_paths;
    }
    if sub == "diff" && shape.revisions == 0 {
        return index_is_clean(at);
    }
    false
}

/// What the words after a subcommand say.
#[derive(Default)]
struct Shape {
    /// Only names, counts or nothing of the changes (`--stat`, `--name-only`, `-s`, ...).
    names_only: bool,
    /// Patches asked of `log` (`-p`, `-u`, `--patch`, `--word-diff`, `--cc`, ...).
    patches: bool,
    /// `-L` ranges, each with its file (judged where the words are read).
    line_ranges: bool,
    /// Operands that name files: after `--`, those that exist as paths, `rev:path` parts.
    paths: Vec<String>,
    /// Paths with pathspec magic or wildcards: what they match cannot be told.
    unplain_paths: bool,
    /// Operands that are not paths (revisions, ranges, object names).
    revisions: usize,
    /// Operands that look like object ids (4 to 64 hex digits).
    object_ids: bool,
}

impl Shape {
    fn of(rest: &[String], cwd: &Path) -> Shape {
        const NAMES_ONLY: &[&str] = &[
            "--stat",
            "--numstat",
            "--shortstat",
            "--name-only",
            "--name-status",
            "--summary",
            "--dirstat",
            "--raw",
            "-s",
            "--no-patch",
            "--quiet",
        ];
        const PATCHES: &[&str] =
            &["-p", "-u", "--patch", "--cc", "-c", "--patch-with-stat", "--patch-with-raw"];
        let mut s = Shape::default();
        let mut after_dashdash = false;
        let mut names_only = false;
        let mut patch_asked = false;
        for a in rest {
            if after_dashdash {
                s.add_path(a);
                continue;
            }
            if a == "--" {
                after_dashdash = true;
                continue;
            }
            if let Some(long) = a.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or(long);
                let full = format!("--{name}");
                if NAMES_ONLY.contains(&full.as_str()) {
                    names_only = true;
                }
                if PATCHES.contains(&full.as_str())
                    || ["word-diff", "color-words", "unified", "function-context"]
                        .iter()
                        .any(|p| name.starts_with(p))
                {
                    patch_asked = true;
                }
                continue;
            }
            if let Some(short) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
                if let Some(range) = short.strip_prefix('L') {
                    s.line_ranges = true;
                    if let Some((_, p)) = range.rsplit_once(':') {
                        s.add_path(p);
                    }
                    patch_asked = true;
                } else if short.starts_with('U') {
                    patch_asked = true;
                } else if NAMES_ONLY.contains(&a.as_str()) {
                    names_only = true;
                } else if PATCHES.contains(&a.as_str())
                    || (!short.starts_with(|c: char| c.is_ascii_digit() || c == 'n')
                        && short.contains(['p', 'u']))
                {
                    patch_asked = true;
                }
                continue;
            }
            // `rev:path` and `:path` name a file's content.
            if let Some((_, p)) = a.split_once(':') {
                s.add_path(p);
                continue;
            }
            if cwd.join(a).symlink_metadata().is_ok() {
                s.add_path(a);
            } else {
                s.revisions += 1;
                s.object_ids |=
                    (4..=64).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_hexdigit());
            }
        }
        // A range given to `-L` as the next word (`-L 1,5:file`) reads as `rev:path` above.
        s.names_only = names_only && !patch_asked;
        s.patches = patch_asked;
        s
    }

    fn add_path(&mut self, p: &str) {
        if p.is_empty() || p.starts_with(':') || p.contains(['*', '?', '[']) {
            self.unplain_paths = true;
        } else {
            self.paths.push(p.to_string());
        }
    }
}

/// A path that names one file (not a folder, whose every file would be shown) the file tools
/// may read.
fn plain_file(p: &str, at: Place<'_>) -> bool {
    let path = at.cwd.join(p);
    !path.is_dir() && !super::path_escapes(p, at)
}

/// Whether the index of the repository git would use from `at.cwd` lists no path the name
/// rules refuse. No repository: git prints nothing of one. An index that cannot be read
/// whole: not known, so not clean.
fn index_is_clean(at: Place<'_>) -> bool {
    let Some(files) = at.files else { return true };
    let Some((work_tree, git_dir)) = repository(at.cwd) else { return true };
    let Some(names) = index_names(&git_dir.join("index")) else { return false };
    names.iter().all(|n| {
        let rel = String::from_utf8_lossy(n);
        !files.sensitive_name(&work_tree.join(rel.as_ref()))
    })
}

/// The work tree and git folder of the repository `dir` is in, as git finds it from there
/// (a `.git` folder, or a `.git` file naming one).
fn repository(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        let dot = d.join(".git");
        match dot.symlink_metadata() {
            Ok(m) if m.is_dir() => return Some((d.to_path_buf(), dot)),
            Ok(m) if m.is_file() => {
                let (bytes, _) = crate::files::read_regular(&dot, 4096, false).ok()?;
                let text = String::from_utf8_lossy(&bytes);
                let target = text.trim().strip_prefix("gitdir:")?.trim().to_string();
                return Some((d.to_path_buf(), d.join(target)));
            }
            Ok(_) => return None,
            Err(_) => cur = d.parent(),
        }
    }
    None
}

/// The largest index read (a repository of a million files has an index of about 100 MB).
const MAX_INDEX: u64 = 64 * 1024 * 1024;

/// The path names an index file lists (versions 2, 3 and 4), or `None` when it cannot be read
/// whole. No index (a new repository): none.
fn index_names(file: &Path) -> Option<Vec<Vec<u8>>> {
    let (bytes, size) = match crate::files::read_regular(file, MAX_INDEX, false) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    if size > MAX_INDEX {
        return None;
    }
    read_index(&bytes)
}

/// The index format: a 12-byte header (`DIRC`, version, count), then per entry 62 bytes of
/// file facts (40 of stat data, a 20-byte SHA-1, 2 of flags), 2 more for extended flags
/// (version 3, when flag 0x4000 is set), and the name: in versions 2 and 3 whole and NUL-ended,
/// the entry padded to a multiple of 8; in version 4 as a count of bytes to drop from the
/// previous name (a varint) and the rest, NUL-ended, with no padding. SHA-256 repositories
/// (32-byte ids) are read with that size when the names do not line up otherwise.
fn read_index(b: &[u8]) -> Option<Vec<Vec<u8>>> {
    if b.len() < 12 || &b[..4] != b"DIRC" {
        return None;
    }
    let version = u32::from_be_bytes(b[4..8].try_into().ok()?);
    let count = u32::from_be_bytes(b[8..12].try_into().ok()?) as usize;
    if !(2..=4).contains(&version) {
        return None;
    }
    [20usize, 32].iter().find_map(|&id| entries(b, version, count, id))
}

fn entries(b: &[u8], version: u32, count: usize, id: usize) -> Option<Vec<Vec<u8>>> {
    let mut names: Vec<Vec<u8>> = Vec::with_capacity(count.min(1 << 20));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    let fixed = 40 + id + 2;
    for _ in 0..count {
        let start = at;
        let flags = u16::from_be_bytes(b.get(at + 40 + id..at + fixed)?.try_into().ok()?);
        at += fixed;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let name = if version == 4 {
            let (drop, used) = varint(b.get(at..)?)?;
            at += used;
            let end = at + b.get(at..)?.iter().position(|&c| c == 0)?;
            let keep = previous.len().checked_sub(drop)?;
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(&b[at..end]);
            at = end + 1;
            name
        } else {
            let end = at + b.get(at..)?.iter().position(|&c| c == 0)?;
            let name = b[at..end].to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 from the entry's start.
            at = start + (end - start + 8) / 8 * 8;
            name
        };
        if name.is_empty() || at > b.len() {
            return None;
        }
        previous.clone_from(&name);
        names.push(name);
    }
    Some(names)
}

/// Git's offset varint (index version 4): 7 bits a byte, high bit set while more follow, each
/// continuation adding one before the shift.
fn varint(b: &[u8]) -> Option<(usize, usize)> {
    let mut value: usize = 0;
    for (i, &byte) in b.iter().enumerate().take(9) {
        if i > 0 {
            value = value.checked_add(1)?.checked_shl(7)?;
        }
        value |= usize::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Indexes written by git itself, versions 2, 3 (an intent-to-add entry) and 4, read back
    /// to the names `git ls-files` gives.
    #[test]
    fn the_names_git_writes_are_read_back() {
        let Ok(out) = std::process::Command::new("git").arg("--version").output() else {
            return; // no git here
        };
        if !out.status.success() {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let st = std::process::Command::new("git")
                .args(args)
                .current_dir(d.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .unwrap();
            assert!(st.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        // In the index's order: by bytes.
        let names = ["a.txt", "dir/b.rs", "dir/sub/.env", "dir/sub/c", "z", "é ü.md"];
        for n in names {
            let p = d.path().join(n);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, n).unwrap();
        }
        git(&["add", "a.txt", "dir", "é ü.md"]);
        git(&["add", "-N", "z"]);
        for version in ["2", "3", "4"] {
            git(&["update-index", "--index-version", version]);
            let read = index_names(&d.path().join(".git/index")).unwrap();
            let read: Vec<String> =
                read.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect();
            assert_eq!(read, names, "version {version}");
        }
    }

    #[test]
    fn broken_indexes_are_not_read() {
        assert!(read_index(b"DIRC").is_none());
        let mut b = b"DIRC\0\0\0\x02\0\0\0\x05".to_vec();
        b.extend_from_slice(&[0u8; 70]);
        assert!(read_index(&b).is_none());
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x05]), Some((5, 1)));
    }
}
