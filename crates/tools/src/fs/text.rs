//! Decoding text files: a BOM selects UTF-8, UTF-16 or UTF-32 (and is dropped), as upstream.
//! Without one, the bytes are UTF-8 when they are; a file that is not UTF-8 and holds no
//! UTF-8 letters is Latin-1, one character per byte (upstream shows U+FFFD there, which the
//! model can neither read nor match in an edit); UTF-8 text with a few stray bytes stays UTF-8
//! with U+FFFD for them. `replace` reads files by the same rule (see [`charset`]).

/// How a file without a BOM maps to text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charset {
    /// Valid UTF-8.
    Utf8,
    /// Not UTF-8, no UTF-8 letters in it: one character per byte, losslessly.
    Latin1,
    /// UTF-8 text with bytes that are not UTF-8 (`invalid` of them): decoding loses them.
    DamagedUtf8 {
        /// How many bytes are not part of a valid UTF-8 sequence.
        invalid: usize,
    },
}

/// The charset of `bytes` (without a BOM): UTF-8 when valid; Latin-1 when no valid multi-byte
/// UTF-8 sequence outnumbers the invalid bytes; otherwise damaged UTF-8.
pub fn charset(bytes: &[u8]) -> Charset {
    let (mut invalid, mut multibyte) = (0usize, 0usize);
    for chunk in bytes.utf8_chunks() {
        multibyte += chunk.valid().chars().filter(|c| !c.is_ascii()).count();
        invalid += chunk.invalid().len();
    }
    match (invalid, multibyte) {
        (0, _) => Charset::Utf8,
        (i, m) if m > i => Charset::DamagedUtf8 { invalid: i },
        _ => Charset::Latin1,
    }
}

/// Latin-1: each byte is the character of the same number.
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(*b)).collect()
}

/// Decodes `bytes`; the flag says whether any invalid sequence was replaced (bytes lost).
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
    // Valid UTF-8 (nearly every file) is checked once; only other bytes are counted.
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(_) if charset(bytes) == Charset::Latin1 => (latin1(bytes), false),
        Err(_) => utf8(bytes),
    }
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
        assert_eq!(decode(b"ok\xffok"), ("ok\u{ff}ok".into(), false));
    }

    #[test]
    fn latin1_unless_utf8_letters_outnumber_the_stray_bytes() {
        assert_eq!(charset(b"plain"), Charset::Utf8);
        assert_eq!(charset(b"caf\xe9 cr\xe8me"), Charset::Latin1);
        // "Ã©" written as Latin-1 bytes C3 A9 is valid UTF-8 for "é": one letter, no stray byte.
        assert_eq!(charset(b"caf\xc3\xa9"), Charset::Utf8);
        let mut damaged = "Grüße ça".as_bytes().to_vec();
        damaged.push(0xff);
        assert_eq!(charset(&damaged), Charset::DamagedUtf8 { invalid: 1 });
        assert_eq!(decode(&damaged), ("Grüße ça\u{fffd}".into(), true));
        // As many stray bytes as letters: Latin-1, nothing lost.
        assert_eq!(charset(b"\xc3\xa9 \xff"), Charset::Latin1);
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
