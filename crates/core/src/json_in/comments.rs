//! Comments in JSON files people write by hand (Gemini CLI's settings and trust files).

/// Removes `//` line comments and `/* ... */` block comments outside strings (Gemini CLI
/// reads its JSON files with comments of both kinds); a block comment's line breaks are kept
/// so that line numbers in errors stay true.
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut last = ' ';
            for n in chars.by_ref() {
                if n == '\n' {
                    out.push('\n');
                }
                if last == '*' && n == '/' {
                    break;
                }
                last = n;
            }
            out.push(' ');
        } else if c == '/' && chars.peek() == Some(&'/') {
            for n in chars.by_ref() {
                if n == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::strip_comments;

    #[test]
    fn both_kinds_of_comment_go_and_strings_and_lines_stay() {
        let text = "{\n  // a line\n  \"a\": \"x // y /* z */\", /* one\n two */ \"b\": 1\n}";
        let clean = strip_comments(text);
        let v: serde_json::Value = serde_json::from_str(&clean).unwrap();
        assert_eq!(v, serde_json::json!({"a": "x // y /* z */", "b": 1}));
        assert_eq!(clean.lines().count(), text.lines().count(), "line numbers kept");
        assert_eq!(strip_comments("\"\\\"/* not */\""), "\"\\\"/* not */\"");
    }
}
