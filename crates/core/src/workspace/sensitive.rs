//! Paths no tool may touch: upstream's segment rules (`.git`, `.env`, `node_modules`,
//! `gha-creds-*.json`) plus a configurable list of key and credential files.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Which rule refused a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SensitiveHit {
    /// The rule's pattern, e.g. `.git` or `*.pem`.
    pub rule: String,
    /// `built-in` for upstream's rules, `sensitive_paths` for the configurable list.
    pub origin: &'static str,
}

/// The sensitive-path rules: files tools refuse unless the user allows them.
#[derive(Clone, Debug)]
pub struct SensitiveRules {
    patterns: Vec<String>,
    configured: GlobSet,
    allowed: GlobSet,
}

const BUILT_IN_SEGMENTS: [&str; 3] = [".git", ".env", "node_modules"];

/// Templates of secret files, which hold placeholders and are meant to be read (as upstream,
/// where only `.env` itself is outside the workspace): exempt from the configured patterns.
const TEMPLATES: [&str; 5] =
    [".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"];

impl SensitiveRules {
    /// Patterns that do not parse as globs are reported back as errors.
    pub fn new(patterns: &[String], allow: &[String]) -> Result<Self, String> {
        let set = |list: &[String]| -> Result<GlobSet, String> {
            let mut b = GlobSetBuilder::new();
            for p in list {
                // Case-insensitive: `ID_RSA` opens `id_rsa` on case-insensitive file systems.
                b.add(
                    GlobBuilder::new(p)
                        .case_insensitive(true)
                        .build()
                        .map_err(|e| format!("invalid sensitive-path pattern {p:?}: {e}"))?,
                );
            }
            b.build().map_err(|e| format!("invalid sensitive-path patterns: {e}"))
        };
        Ok(Self { patterns: patterns.to_vec(), configured: set(patterns)?, allowed: set(allow)? })
    }

    /// Checks a folder that would become a root (its absolute path): beneath a refused folder
    /// (`~/.ssh`) as a root, its files would no longer look sensitive.
    pub fn check_folder(&self, real: &std::path::Path) -> Option<SensitiveHit> {
        self.check(real.to_string_lossy().trim_start_matches('/'))
    }

    /// Checks each segment of a path relative to a workspace root.
    pub fn check(&self, relative: &str) -> Option<SensitiveHit> {
        if self.allowed.is_match(relative) {
            return None;
        }
        for seg in relative.split('/').filter(|s| !s.is_empty() && *s != ".") {
            if self.allowed.is_match(seg) {
                continue;
            }
            // Upstream: cut at the first ':' (NTFS streams), trim trailing spaces and dots.
            let cut = seg.split(':').next().unwrap_or(seg).trim_end_matches([' ', '.']);
            if let Some(b) = BUILT_IN_SEGMENTS.iter().find(|b| cut.eq_ignore_ascii_case(b)) {
                return Some(SensitiveHit { rule: (*b).to_string(), origin: "built-in" });
            }
            let lower = cut.to_ascii_lowercase();
            if lower.starts_with("gha-creds-") && lower.ends_with(".json") {
                return Some(SensitiveHit { rule: "gha-creds-*.json".into(), origin: "built-in" });
            }
            // The name as given and as the file system may read it (trailing dots and spaces
            // dropped, as for the built-in rules).
            if TEMPLATES.iter().any(|t| cut.eq_ignore_ascii_case(t)) {
                continue;
            }
            let hit = self.configured.matches(seg).first().copied();
            if let Some(i) = hit.or_else(|| self.configured.matches(cut).first().copied()) {
                return Some(SensitiveHit {
                    rule: self.patterns[i].clone(),
                    origin: "sensitive_paths",
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_SENSITIVE_PATHS;

    fn defaults(allow: &[&str]) -> SensitiveRules {
        let pats: Vec<String> = DEFAULT_SENSITIVE_PATHS.iter().map(|s| s.to_string()).collect();
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        SensitiveRules::new(&pats, &allow).unwrap()
    }

    #[test]
    fn upstream_segment_rules_refuse_git_env_node_modules() {
        let r = defaults(&[]);
        for p in [
            ".git/config",
            ".env",
            "node_modules/x/index.js",
            ".git /config",
            ".env::$DATA",
            "a/.GIT/HEAD",
            "gha-creds-1.json",
        ] {
            assert_eq!(r.check(p).map(|h| h.origin), Some("built-in"), "{p}");
        }
        assert_eq!(r.check("gha-creds.json"), None);
        assert_eq!(r.check("src/main.rs"), None);
    }

    #[test]
    fn configured_key_files_are_refused_and_can_be_allowed() {
        let r = defaults(&[]);
        assert_eq!(r.check("certs/server.pem").unwrap().rule, "*.pem");
        // Issue 19: templates are readable, the real files and anything named like a secret
        // or credentials file are not.
        assert_eq!(r.check(".env.example"), None);
        assert_eq!(r.check("config/.ENV.sample"), None);
        assert_eq!(r.check(".env.local").unwrap().rule, ".env*");
        assert_eq!(r.check("credentials.json").unwrap().rule, "*credentials*");
        assert_eq!(r.check("my_secret.txt").unwrap().rule, "*secret*");
        assert_eq!(r.check("Secrets/a.txt").unwrap().rule, "*secret*");
        assert_eq!(r.check("keys/id_rsa").unwrap().rule, "id_rsa");
        assert_eq!(r.check("keys/id_rsa.pub"), None);
        assert_eq!(r.check("home/.ssh/config").unwrap().rule, ".ssh");
        assert_eq!(r.check(".aws/credentials").unwrap().rule, ".aws");
        assert_eq!(r.check(".git-credentials").unwrap().rule, ".git-credentials");
        let r = defaults(&[".env.example", "node_modules"]);
        assert_eq!(r.check(".env.example"), None);
        assert_eq!(r.check("node_modules/x/README.md"), None);
        assert!(r.check(".env.local").is_some());
    }

    #[test]
    fn bad_patterns_are_reported() {
        assert!(SensitiveRules::new(&["a[".into()], &[]).is_err());
    }
}
