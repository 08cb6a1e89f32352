//! Path text rules: the pre-flight validator, lexical normalisation, and a realpath that accepts
//! paths that do not exist yet.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Segments starting like this are log output pasted as a path.
const LOG_PREFIXES: [&str; 5] =
    ["AssertionError:", "FAIL ", "✓ ", "× ", "TestingLibraryElementError:"];

/// Upstream's `validatePath` pre-flight check; the reason is shown as `Invalid path: <reason>`.
pub fn preflight(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("Path must be a non-empty string.".into());
    }
    if path.contains(['\n', '\r', '\0', '\t']) {
        return Err("Path contains invalid characters (newlines or control characters).".into());
    }
    if path.split(['/', '\\']).any(|seg| LOG_PREFIXES.iter().any(|p| seg.starts_with(p))) {
        return Err("Path appears to be a misinterpreted log fragment.".into());
    }
    if (path.contains('"') || path.contains("...")) && path.chars().count() > 20 {
        return Err("Path contains suspicious characters (double quotes or ellipses) and is too long to be a simple filename.".into());
    }
    // Byte lengths first: no more bytes than the limit, no more characters either.
    if path.len() > MAX_PATH_CHARS && path.chars().count() > MAX_PATH_CHARS {
        return Err("Path is too long (maximum 4096 characters).".into());
    }
    for seg in path.split(['/', '\\']) {
        if seg.len() > 255 && seg.chars().count() > 255 {
            let first: String = seg.chars().take(20).collect();
            return Err(format!(
                "Path component \"{first}...\" is too long (maximum 255 characters)."
            ));
        }
    }
    Ok(())
}

/// The longest path [`preflight`] lets through, in bytes (in characters when longer).
pub(crate) const MAX_PATH_CHARS: usize = 4096;

/// Whether [`preflight`] passes on `dir` and on `dir/name` for every [`plain_name`] that keeps
/// the whole within [`MAX_PATH_CHARS`] bytes: then a folder's files need not be checked whole.
pub(crate) fn preflight_folder(dir: &str) -> bool {
    preflight(dir).is_ok() && !dir.contains('"') && !dir.contains("...")
}

/// A file name [`preflight`] has nothing to say about, wherever it stands: one segment, short,
/// no control characters, quotes or ellipses, not like a log fragment.
pub(crate) fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.contains(['\\', '/', '"', '\n', '\r', '\0', '\t'])
        && !name.contains("...")
        && !LOG_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// `path` below `dir`, as [`Path::strip_prefix`] gives it, compared as bytes first: a walk's
/// paths are `dir` joined with names, and comparing them component by component for every
/// entry of a 200,000-file tree cost more than the rest of a glob's matching.
pub fn below<'a>(path: &'a Path, dir: &Path) -> Option<&'a Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let (p, d) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
        if let Some(rest) = p.strip_prefix(d)
            && !d.is_empty()
            && !d.ends_with(b"/")
            && !d.ends_with(b"/.")
            && let Some(rest) = rest.strip_prefix(b"/")
            && rest.split(|b| *b == b'/').all(|seg| !seg.is_empty() && seg != b".")
        {
            return Some(Path::new(std::ffi::OsStr::from_bytes(rest)));
        }
    }
    path.strip_prefix(dir).ok()
}

/// Joins `p` onto `base` unless absolute and collapses `.` and `..` lexically, as `path.resolve`.
pub fn lexical_resolve(base: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

const MAX_LINK_HOPS: u32 = 40;

/// realpath that also works for paths that do not exist yet: the deepest existing ancestor is
/// resolved and the rest re-appended; dangling symlinks are followed by hand, so a link to a
/// missing file outside the workspace still resolves outside it.
pub fn robust_realpath(p: &Path) -> io::Result<PathBuf> {
    realpath_inner(p, 0)
}

fn realpath_inner(p: &Path, hops: u32) -> io::Result<PathBuf> {
    if hops > MAX_LINK_HOPS {
        return Err(io::Error::other(format!(
            "Infinite recursion detected in robustRealpath: {}",
            p.display()
        )));
    }
    match std::fs::canonicalize(p) {
        Ok(r) => Ok(r),
        Err(e) if recoverable(&e) => {
            if let Ok(target) = std::fs::read_link(p) {
                let parent = p.parent().unwrap_or(Path::new("/"));
                let next = lexical_resolve(parent, &target);
                return realpath_inner(&next, hops + 1);
            }
            match (p.parent(), p.file_name()) {
                (Some(parent), Some(name)) if parent != p => {
                    Ok(realpath_inner(parent, hops)?.join(name))
                }
                _ => Ok(p.to_path_buf()),
            }
        }
        Err(e) => Err(e),
    }
}

fn recoverable(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
        || e.raw_os_error() == Some(36) // ENAMETOOLONG
        || e.raw_os_error() == Some(40) // ELOOP: followed by hand until the hop limit
}

/// Decodes `%XX` escapes; `None` if nothing was escaped or the result is not UTF-8.
pub fn percent_decoded(s: &str) -> Option<String> {
    if !s.contains('%') {
        return None;
    }
    let d = percent_encoding::percent_decode_str(s).decode_utf8().ok()?;
    (d != s).then(|| d.into_owned())
}

/// `a/b` relative to `base` with `/` separators; `.` when equal; `p` unchanged if not under base.
/// Only Windows separates with `\`; elsewhere it is part of a name (`r\x` is not `r/x`).
pub fn relative_to(p: &Path, base: &Path) -> String {
    match p.strip_prefix(base) {
        Ok(r) if r.as_os_str().is_empty() => ".".into(),
        Ok(r) if cfg!(windows) => r.to_string_lossy().replace('\\', "/"),
        Ok(r) => r.to_string_lossy().into_owned(),
        Err(_) => pathdiff(p, base).unwrap_or_else(|| p.to_string_lossy().into_owned()),
    }
}

/// `../x/y` style relative path between two absolute paths.
fn pathdiff(p: &Path, base: &Path) -> Option<String> {
    if !p.is_absolute() || !base.is_absolute() {
        return None;
    }
    let pc: Vec<_> = p.components().collect();
    let bc: Vec<_> = base.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); bc.len() - common];
    parts.extend(pc[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    Some(if parts.is_empty() { ".".into() } else { parts.join("/") })
}

/// What `real` (a folder's real path) is when it is `/`, the home folder `home`, or a folder
/// that holds it: a root there gives the tools every file of the account.
pub fn holds_home(real: &Path, home: Option<&Path>) -> Option<&'static str> {
    if real == Path::new("/") {
        Some("the root of the file system")
    } else if home == Some(real) {
        Some("your home folder")
    } else if home.is_some_and(|h| h.starts_with(real)) {
        Some("a folder that holds your home folder")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` random cases, none saved to a file.
    fn cases(n: u32) -> proptest::test_runner::Config {
        proptest::test_runner::Config { cases: n, failure_persistence: None, ..Default::default() }
    }

    /// A folder's files are pre-flighted by name alone when the folder passes
    /// (`workspace::Folder`): never a different answer from the whole path's.
    #[test]
    fn a_plain_name_in_a_folder_that_passes_is_a_path_that_passes() {
        use proptest::prelude::*;
        let part = "(a|\\.|\\.\\.|\"|/|\\\\|FAIL |✓ |× |AssertionError:|\n|\t|é|x{250}|y{1000})";
        proptest!(cases(4000), |(dir in prop::collection::vec(part, 0..8), name in prop::collection::vec(part, 0..5))| {
            let dir = format!("/{}", dir.concat());
            let name = name.concat();
            let whole = format!("{dir}/{name}");
            if preflight_folder(&dir)
                && plain_name(&name)
                && dir.len() + 1 + name.len() <= MAX_PATH_CHARS
            {
                prop_assert_eq!(preflight(&whole), Ok(()), "{:?}", whole);
            }
        });
    }

    /// The byte comparison gives what `Path::strip_prefix` gives, on paths with doubled and
    /// trailing slashes, `.` components and prefixes that end inside a name.
    #[test]
    fn below_is_strip_prefix() {
        use proptest::prelude::*;
        let part = "(a|b|ab|/|\\.|\\.\\.|//)";
        proptest!(cases(4000), |(d in prop::collection::vec(part, 0..5), rest in prop::collection::vec(part, 0..5), abs in any::<bool>())| {
            let d = format!("{}{}", if abs { "/" } else { "" }, d.concat());
            let p = format!("{d}{}", rest.concat());
            let (p, d) = (Path::new(&p), Path::new(&d));
            let bytes = |x: Option<&Path>| x.map(|x| x.as_os_str().to_owned());
            prop_assert_eq!(bytes(below(p, d)), bytes(p.strip_prefix(d).ok()), "{:?} {:?}", p, d);
        });
    }

    #[test]
    fn preflight_matches_upstream_validator_cases() {
        for ok in [
            "src/index.ts",
            "/usr/local/bin",
            "C:\\Users\\name\\Documents",
            "/Users/john's_files/project/index.ts",
            "src/tests/FAIL_CASE.txt",
            "FAILURE_LOG.txt",
            "docs/AssertionError_details.md",
            "file\"with\"quote.txt",
            "données/日本語.txt",
        ] {
            assert_eq!(preflight(ok), Ok(()), "{ok}");
        }
        for bad in ["path/with\nnewline", "a\rb", "a\0b", "a\tb"] {
            assert!(preflight(bad).unwrap_err().contains("control characters"), "{bad:?}");
        }
        for bad in
            ["FAIL tests/int/my.test.ts", "/project/root/FAIL tests/my.test.ts", "✓ test passed"]
        {
            assert!(preflight(bad).unwrap_err().contains("log fragment"), "{bad}");
        }
        assert_eq!(
            preflight(&"a".repeat(4097)).unwrap_err(),
            "Path is too long (maximum 4096 characters)."
        );
        assert_eq!(
            preflight(&format!("x/{}", "b".repeat(256))).unwrap_err(),
            format!(
                "Path component \"{}...\" is too long (maximum 255 characters).",
                "b".repeat(20)
            )
        );
        assert!(preflight("some/long/path/with/.../inside").unwrap_err().contains("suspicious"));
        assert_eq!(preflight(""), Err("Path must be a non-empty string.".into()));
    }

    #[test]
    fn lexical_resolve_collapses_dots_like_path_resolve() {
        let base = Path::new("/w/root");
        assert_eq!(lexical_resolve(base, Path::new("a/./b/../c")), PathBuf::from("/w/root/a/c"));
        assert_eq!(lexical_resolve(base, Path::new("../../../etc")), PathBuf::from("/etc"));
        assert_eq!(lexical_resolve(base, Path::new("/abs/x")), PathBuf::from("/abs/x"));
    }

    #[test]
    fn realpath_of_missing_leaf_resolves_the_existing_parent() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let p = dir.path().join("missing/deeper/file.txt");
        assert_eq!(robust_realpath(&p).unwrap(), real.join("missing/deeper/file.txt"));
    }

    #[cfg(unix)]
    #[test]
    fn realpath_follows_dangling_symlinks_and_detects_loops() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("/nonexistent-target/x", dir.path().join("dangling")).unwrap();
        assert_eq!(
            robust_realpath(&dir.path().join("dangling")).unwrap(),
            PathBuf::from("/nonexistent-target/x")
        );
        std::os::unix::fs::symlink("loop_b", dir.path().join("loop_a")).unwrap();
        std::os::unix::fs::symlink("loop_a", dir.path().join("loop_b")).unwrap();
        let err = robust_realpath(&real.join("loop_a")).unwrap_err();
        assert!(err.to_string().contains("Infinite recursion"), "{err}");
    }

    #[test]
    fn relative_paths_use_slashes_and_dot() {
        assert_eq!(relative_to(Path::new("/a/b/c"), Path::new("/a")), "b/c");
        assert_eq!(relative_to(Path::new("/a"), Path::new("/a")), ".");
        assert_eq!(relative_to(Path::new("/x/lib"), Path::new("/a/b")), "../../x/lib");
    }

    #[test]
    fn percent_decoding_only_reports_changes() {
        assert_eq!(percent_decoded("a%20b.txt").as_deref(), Some("a b.txt"));
        assert_eq!(percent_decoded("plain.txt"), None);
        assert_eq!(percent_decoded("100%"), None);
    }
}
