//! Spelling help: edit distance and "did you mean" suggestions for names people type (tool
//! names, settings keys, policy keys). A leaf module.

/// Edit distance between two strings (by chars).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest of `known` to `typed`, if it is close enough to be a likely typo (at most a third
/// of the name's length away, and at most 3 edits; case differences count as one edit).
pub fn did_you_mean<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = typed.chars().count();
    let limit = (len / 3).clamp(1, 3);
    known
        .into_iter()
        // No fewer edits than the lengths differ by: most names are passed over unmeasured (a
        // settings file of 100,000 keys measured each against every known key).
        .filter(|k| k.chars().count().abs_diff(len) <= limit)
        .map(|k| {
            let d = if k.eq_ignore_ascii_case(typed) { 1 } else { levenshtein(typed, k) };
            (d, k)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggests_close_names_only() {
        let known = ["exclude", "allowed", "core"];
        assert_eq!(did_you_mean("exlude", known), Some("exclude"));
        assert_eq!(did_you_mean("Allowed", known), Some("allowed"));
        assert_eq!(did_you_mean("sandbox", known), None);
        assert_eq!(did_you_mean("x", known), None);
    }
}
