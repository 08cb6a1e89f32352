//! File-system tools and the helpers they share.

pub mod file_type;
pub mod folder_structure;
pub mod list_directory;
pub mod read_file;
pub mod read_many_files;
pub mod text;

use std::path::Path;

/// A path relative to the primary root with `/` separators, as upstream shows it.
pub fn display_path(path: &Path, root: &Path) -> String {
    toolbelt_core::workspace::paths::relative_to(path, root)
}

/// Shortens a display path to about 35 characters, keeping its first and last parts.
pub fn shorten_path(p: &str) -> String {
    const MAX: usize = 35;
    if p.chars().count() <= MAX {
        return p.to_string();
    }
    let parts: Vec<&str> = p.split('/').collect();
    let last = parts.last().copied().unwrap_or(p);
    if parts.len() > 2 {
        let candidate = format!("{}/.../{}", parts[0], last);
        if candidate.chars().count() <= MAX {
            return candidate;
        }
    }
    let keep: String =
        last.chars().rev().take(MAX - 3).collect::<Vec<_>>().into_iter().rev().collect();
    format!("...{keep}")
}

/// An I/O error worded as Node.js words it (`ENOENT: no such file or directory, stat '/x'`),
/// since upstream's messages embed those texts.
pub fn node_error(e: &std::io::Error, syscall: &str, path: &Path) -> String {
    let (code, text) = match e.raw_os_error() {
        Some(2) => ("ENOENT", "no such file or directory"),
        Some(13) => ("EACCES", "permission denied"),
        Some(20) => ("ENOTDIR", "not a directory"),
        Some(40) => ("ELOOP", "too many symbolic links encountered"),
        Some(1) => ("EPERM", "operation not permitted"),
        _ => return format!("{e}, {syscall} '{}'", path.display()),
    };
    format!("{code}: {text}, {syscall} '{}'", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_long_paths_only() {
        assert_eq!(shorten_path("src/main.rs"), "src/main.rs");
        assert_eq!(
            shorten_path("deeply/nested/directory/with/many/levels/file.rs"),
            "deeply/.../file.rs"
        );
        assert!(shorten_path(&"x".repeat(80)).chars().count() <= 35);
    }

    #[test]
    fn node_style_errors() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(
            node_error(&e, "stat", Path::new("/x")),
            "ENOENT: no such file or directory, stat '/x'"
        );
    }
}
