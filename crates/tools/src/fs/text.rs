//! Decoding text files as upstream does: a BOM selects UTF-8, UTF-16 or UTF-32 (and is
//! dropped); without one the bytes are UTF-8, with U+FFFD for invalid sequences.

/// Decodes `bytes`; the flag says whether any invalid sequence was replaced.
pub fn decode(bytes: &[u8]) -> (String, bool) {
    if let Some(rest) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        return utf8(rest);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xff, 0xfe, 0x00, 0x00]) {
        return utf32(rest, u32::from_le_bytes);
    }
    if let Some(rest) = bytes.strip_prefix(&[0x00, 0x00, 0xfe, 0xff]) {
        return utf32(rest, u32::from_be_bytes);
    }
    if bytes.starts_with(&[0xff, 0xfe]) {
        let (s, _, bad) = encoding_rs::UTF_16LE.decode(bytes);
        return (s.into_owned(), bad);
    }
    if bytes.starts_with(&[0xfe, 0xff]) {
        let (s, _, bad) = encoding_rs::UTF_16BE.decode(bytes);
        return (s.into_owned(), bad);
    }
    utf8(bytes)
}

fn utf8(bytes: &[u8]) -> (String, bool) {
    match String::from_utf8_lossy(bytes) {
        std::borrow::Cow::Borrowed(s) => (s.to_string(), false),
        std::borrow::Cow::Owned(s) => (s, true),
    }
}

fn utf32(bytes: &[u8], word: fn([u8; 4]) -> u32) -> (String, bool) {
    let mut bad = !bytes.len().is_multiple_of(4);
    let s = bytes
        .chunks_exact(4)
        .map(|c| {
            char::from_u32(word([c[0], c[1], c[2], c[3]])).unwrap_or_else(|| {
                bad = true;
                char::REPLACEMENT_CHARACTER
            })
        })
        .collect();
    (s, bad)
}

/// Splits on `\n` and `\r\n` (a lone `\r` stays in the line), like `split(/\r?\n/)`.
pub fn split_lines(s: &str) -> Vec<&str> {
    s.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// Number of UTF-16 code units, which is what JavaScript's `length` counts.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` of at most `max` UTF-16 code units (never splitting a character).
pub fn utf16_prefix(s: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &s[..i];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boms_select_the_encoding_and_are_dropped() {
        assert_eq!(decode(b"\xef\xbb\xbfHello"), ("Hello".into(), false));
        assert_eq!(decode(b"\xff\xfeH\x00i\x00"), ("Hi".into(), false));
        assert_eq!(decode(b"\xfe\xff\x00H\x00i"), ("Hi".into(), false));
        assert_eq!(decode(b"\xff\xfe\x00\x00H\x00\x00\x00"), ("H".into(), false));
        assert_eq!(decode(b"\x00\x00\xfe\xff\x00\x00\x00H"), ("H".into(), false));
        assert_eq!(decode(b"ok\xffok"), ("ok\u{fffd}ok".into(), true));
    }

    #[test]
    fn lines_split_like_the_upstream_regex() {
        assert_eq!(split_lines("a\r\nb\nc\rd\n"), ["a", "b", "c\rd", ""]);
        assert_eq!(split_lines(""), [""]);
    }

    #[test]
    fn utf16_counting() {
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(utf16_prefix("ab😀c", 3), "ab");
        assert_eq!(utf16_prefix("ab😀c", 4), "ab😀");
    }
}
