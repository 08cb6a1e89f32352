//! URLs in text shown to a person or a model (an MCP server's failure, `/mcp`) without what may
//! be a secret in them: the user and password before the host, the query and the fragment
//! (`?key=…`). The host and path stay, so the text still says which server it was.

/// `text` with every `scheme://` URL in it cut to its scheme, host and path.
pub fn without_url_secrets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The scheme: the letters just before "://".
        let head = &rest[..at];
        let scheme_len = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        out.push_str(&head[..head.len() - scheme_len]);
        let url_start = at - scheme_len;
        let after = &rest[at + 3..];
        let end = after
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | ')' | ']')
            })
            .unwrap_or(after.len());
        let mut body = &after[..end];
        // Punctuation that ends a sentence is not part of the URL.
        let trail_at = body.trim_end_matches([':', ',', '.', ';']).len();
        let trail = &body[trail_at..];
        body = &body[..trail_at];
        let (authority, path) = match body.find(['/', '?', '#']) {
            Some(i) => body.split_at(i),
            None => (body, ""),
        };
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (path, cut) = match path.find(['?', '#']) {
            Some(i) => (&path[..i], true),
            None => (path, false),
        };
        out.push_str(&rest[url_start..at + 3]);
        out.push_str(host);
        out.push_str(path);
        if cut {
            out.push_str("?…");
        }
        out.push_str(trail);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 50 second review: `?key=…`, `user:password@` and `#fragment` of an MCP server's
    /// URL reached the editor and the model through failures and `/mcp`.
    #[test]
    fn a_url_keeps_its_host_and_path_and_loses_what_may_be_secret() {
        assert_eq!(
            without_url_secrets(
                "error sending request for url (http://127.0.0.1:18911/mcp?key=S1)"
            ),
            "error sending request for url (http://127.0.0.1:18911/mcp?…)"
        );
        assert_eq!(
            without_url_secrets(
                "cannot reach https://user:S2@h.example/mcp#S3: refused, and ws://a/b"
            ),
            "cannot reach https://h.example/mcp?…: refused, and ws://a/b"
        );
        assert_eq!(without_url_secrets("http://h?x=S4"), "http://h?…");
        assert_eq!(without_url_secrets("no url here: a?b"), "no url here: a?b");
        assert_eq!(without_url_secrets("ünïcode http://h/ä?k=S5 end"), "ünïcode http://h/ä?… end");
    }
}
