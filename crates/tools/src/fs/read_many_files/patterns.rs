//! The include and exclude patterns as glob sets.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The patterns, case-insensitive, `./` dropped, `*` not crossing `/`.
pub(super) fn glob_set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let g = GlobBuilder::new(p.strip_prefix("./").unwrap_or(p))
            .case_insensitive(true)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| format!("invalid glob pattern {p:?}: {e}"))?;
        b.add(g);
    }
    b.build().map_err(|e| e.to_string())
}

/// A folder is pruned when the excludes match something inside it (`**/dist/**`) or the
/// folder itself.
pub(super) fn excludes_dir(set: &GlobSet, rel: &str) -> bool {
    set.is_match(rel) || set.is_match(format!("{rel}/\u{1}"))
}
