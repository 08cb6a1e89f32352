//! Name ordering as upstream's `localeCompare` (ICU root collation): punctuation before digits
//! before letters, letters compared without case first, lower case before upper case on ties.
//! Printable-ASCII names take a fast path; anything else goes through `feruca`'s full
//! Unicode Collation Algorithm (the two agree on ASCII, which a test checks).

use std::cmp::Ordering;

/// ICU root order of the printable ASCII characters that are not letters.
const SYMBOLS: &[u8] = b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789";

/// The primary weight of each byte: symbols and digits in [`SYMBOLS`] order from 1, letters
/// from 100 without case, anything else 0 (a table: sorting paths looked each byte up).
const PRIMARY: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < SYMBOLS.len() {
        t[SYMBOLS[i] as usize] = i as u8 + 1;
        i += 1;
    }
    let mut c = b'a';
    while c <= b'z' {
        t[c as usize] = 100 + (c - b'a');
        t[c.to_ascii_uppercase() as usize] = 100 + (c - b'a');
        c += 1;
    }
    t
};

fn primary(b: u8) -> u8 {
    PRIMARY[b as usize]
}

fn printable(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// Compares two names; `collator` is used for names outside printable ASCII.
pub fn compare(collator: &mut feruca::Collator, a: &str, b: &str) -> Ordering {
    if printable(a) && printable(b) {
        let (x, y) = (a.as_bytes(), b.as_bytes());
        let p = x.iter().map(|c| primary(*c)).cmp(y.iter().map(|c| primary(*c)));
        if p != Ordering::Equal {
            return p;
        }
        let t =
            x.iter().map(|c| c.is_ascii_uppercase()).cmp(y.iter().map(|c| c.is_ascii_uppercase()));
        return t.then_with(|| x.cmp(y));
    }
    collator.collate(a, b)
}

/// A sort key equal in order to [`compare`] for printable-ASCII text: primary weights, a
/// separator, case flags, a separator, the bytes.
fn ascii_key(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut k = Vec::with_capacity(b.len() * 3 + 2);
    k.extend(b.iter().map(|c| primary(*c)));
    k.push(0);
    k.extend(b.iter().map(|c| 1 + u8::from(c.is_ascii_uppercase())));
    k.push(0);
    k.extend_from_slice(b);
    k
}

/// Sorts items by a text field in collation order (fast when every text is printable ASCII).
pub fn sort_by_text<T>(items: &mut [T], text: impl Fn(&T) -> &str) {
    if items.iter().all(|i| printable(text(i))) {
        items.sort_by_cached_key(|i| ascii_key(text(i)));
    } else {
        let mut c = collator();
        items.sort_by(|a, b| compare(&mut c, text(a), text(b)));
    }
}

/// A collator with upstream's settings (non-ignorable punctuation).
pub fn collator() -> feruca::Collator {
    feruca::Collator::new(feruca::Tailoring::default(), false, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_agrees_with_the_full_algorithm_on_ascii() {
        let mut c = collator();
        let alphabet = b"aAbBzZ09_-. /~$()x";
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let mut word = || -> String {
                let n = (next() % 6) as usize;
                (0..n)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
                    .collect()
            };
            let (a, b) = (word(), word());
            assert_eq!(
                compare(&mut c, &a, &b),
                c.collate(a.as_str(), b.as_str()),
                "{a:?} vs {b:?}"
            );
        }
    }

    #[test]
    fn sort_keys_order_like_compare() {
        let mut words = vec!["b", "B", "a-b", "a_b", "ab", "a", "A", "10", "9", "a.b", "Ab", "aB"];
        let mut by_key = words.clone();
        sort_by_text(&mut by_key, |w| w);
        let mut c = collator();
        words.sort_by(|a, b| c.collate(*a, *b));
        assert_eq!(by_key, words);
    }

    #[test]
    fn upstream_examples() {
        let mut c = collator();
        let mut v = vec!["Z", "FileB.TXT", "_x", "a", "fileA.txt", "B", "été", "ete"];
        v.sort_by(|a, b| compare(&mut c, a, b));
        assert_eq!(v, ["_x", "a", "B", "ete", "été", "fileA.txt", "FileB.TXT", "Z"]);
    }
}
