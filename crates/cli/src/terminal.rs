//! One way to put untrusted text on a terminal: control characters, escape sequences, bidi
//! controls and zero-width characters are shown, never interpreted. A command
//! `touch x #\r\e[2Kgit status` must look like what it is, not like `git status`.
//! Newlines and tabs stay as they are (text keeps its shape).

/// `text` with every character a terminal would act on (or hide) written out visibly:
/// `\e`, `\r`, `\x07`, `\u{9b}`, `<U+202E>`.
pub fn visible(text: &str) -> String {
    shown(text, false)
}

/// [`visible`] for text that is a file's or a command's content: a carriage return that ends
/// a line (`\r\n`) stays as it is, so CRLF text keeps its line ends.
pub fn visible_text(text: &str) -> String {
    shown(text, true)
}

fn shown(text: &str, keep_crlf: bool) -> String {
    // Most text (paths, code) is printable ASCII throughout: nothing to write out.
    if text.bytes().all(|b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    // Runs of characters shown as they are are copied whole (a character at a time, printing
    // a read_many_files answer of 0.9 MB took 7 ms).
    let mut run = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let shown: std::borrow::Cow<'static, str> = match c {
            ' '..='~' | '\n' | '\t' => continue,
            '\r' if keep_crlf && chars.peek().map(|(_, c)| *c) == Some('\n') => continue,
            '\x1b' => "\\e".into(),
            '\r' => "\\r".into(),
            '\x08' => "\\b".into(),
            c if (c as u32) < 0x20 || c == '\x7f' => format!("\\x{:02x}", c as u32).into(),
            // C1 controls: a terminal may read U+009B as CSI.
            c if ('\u{80}'..='\u{9f}').contains(&c) => format!("\\u{{{:x}}}", c as u32).into(),
            c if hidden_or_reordering(c) => format!("<U+{:04X}>", c as u32).into(),
            _ => continue,
        };
        out.push_str(&text[run..i]);
        out.push_str(&shown);
        run = i + c.len_utf8();
    }
    out.push_str(&text[run..]);
    out
}

/// JSON text with every character a terminal would act on or hide (C1 controls, bidi and
/// invisible characters) written as a `\u` escape: the same JSON value, safe to print. JSON
/// escapes the C0 controls itself; the rest reached a terminal raw (`U+009B` reads as CSI;
/// issue 35). Only strings hold such characters (JSON's own syntax is ASCII).
pub fn json_visible(json: &str) -> std::borrow::Cow<'_, str> {
    let acts = |c: char| ('\u{80}'..='\u{9f}').contains(&c) || hidden_or_reordering(c);
    if json.is_ascii() || !json.chars().any(acts) {
        return json.into();
    }
    let mut out = String::with_capacity(json.len() + 64);
    for c in json.chars() {
        if acts(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// Bidi controls (they reorder what follows), zero-width and other invisible format
/// characters (they hide what is there), and separators that break lines.
fn hidden_or_reordering(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffb}'
            | '\u{e000}'..='\u{f8ff}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
            | '\u{f0000}'..='\u{10ffff}'
    )
}

#[cfg(test)]
mod tests {
    use super::visible;

    /// The character-at-a-time writing the run-copying one replaced: both must agree.
    fn reference(text: &str, keep_crlf: bool) -> String {
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\n' | '\t' => out.push(c),
                '\r' if keep_crlf && chars.peek() == Some(&'\n') => out.push(c),
                '\x1b' => out.push_str("\\e"),
                '\r' => out.push_str("\\r"),
                '\x08' => out.push_str("\\b"),
                c if (c as u32) < 0x20 || c == '\x7f' => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if ('\u{80}'..='\u{9f}').contains(&c) => {
                    out.push_str(&format!("\\u{{{:x}}}", c as u32));
                }
                c if super::hidden_or_reordering(c) => {
                    out.push_str(&format!("<U+{:04X}>", c as u32))
                }
                c => out.push(c),
            }
        }
        out
    }

    /// Issue 35 (fourth attack, N11): `call --json`, `tools schema` and `run -o json` printed
    /// U+009B (CSI) and U+202E raw. Escaped, the JSON means the same.
    #[test]
    fn json_is_printed_with_acting_characters_escaped() {
        let v = serde_json::json!({"d": "a\u{9b}2J\u{202e}b\u{e0041}é"});
        let text = v.to_string();
        let shown = super::json_visible(&text);
        assert_eq!(shown, r#"{"d":"a\u009b2J\u202eb\udb40\udc41é"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), v);
        assert!(matches!(super::json_visible("{\"a\":\"é\"}"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn runs_are_written_as_one_character_at_a_time_would() {
        let alphabet = [
            'a', 'é', '\n', '\r', '\t', '\x1b', '\x07', '\u{9b}', '\u{202e}', '\u{200b}', '字',
            '\x7f',
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2_000 {
            let mut s = String::new();
            for _ in 0..(seed % 24) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            seed = seed.wrapping_add(1);
            for keep in [false, true] {
                assert_eq!(super::shown(&s, keep), reference(&s, keep), "{s:?}");
            }
        }
    }

    /// What a terminal shows after printing `bytes`.
    pub(crate) fn screen(bytes: &str) -> String {
        let mut p = vt100::Parser::new(40, 200, 0);
        p.process(bytes.replace('\n', "\r\n").as_bytes());
        p.screen().contents()
    }

    #[test]
    fn escapes_cannot_rewrite_the_screen() {
        let forged = "touch PWNED #\r\x1b[2Kgit status";
        // Raw, the terminal shows only the harmless part.
        assert!(!screen(forged).contains("touch"), "the attack works raw: {}", screen(forged));
        let shown = screen(&visible(forged));
        assert!(shown.contains("touch PWNED #\\r\\e[2Kgit status"), "{shown}");
        for (text, want) in [
            ("a\u{202e}b", "a<U+202E>b"),
            ("a\u{200b}b", "a<U+200B>b"),
            ("echo\u{3164}hi", "echo<U+3164>hi"),
            ("x\u{e0041}", "x<U+E0041>"),
            ("\x1b]52;c;Y2xpcA==\x07", "\\e]52;c;Y2xpcA==\\x07"),
            ("x\u{9b}2J", "x\\u{9b}2J"),
            ("line\n\tnext", "line\n\tnext"),
        ] {
            assert_eq!(visible(text), want);
        }
    }
}
