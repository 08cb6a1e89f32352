//! Tool names for MCP tools: `mcp_<server>_<tool>`, characters outside
//! `[A-Za-z0-9_\-.:]` replaced by `_`, and names over 63 characters shortened to the first 30,
//! `...` and the last 30.

use toolbelt_core::names;

pub const MAX_NAME: usize = 63;

pub fn qualified_name(server: &str, tool: &str) -> String {
    let raw = format!("{server}_{tool}");
    let raw = if names::is_mcp(&raw) { raw } else { format!("{}{raw}", names::MCP_PREFIX) };
    let mut name: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "_-.:".contains(c) { c } else { '_' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    let chars: Vec<char> = name.chars().collect();
    if chars.len() > MAX_NAME {
        let head: String = chars[..30].iter().collect();
        let tail: String = chars[chars.len() - 30..].iter().collect();
        name = format!("{head}...{tail}");
    }
    name
}

/// The names given so far: a name already taken gets the next free `_2`, `_3`, ... suffix.
/// Linear in the number of tools, however many share a name (4,000 tools of one name took
/// 24 s with a list and a scan per suffix).
#[derive(Debug, Default)]
pub struct Taken {
    names: std::collections::HashSet<String>,
    /// The next suffix to try for a base name.
    next: std::collections::HashMap<String, usize>,
    /// Names tried so far, taken or not: at most one more than the names given plus the
    /// names skipped because another tool had them (what makes the work linear).
    tries: usize,
}

impl Taken {
    /// `name` if it is free, else the first free `name_N`; either way now taken.
    pub fn claim(&mut self, name: &str) -> String {
        self.tries += 1;
        if self.names.insert(name.to_string()) {
            return name.to_string();
        }
        let n = self.next.entry(name.to_string()).or_insert(2);
        loop {
            let candidate = format!("{name}_{n}");
            *n += 1;
            self.tries += 1;
            if self.names.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clashing_names_get_the_next_free_suffix() {
        let mut t = Taken::default();
        assert_eq!(t.claim("mcp_a_x"), "mcp_a_x");
        assert_eq!(t.claim("mcp_a_x_2"), "mcp_a_x_2");
        assert_eq!(t.claim("mcp_a_x"), "mcp_a_x_3");
        assert_eq!(t.claim("mcp_a_x"), "mcp_a_x_4");
        assert_eq!(t.claim("mcp_a_y"), "mcp_a_y");
    }

    /// Issue 20: de-duplication was quadratic (100,000 tools: 28.8 s; 4,000 sharing one name:
    /// 24 s: a scan of every suffix for each claim). Counted, not timed (issue 35): each claim
    /// tries its own name and then only suffixes no claim has tried before.
    #[test]
    fn a_hundred_thousand_tools_and_four_thousand_of_one_name() {
        let mut t = Taken::default();
        let mut all = std::collections::HashSet::new();
        for i in 0..100_000 {
            assert!(all.insert(t.claim(&format!("mcp_s_tool{i}"))));
        }
        assert_eq!(t.tries, 100_000);
        // One tool that already took a name a later suffix would give.
        assert!(all.insert(t.claim("mcp_s_same_3")));
        for _ in 0..4_000 {
            assert!(all.insert(t.claim("mcp_s_same")));
        }
        assert_eq!(all.len(), 104_001);
        assert!(all.contains("mcp_s_same_4001") && !all.contains("mcp_s_same_4002"));
        // Each of the 4,000 tries its name, the first 3,999 a suffix each, and one more try
        // for the suffix `_3` taken before.
        assert_eq!(t.tries, 100_001 + 4_000 + 3_999 + 1);
    }

    #[test]
    fn names_follow_upstream() {
        assert_eq!(qualified_name("github", "list_issues"), "mcp_github_list_issues");
        assert_eq!(qualified_name("my server", "do/it!"), "mcp_my_server_do_it_");
        assert_eq!(qualified_name("mcp", "x"), "mcp_x");
        let long = qualified_name("s", &"t".repeat(100));
        assert_eq!(long.len(), 63);
        assert!(long.starts_with("mcp_s_tttt") && long.contains("..."));
    }
}
