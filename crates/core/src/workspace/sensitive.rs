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
///
/// An allowance exempts only what it names: one without `/` a file or folder name (each name
/// of a path is checked on its own), one with `/` whole paths relative to a root, where `*`
/// stays within a name and `**` crosses folders. Matched against whole paths with `*`
/// crossing `/`, allowing `*secret*` would also let through `secrets/.env`.
#[derive(Clone, Debug)]
pub struct SensitiveRules {
    patterns: Vec<String>,
    configured: Patterns,
    allowed_names: Patterns,
    allowed_paths: Option<GlobSet>,
}

/// Case-insensitive globs, matched as globset matches them (`(?-u)(?i)`: ASCII letters in either
/// case, any other byte as itself; `*` any run of bytes, `/` included). A pattern of literal
/// text and `*` alone — every default one — is matched by hand: compiling the list into one
/// regex took 0.15 ms of every start, twice. Any other pattern goes through globset.
#[derive(Clone, Debug)]
struct Patterns {
    /// (index in the list, the pattern split at its `*`s).
    simple: Vec<(usize, Vec<Vec<u8>>)>,
    /// For each byte (ASCII lowercased), the positions in `simple` of the patterns whose text
    /// must end with it; a path segment is tried only against those and `open_end`. A walk
    /// checks every segment of every file it opens, so this runs millions of times.
    by_last: Vec<Vec<usize>>,
    /// Positions in `simple` of the patterns ending in `*` (any last byte).
    open_end: Vec<usize>,
    /// The other patterns and their indices in the list.
    complex: Option<(GlobSet, Vec<usize>)>,
}

impl Patterns {
    /// Compiles `list`; a pattern globset refuses is an error, as it was.
    fn new(list: &[String]) -> Result<Self, String> {
        let mut simple: Vec<(usize, Vec<Vec<u8>>)> = Vec::new();
        let (mut b, mut complex) = (GlobSetBuilder::new(), Vec::new());
        for (i, p) in list.iter().enumerate() {
            // Literal text and single `*`s: always a valid glob.
            if !p.contains("**") && !p.contains(['?', '[', ']', '{', '}', '\\', '!']) {
                simple.push((i, p.split('*').map(|piece| piece.as_bytes().to_vec()).collect()));
            } else {
                b.add(
                    GlobBuilder::new(p)
                        .case_insensitive(true)
                        .build()
                        .map_err(|e| format!("invalid sensitive-path pattern {p:?}: {e}"))?,
                );
                complex.push(i);
            }
        }
        let mut by_last = vec![Vec::new(); 256];
        let mut open_end = Vec::new();
        for (k, (_, pieces)) in simple.iter().enumerate() {
            match pieces.last().and_then(|p| p.last()) {
                Some(b) => by_last[usize::from(b.to_ascii_lowercase())].push(k),
                None => open_end.push(k),
            }
        }
        let complex = if complex.is_empty() {
            None
        } else {
            Some((b.build().map_err(|e| format!("invalid sensitive-path patterns: {e}"))?, complex))
        };
        Ok(Self { simple, by_last, open_end, complex })
    }

    /// The index of the first pattern in the list that matches `text`.
    fn first_match(&self, text: &str) -> Option<usize> {
        let by_hand = self.first_match_simple(text).map(|k| self.simple[k].0);
        let by_globset =
            self.complex.as_ref().and_then(|(set, idx)| set.matches(text).first().map(|&k| idx[k]));
        match (by_hand, by_globset) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The first simple pattern (by position in `simple`, which keeps the list's order) that
    /// matches, among those that can.
    fn first_match_simple(&self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        let ends = bytes
            .last()
            .map_or(&[][..], |b| &self.by_last[usize::from(b.to_ascii_lowercase())][..]);
        ends.iter()
            .chain(&self.open_end)
            .copied()
            .filter(|&k| wildcard_match(&self.simple[k].1, bytes))
            .min()
    }

    /// Whether any pattern matches `text`.
    fn is_match(&self, text: &str) -> bool {
        self.first_match_simple(text).is_some()
            || self.complex.as_ref().is_some_and(|(set, _)| set.is_match(text))
    }
}

/// `pieces` (a pattern split at its `*`s) against the whole of `text`, ASCII case ignored.
fn wildcard_match(pieces: &[Vec<u8>], text: &[u8]) -> bool {
    let eq = |a: &[u8], b: &[u8]| a.eq_ignore_ascii_case(b);
    let [first, middle @ .., last] = pieces else {
        // No `*`: the whole text.
        return pieces.first().is_some_and(|p| eq(p, text));
    };
    if text.len() < first.len() + last.len()
        || !eq(&text[..first.len()], first)
        || !eq(&text[text.len() - last.len()..], last)
    {
        return false;
    }
    // Each middle piece at its leftmost place after the one before (leftmost is never worse).
    let mut rest = &text[first.len()..text.len() - last.len()];
    for piece in middle.iter().filter(|p| !p.is_empty()) {
        let Some(at) = rest.windows(piece.len()).position(|w| eq(w, piece)) else {
            return false;
        };
        rest = &rest[at + piece.len()..];
    }
    true
}

const BUILT_IN_SEGMENTS: [&str; 3] = [".git", ".env", "node_modules"];

thread_local! {
    /// Guards alive on this thread that let `node_modules` through (see [`lift_node_modules`]).
    static NODE_MODULES_LIFTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// While the returned guard lives, the checks this thread makes let `node_modules` through:
/// the built-in rule for that name alone (every other rule, `.env` and `.git` included, still
/// applies). For grep_search with `no_ignore`, which upstream runs as `rg --no-ignore` over
/// everything on disk (issue 48, S3); reading such a file is still refused, as upstream's
/// `read_file` refuses it.
#[must_use = "the lift ends when the guard is dropped"]
pub fn lift_node_modules() -> NodeModulesLifted {
    NODE_MODULES_LIFTED.with(|n| n.set(n.get() + 1));
    NodeModulesLifted(std::marker::PhantomData)
}

/// See [`lift_node_modules`]. Not `Send`: it must end on the thread it began on.
#[derive(Debug)]
pub struct NodeModulesLifted(std::marker::PhantomData<*const ()>);

impl Drop for NodeModulesLifted {
    fn drop(&mut self) {
        NODE_MODULES_LIFTED.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

fn node_modules_lifted() -> bool {
    NODE_MODULES_LIFTED.with(std::cell::Cell::get) > 0
}

/// Paths of more than one name that hold secrets, refused wherever they appear in a path
/// (issue 46: a workspace at `~` or `/` served GitHub's CLI token and `/etc/shadow`); their
/// names alone (`gh`, `shadow`) are too common to refuse on their own.
const SECRET_PATHS: &[&str] = &[
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/rclone",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/op",
    ".mozilla/firefox",
    ".m2/settings.xml",
    ".password-store",
    ".local/share/keyrings",
    "Library/Keychains",
    "Library/Cookies",
    "etc/shadow",
    "etc/gshadow",
    "etc/sudoers",
];

/// Templates of secret files, which hold placeholders and are meant to be read (as upstream,
/// where only `.env` itself is outside the workspace): exempt from the configured patterns.
const TEMPLATES: [&str; 5] =
    [".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"];

impl SensitiveRules {
    /// Patterns that do not parse as globs are reported back as errors.
    /// Case-insensitive: `ID_RSA` opens `id_rsa` on case-insensitive file systems.
    pub fn new(patterns: &[String], allow: &[String]) -> Result<Self, String> {
        let (paths, names): (Vec<String>, Vec<String>) =
            allow.iter().cloned().partition(|a| a.contains('/'));
        let allowed_paths = if paths.is_empty() {
            None
        } else {
            let mut b = GlobSetBuilder::new();
            for p in &paths {
                let glob = GlobBuilder::new(p.trim_start_matches("./"))
                    .case_insensitive(true)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("invalid allow_sensitive_paths pattern {p:?}: {e}"))?;
                b.add(glob);
            }
            Some(b.build().map_err(|e| format!("invalid allow_sensitive_paths patterns: {e}"))?)
        };
        Ok(Self {
            patterns: patterns.to_vec(),
            configured: Patterns::new(patterns)?,
            allowed_names: Patterns::new(&names)?,
            allowed_paths,
        })
    }

    /// Checks a folder that would become a root (its absolute path): beneath a refused folder
    /// (`~/.ssh`) as a root, its files would no longer look sensitive.
    pub fn check_folder(&self, real: &std::path::Path) -> Option<SensitiveHit> {
        self.check(real.to_string_lossy().trim_start_matches('/'))
    }

    /// Checks each segment of a path relative to a workspace root.
    pub fn check(&self, relative: &str) -> Option<SensitiveHit> {
        if self.allowed_paths.as_ref().is_some_and(|set| set.is_match(relative)) {
            return None;
        }
        secret_path_hit(relative)
            .or_else(|| segments(relative).find_map(|seg| self.segment_hit(seg)))
    }

    /// Whether `name` is the last name of one of the [`SECRET_PATHS`]: a file of that name is
    /// judged on its whole path, not on its name alone.
    pub(crate) fn ends_a_secret_path(name: &str) -> bool {
        SECRET_PATHS.iter().any(|p| p.rsplit('/').next().is_some_and(|last| last == name))
    }

    /// Whether no segment of `relative` is refused on its own, whatever the whole path's
    /// allowances: then a path below it is refused exactly when its own next segment is
    /// ([`Self::segment_hit`]) and the whole path is not allowed.
    pub(crate) fn segments_pass(&self, relative: &str) -> bool {
        secret_path_hit(relative).is_none()
            && segments(relative).all(|seg| self.segment_hit(seg).is_none())
    }

    /// The rule one segment (a file or folder name) matches, if it is not allowed on its own.
    pub(crate) fn segment_hit(&self, seg: &str) -> Option<SensitiveHit> {
        if self.allowed_names.is_match(seg) {
            return None;
        }
        // Upstream: cut at the first ':' (NTFS streams), trim trailing spaces and dots.
        let cut = seg.split(':').next().unwrap_or(seg).trim_end_matches([' ', '.']);
        if let Some(b) = BUILT_IN_SEGMENTS.iter().find(|b| cut.eq_ignore_ascii_case(b))
            && !(*b == "node_modules" && node_modules_lifted())
        {
            return Some(SensitiveHit { rule: (*b).to_string(), origin: "built-in" });
        }
        let b = cut.as_bytes();
        if b.len() >= 15
            && b[..10].eq_ignore_ascii_case(b"gha-creds-")
            && b[b.len() - 5..].eq_ignore_ascii_case(b".json")
        {
            return Some(SensitiveHit { rule: "gha-creds-*.json".into(), origin: "built-in" });
        }
        // The name as given and as the file system may read it (trailing dots and spaces
        // dropped, as for the built-in rules).
        if TEMPLATES.iter().any(|t| cut.eq_ignore_ascii_case(t)) {
            return None;
        }
        let hit = self.configured.first_match(seg);
        hit.or_else(|| (cut != seg).then(|| self.configured.first_match(cut)).flatten())
            .map(|i| SensitiveHit { rule: self.patterns[i].clone(), origin: "sensitive_paths" })
    }
}

/// The segments of a relative path, empty ones and `.` left out.
fn segments(relative: &str) -> impl Iterator<Item = &str> {
    relative.split('/').filter(|s| !s.is_empty() && *s != ".")
}

/// The [`SECRET_PATHS`] entry whose names come one after another in `relative`, if any.
fn secret_path_hit(relative: &str) -> Option<SensitiveHit> {
    // Walks check every folder: most paths hold no rule's last name, and need no split.
    if !SECRET_PATHS
        .iter()
        .any(|p| p.rsplit('/').next().is_some_and(|last| relative.contains(last)))
    {
        return None;
    }
    let names: Vec<&str> = segments(relative).collect();
    SECRET_PATHS.iter().find_map(|p| {
        let rule: Vec<&str> = p.split('/').collect();
        names
            .windows(rule.len())
            .any(|w| w == rule.as_slice())
            .then(|| SensitiveHit { rule: (*p).to_string(), origin: "built-in" })
    })
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

    /// The hand matcher against globset itself, on patterns of literal text and `*` over an
    /// alphabet with both cases, `/`, `.`, a non-ASCII letter and its capital.
    #[test]
    fn simple_patterns_match_exactly_as_globset_would() {
        use proptest::prelude::*;
        let cases = std::env::var("TOOLBELT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok());
        let config = ProptestConfig {
            cases: cases.unwrap_or(1000),
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        proptest!(config, |(list in prop::collection::vec("[aAb*./éÉK\\u{212a}]{0,6}", 1..4), text in "[aAbB./éÉkK\\u{212a}]{0,8}")| {
            prop_assume!(list.iter().all(|p| !p.contains("**")));
            let mut b = GlobSetBuilder::new();
            for p in &list {
                b.add(GlobBuilder::new(p).case_insensitive(true).build().unwrap());
            }
            let set = b.build().unwrap();
            let ours = Patterns::new(&list).unwrap();
            prop_assert!(ours.complex.is_none());
            prop_assert_eq!(ours.is_match(&text), set.is_match(&text), "{:?} {:?}", list, text);
            prop_assert_eq!(ours.first_match(&text), set.matches(&text).first().copied(), "{:?} {:?}", list, text);
        });
    }

    #[test]
    fn the_first_matching_pattern_is_named_whichever_matcher_holds_it() {
        let list: Vec<String> = ["*.pem", "se[c]ret*", "*secret*", "?d_rsa", "id_rsa"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let p = Patterns::new(&list).unwrap();
        assert_eq!(p.first_match("x.PEM"), Some(0));
        assert_eq!(p.first_match("secret.txt"), Some(1));
        assert_eq!(p.first_match("my-secret"), Some(2));
        assert_eq!(p.first_match("id_rsa"), Some(3));
        assert_eq!(p.first_match("main.rs"), None);
    }

    /// A folder's files are checked by their own name once the folder's segments pass
    /// (`workspace::Folder`): that must never let through what the whole path's check refuses,
    /// whatever the patterns and allowances, path-wide ones included.
    #[test]
    fn a_name_that_passes_below_a_folder_that_passes_is_a_path_that_passes() {
        use proptest::prelude::*;
        let config =
            ProptestConfig { cases: 2000, failure_persistence: None, ..Default::default() };
        let seg = "(\\.git|\\.env|\\.env\\.example|node_modules|gha-creds-x\\.json|id_rsa|a|b\\.pem|c:d|\\.aws|x\\. |\\.)";
        let rule = "(\\*\\.pem|id_rsa\\*|\\.aws|\\.aws/\\*|a/\\.env|\\*/\\.git|\\.env|\\*|node_modules/\\*)";
        proptest!(config, |(
            dir in prop::collection::vec(seg, 0..4),
            name in seg,
            patterns in prop::collection::vec(rule, 0..3),
            allow in prop::collection::vec(rule, 0..3),
        )| {
            let rules = SensitiveRules::new(&patterns, &allow).unwrap();
            let dir = dir.join("/");
            let whole = if dir.is_empty() { name.clone() } else { format!("{dir}/{name}") };
            if rules.segments_pass(&dir) && rules.segment_hit(&name).is_none() {
                prop_assert!(rules.check(&whole).is_none(), "{:?} {:?} {:?}", whole, patterns, allow);
            }
            // And a path the segment checks refuse is refused as a whole unless allowed so.
            if rules.check(&whole).is_some() {
                prop_assert!(!rules.segments_pass(&dir) || rules.segment_hit(&name).is_some());
            }
        });
    }

    /// Found by the first review of issue 22: an allowance was matched against the whole path
    /// with `*` crossing `/`, so allowing `*secret*` (to read `secret_santa.txt`, as the
    /// refusal suggests) also let through `secrets/.env` and `my-secret/.git/config`.
    #[test]
    fn an_allowance_exempts_only_what_it_names() {
        let r = defaults(&["*secret*"]);
        assert_eq!(r.check("secret_santa.txt"), None);
        assert_eq!(r.check("secrets/notes.txt"), None);
        assert_eq!(r.check("secrets/.env").map(|h| h.rule), Some(".env".into()));
        assert_eq!(r.check("my-secret/.git/config").map(|h| h.rule), Some(".git".into()));
        assert_eq!(r.check("secrets/server.pem").map(|h| h.rule), Some("*.pem".into()));
        // A path allowance: `*` stays within a name, `**` crosses folders.
        let r = defaults(&["docs/*"]);
        assert_eq!(r.check("docs/.env"), None);
        assert!(r.check("docs/deploy/.env").is_some());
        let r = defaults(&["docs/**"]);
        assert_eq!(r.check("docs/deploy/.env"), None);
        assert!(r.check("src/.env").is_some());
    }

    #[test]
    fn bad_patterns_are_reported() {
        assert!(SensitiveRules::new(&["a[".into()], &[]).is_err());
    }
}
