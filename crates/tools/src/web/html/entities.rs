//! HTML's named character references (the WHATWG list: 2,231 names, the 106 legacy ones also
//! without `;`), read from `entities.txt` on first use: a table of string pointers would be
//! relocated, page by page, at every start of the program, HTML or not.

use std::sync::OnceLock;

/// Names in byte order, each with its text.
fn table() -> &'static [(&'static str, String)] {
    static TABLE: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: Vec<(&'static str, String)> = include_str!("entities.txt")
            .lines()
            .filter_map(|line| {
                let mut parts = line.split(' ');
                let name = parts.next()?;
                let text = parts
                    .map(|hex| u32::from_str_radix(hex, 16).ok().and_then(char::from_u32))
                    .collect::<Option<String>>()?;
                Some((name, text))
            })
            .collect();
        table.sort_unstable_by(|a, b| a.0.cmp(b.0));
        table
    })
}

/// Where `name` is or would be in the table.
fn position(name: &[u8]) -> usize {
    table().partition_point(|(n, _)| n.as_bytes() < name)
}

/// Some name starts with `name`.
pub fn is_prefix(name: &[u8]) -> bool {
    table().get(position(name)).is_some_and(|(n, _)| n.as_bytes().starts_with(name))
}

/// The text of the entity named `name` (with its `;`, if it has one).
pub fn get(name: &[u8]) -> Option<&'static str> {
    table().get(position(name)).filter(|(n, _)| n.as_bytes() == name).map(|(_, t)| t.as_str())
}

/// A numeric reference's character: U+FFFD for surrogates, NUL and past U+10FFFF, and
/// Windows-1252's characters for 0x80–0x9F (as browsers read them).
pub fn replace_code_point(cp: u32) -> char {
    const C1: [u16; 32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
        0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ];
    let cp = match cp {
        0 => 0xFFFD,
        0x80..=0x9F => u32::from(C1[(cp - 0x80) as usize]),
        _ => cp,
    };
    char::from_u32(cp).unwrap_or('\u{FFFD}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_whole_and_as_prefixes() {
        assert_eq!(table().len(), 2231);
        assert_eq!(get(b"amp;"), Some("&"));
        assert_eq!(get(b"amp"), Some("&"), "a legacy name");
        assert_eq!(get(b"hellip"), None, "not a legacy name");
        assert_eq!(get(b"fjlig;"), Some("fj"));
        assert_eq!(get(b"NewLine;"), Some("\n"));
        assert!(is_prefix(b"CounterClockwiseContourIntegra"));
        assert!(!is_prefix(b"ampx"));
        assert_eq!(replace_code_point(0x80), '€');
        assert_eq!(replace_code_point(0xD800), '\u{FFFD}');
        assert_eq!(replace_code_point(0x11_0000), '\u{FFFD}');
        assert_eq!(replace_code_point(0x81), '\u{81}');
    }
}
