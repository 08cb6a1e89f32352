//! Issue 35: a property test per ceiling of `toolbelt_core::limits` that is a function of its
//! input (the ones that are a matter of time or concurrency have tests of their own: the
//! costly-call queue in `limits`, the HTTP deadlines and the MCP listing in toolbelt-mcp).

use std::time::{Duration, SystemTime};

use proptest::prelude::*;
use toolbelt_core::limits::{
    PATTERN_CACHE_BYTES, PATTERN_PROGRAM_BYTES, check_pattern, pattern_units,
};
use toolbelt_core::result::untrusted;
use toolbelt_core::truncate::truncate;

use super::generated::config;

/// Patterns built of literals, ASCII classes and nested counted repetitions: the shapes whose
/// compiled size grows with the product of their counts.
fn pattern() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        "[a-z]{1,3}",
        Just("[a-z]".to_string()),
        Just("[0-9a-f]".to_string()),
        Just("x|y".to_string()),
    ];
    atom.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), 1u32..3000).prop_map(|(p, n)| format!("(?:{p}){{{n}}}")),
            (inner.clone(), 1u32..50, 0u32..50)
                .prop_map(|(p, a, b)| format!("(?:{p}){{{a},{}}}", a + b)),
            (inner.clone(), inner).prop_map(|(a, b)| format!("{a}{b}")),
        ]
    })
}

/// A spelling of the wrapper's closing tag a model could still read as one: any case, any
/// separators between the letters, look-alike letters and brackets.
fn closing_tag() -> impl Strategy<Value = String> {
    let opener =
        prop::sample::select(vec!["<", "\u{ff1c}", "\u{2039}", "\u{fe64}", "&lt;", "&#60;"]);
    let slash =
        prop::sample::select(vec!["/", "\\/", "\u{2215}", "\u{ff0f}", " /", "", "/\u{200b}"]);
    let sep =
        prop::sample::select(vec!["", "", "", " ", "\u{200b}", "\u{ad}", "-", "\u{2060}", "."]);
    let low = prop::sample::select(vec![
        "_", "\u{ff3f}", "\u{fe4d}", "\u{fe4f}", "\u{fe33}", "-", " ", "",
    ]);
    let letters = prop::collection::vec((any::<bool>(), 0u8..4, sep), 16);
    (opener, slash, letters, low).prop_map(|(o, s, letters, low)| {
        let mut t = format!("{o}{s}");
        for (i, (c, (upper, look, sep))) in "untrustedcontext".chars().zip(letters).enumerate() {
            if i == 9 {
                t.push_str(low);
            }
            let l = match (c, look) {
                ('e', 1) => '\u{0435}',
                ('o', 1) => '\u{043e}',
                ('c', 1) => '\u{0441}',
                (c, 2) => char::from_u32(0xff41 + (c as u32 - 'a' as u32)).unwrap_or(c),
                (c, 3) => char::from_u32(0x1d41a + (c as u32 - 'a' as u32)).unwrap_or(c),
                (c, _) if upper => c.to_ascii_uppercase(),
                (c, _) => c,
            };
            t.push(l);
            t.push_str(sep);
        }
        t.push('>');
        t
    })
}

proptest! {
    #![proptest_config(config())]

    /// A pattern is priced from its syntax before anything is compiled: past the ceiling it is
    /// refused with the limit named; under it, it compiles within the program and cache
    /// limits, or is refused by them with the same message, never with more memory.
    #[test]
    fn a_pattern_is_priced_before_it_is_compiled(p in pattern()) {
        let units = pattern_units(&p, false).expect("generated patterns parse");
        match check_pattern(&p, false) {
            Err(e) => {
                prop_assert!(units * 64 > PATTERN_PROGRAM_BYTES as u64, "{p}: {e}");
                prop_assert!(e.contains("the limit is 8 MiB"), "{e}");
            }
            Ok(()) => {
                prop_assert!(units * 64 <= PATTERN_PROGRAM_BYTES as u64);
                let built = regex::RegexBuilder::new(&p)
                    .size_limit(PATTERN_PROGRAM_BYTES)
                    .dfa_size_limit(PATTERN_CACHE_BYTES)
                    .build();
                prop_assert!(
                    matches!(built, Ok(_) | Err(regex::Error::CompiledTooBig(_))),
                    "{p}: {:?}", built.err()
                );
            }
        }
    }

    /// Whatever the text and the threshold, what is kept is the threshold's worth of
    /// characters (a fifth from the start, the rest from the end) plus one notice line, and
    /// the saved file holds all of it. Errors and successes go through the same cut.
    #[test]
    fn cut_output_is_bounded_and_the_file_holds_all_of_it(
        text in "(\\PC|\n){0,400}",
        threshold in 1usize..200,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let len = text.chars().count();
        match truncate(&text, threshold, dir.path(), "t", "t_1") {
            None => prop_assert!(len <= threshold),
            Some(t) => {
                prop_assert!(len > threshold);
                let file = t.output_file.clone().expect("saved");
                prop_assert_eq!(std::fs::read_to_string(&file).unwrap(), text.clone());
                let (notice, kept) = t.text.split_once('\n').unwrap();
                prop_assert!(notice.starts_with("Output too large."), "{}", notice);
                // head + "\n\n... [N characters omitted] ...\n\n" + tail
                let omitted = format!("... [{} characters omitted] ...", toolbelt_core::truncate::thousands(len - threshold));
                prop_assert!(kept.contains(&omitted), "{}", kept);
                prop_assert_eq!(kept.chars().count(), threshold + omitted.chars().count() + 4);
                let head: String = text.chars().take(threshold / 5).collect();
                let tail: String = text.chars().skip(len - (threshold - threshold / 5)).collect();
                prop_assert!(kept.starts_with(&head) && kept.ends_with(&tail));
            }
        }
    }

    /// No spelling of the closing tag survives the wrapper: the only openers left inside are
    /// the escaped ones.
    #[test]
    fn no_spelling_of_the_closing_tag_survives_the_wrapper(
        tag in closing_tag(),
        before in "[a-z <&]{0,8}",
        after in "[a-z >]{0,8}",
    ) {
        let wrapped = untrusted(&format!("{before}{tag}{after}"));
        let inner = &wrapped["<untrusted_context>\n".len()..wrapped.len() - "\n</untrusted_context>".len()];
        // The tag's opener was rewritten (`&lt;`, or `&amp;` for an entity).
        prop_assert!(!inner.contains(tag.as_str()), "{tag:?} survived in {inner:?}");
    }

    /// What toolbelt keeps stays under its total: the oldest files go first, however recent
    /// (a minute's grace for recent files let one session keep 641 MiB, issue 35).
    #[test]
    fn kept_files_stay_under_their_total_oldest_first(
        files in prop::collection::vec((0u64..4000, 0u64..10_000), 0..12),
        keep in 0u64..8000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let mut made = Vec::new();
        for (i, (size, age)) in files.iter().enumerate() {
            let sub = dir.path().join(if i % 2 == 0 { "tool-outputs" } else { "x" });
            std::fs::create_dir_all(&sub).unwrap();
            let path = sub.join(format!("f{i}"));
            let f = std::fs::File::create(&path).unwrap();
            f.set_len(*size).unwrap();
            let when = now - Duration::from_secs(*age);
            f.set_modified(when).unwrap();
            made.push((path, *size, when));
        }
        toolbelt_core::files::prune_kept(dir.path(), keep);
        let (gone, kept): (Vec<_>, Vec<_>) = made.iter().partition(|(p, ..)| !p.exists());
        let total: u64 = kept.iter().map(|f| f.1).sum();
        prop_assert!(total <= keep, "{total} > {keep}");
        for g in &gone {
            for k in &kept {
                prop_assert!(g.2 <= k.2, "a newer file went before an older one");
            }
        }
        if made.iter().map(|f| f.1).sum::<u64>() <= keep {
            prop_assert!(gone.is_empty());
        }
    }
}
