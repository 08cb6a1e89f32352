//! HTML's named character references (the WHATWG list: 2,231 names, the 106 legacy ones also
//! without `;`), read from `entities.txt` on first use: a table of string pointers would be
//! relocated, page by page, at every start of the program, HTML or not.

use std::ops::Range;
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

/// Every entry: where the names starting with the empty name are.
pub fn all() -> Range<usize> {
    0..table().len()
}

/// Of `range`, the names starting with `name`, given that all of them start with `name`
/// without its last byte (a step down the names, one byte of the page at a time).
pub fn narrow(range: Range<usize>, name: &[u8]) -> Range<usize> {
    let Some((&c, head)) = name.split_last() else { return range };
    let at = head.len();
    let names = &table()[range.clone()];
    let byte = |n: &str| n.as_bytes().get(at).copied();
    let lo = names.partition_point(|(n, _)| byte(n).is_none_or(|b| b < c));
    let hi = names.partition_point(|(n, _)| byte(n).is_none_or(|b| b <= c));
    range.start + lo..range.start + hi
}

/// The text of the entity named exactly `name`, `range` being the names starting with it.
pub fn exact(range: &Range<usize>, name: &[u8]) -> Option<&'static str> {
    table()
        .get(range.start)
        .filter(|(n, _)| !range.is_empty() && n.as_bytes() == name)
        .map(|(_, t)| t.as_str())
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

    /// `name`'s entry, walked down one byte at a time as the tokenizer does.
    fn walk(name: &[u8]) -> (bool, Option<&'static str>) {
        let mut range = all();
        for n in 1..=name.len() {
            range = narrow(range, &name[..n]);
        }
        (!range.is_empty(), exact(&range, name))
    }

    #[test]
    fn names_are_found_whole_and_as_prefixes() {
        assert_eq!(table().len(), 2231);
        assert_eq!(walk(b"amp;"), (true, Some("&")));
        assert_eq!(walk(b"amp"), (true, Some("&")), "a legacy name");
        assert_eq!(walk(b"hellip"), (true, None), "not a legacy name");
        assert_eq!(walk(b"fjlig;"), (true, Some("fj")));
        assert_eq!(walk(b"NewLine;"), (true, Some("\n")));
        assert_eq!(walk(b"CounterClockwiseContourIntegra"), (true, None));
        assert_eq!(walk(b"ampx"), (false, None));
        assert_eq!(walk(b"zz"), (false, None));
        // Every name is found, and each of its prefixes is one.
        for (name, text) in table() {
            assert_eq!(walk(name.as_bytes()), (true, Some(text.as_str())), "{name}");
        }
        assert_eq!(replace_code_point(0x80), '€');
        assert_eq!(replace_code_point(0xD800), '\u{FFFD}');
        assert_eq!(replace_code_point(0x11_0000), '\u{FFFD}');
        assert_eq!(replace_code_point(0x81), '\u{81}');
    }
}
