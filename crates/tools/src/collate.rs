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
        // The primary weights of every text in one buffer (no allocation per item): they
        // order all but texts that differ only in case, which the full key orders.
        let mut weights = Vec::with_capacity(items.iter().map(|i| text(i).len()).sum());
        let mut spans = Vec::with_capacity(items.len());
        for (n, item) in items.iter().enumerate() {
            let start = weights.len();
            weights.extend(text(item).bytes().map(primary));
            spans.push((start, weights.len(), n));
        }
        spans.sort_unstable_by(|a, b| {
            weights[a.0..a.1].cmp(&weights[b.0..b.1]).then_with(|| {
                ascii_key(text(&items[a.2])).cmp(&ascii_key(text(&items[b.2]))).then(a.2.cmp(&b.2))
            })
        });
        permute(items, spans.into_iter().map(|s| s.2).collect());
    } else {
        let mut c = collator();
        items.sort_by(|a, b| compare(&mut c, text(a), text(b)));
    }
}

/// Puts `items` in the order `order` gives (`order[k]` is the index of the item to be k-th).
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    for k in 0..order.len() {
        // Follow the cycle through k, swapping each item into place.
        let mut at = k;
        while order[at] != k {
            let from = order[at];
            items.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
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

    /// The one-buffer sort orders as a sort on the whole keys does (ties on the primary
    /// weights included: names that differ only in case, or not at all).
    #[test]
    fn the_weights_sort_is_the_key_sort() {
        let parts = ["a", "A", "b", "B", "-", "_", ".", "/", "1", "10", "x.ts", "X.TS", " "];
        let mut seed = 11u64;
        for _ in 0..300 {
            let mut items: Vec<String> = (0..40)
                .map(|_| {
                    let mut t = String::new();
                    for _ in 0..(seed % 5) {
                        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        t.push_str(parts[(seed >> 33) as usize % parts.len()]);
                    }
                    seed = seed.wrapping_add(7);
                    t
                })
                .collect();
            let mut by_key = items.clone();
            by_key.sort_by_cached_key(|t| ascii_key(t));
            sort_by_text(&mut items, String::as_str);
            assert_eq!(items, by_key);
        }
    }

    #[test]
    fn upstream_examples() {
        let mut c = collator();
        let mut v = vec!["Z", "FileB.TXT", "_x", "a", "fileA.txt", "B", "été", "ete"];
        v.sort_by(|a, b| compare(&mut c, a, b));
        assert_eq!(v, ["_x", "a", "B", "ete", "été", "fileA.txt", "FileB.TXT", "Z"]);
    }
}
