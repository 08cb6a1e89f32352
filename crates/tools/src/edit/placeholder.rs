//! Upstream's omission-placeholder detector: lines like `// rest of methods ...` mean the model
//! left code out, and writing them would destroy it.

const PREFIXES: &[&str] = &[
    "rest of",
    "rest of method",
    "rest of methods",
    "rest of code",
    "unchanged code",
    "unchanged method",
    "unchanged methods",
];

/// The placeholders found, each as `<prefix> ...`.
pub fn find(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.replace("\r\n", "\n").split('\n') {
        let mut t = line.trim();
        if let Some(rest) = t.strip_prefix("//") {
            t = rest.trim();
        }
        if let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            t = inner.trim();
        }
        let Some(at) = t.find("...") else { continue };
        let (before, after) = (&t[..at], &t[at + 3..]);
        if !after.chars().all(|c| c == '.') {
            continue;
        }
        let prefix = before.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ");
        if PREFIXES.contains(&prefix.as_str()) {
            out.push(format!("{prefix} ..."));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op01_op03_upstream_cases() {
        assert_eq!(find("(rest of methods ...)"), ["rest of methods ..."]);
        assert_eq!(find("(rest of code ...)"), ["rest of code ..."]);
        assert_eq!(find("(unchanged code ...)"), ["unchanged code ..."]);
        assert_eq!(find("// rest of methods ..."), ["rest of methods ..."]);
        assert_eq!(find("(Rest Of Methods ...)"), ["rest of methods ..."]);
        assert_eq!(find("rest of code ....."), ["rest of code ..."]);
        assert_eq!(
            find("class A {\n  (rest of methods ...)\n  (unchanged code ...)\n}"),
            ["rest of methods ...", "unchanged code ..."]
        );
        assert!(find("const note = \"(rest of methods ...)\";").is_empty());
        assert!(find("return value; // rest of methods ...").is_empty());
        assert!(find("loading...").is_empty());
    }
}
