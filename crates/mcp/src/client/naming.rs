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

#[cfg(test)]
mod tests {
    use super::*;

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
