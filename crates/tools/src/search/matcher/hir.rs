//! What [`super::LineMatcher`] does to a pattern's HIR before compiling it: the line
//! terminator taken out of what can match and the bytes no match holds (after grep-regex's
//! `strip.rs` and `non_matching.rs`, which ripgrep uses), and the case-folded letters of a
//! word spelled out.

use grep_matcher::ByteSet;
use regex_syntax::hir::{
    self, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look,
};
use regex_syntax::utf8::Utf8Sequences;

/// `expr` with the line terminator `byte` (ASCII) removed from every class, so that no match
/// spans two lines; an error when the pattern needs it (a literal `\n`, or a class of nothing
/// else), worded as grep-regex words it.
pub(super) fn strip_from_match(expr: Hir, byte: u8) -> Result<Hir, String> {
    let ch = char::from(byte);
    let invalid = || Err(format!("the literal {:?} is not allowed in a regex", ch.to_string()));
    Ok(match expr.into_kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(hir::Literal(lit)) => {
            if lit.contains(&byte) {
                return invalid();
            }
            Hir::literal(lit)
        }
        HirKind::Class(Class::Unicode(mut cls)) => {
            if cls.ranges().is_empty() {
                return Ok(Hir::class(Class::Unicode(cls)));
            }
            cls.difference(&ClassUnicode::new([ClassUnicodeRange::new(ch, ch)]));
            if cls.ranges().is_empty() {
                return invalid();
            }
            Hir::class(Class::Unicode(cls))
        }
        HirKind::Class(Class::Bytes(mut cls)) => {
            if cls.ranges().is_empty() {
                return Ok(Hir::class(Class::Bytes(cls)));
            }
            cls.difference(&ClassBytes::new([ClassBytesRange::new(byte, byte)]));
            if cls.ranges().is_empty() {
                return invalid();
            }
            Hir::class(Class::Bytes(cls))
        }
        HirKind::Look(x) => Hir::look(x),
        HirKind::Repetition(mut x) => {
            x.sub = Box::new(strip_from_match(*x.sub, byte)?);
            Hir::repetition(x)
        }
        HirKind::Capture(mut x) => {
            x.sub = Box::new(strip_from_match(*x.sub, byte)?);
            Hir::capture(x)
        }
        HirKind::Concat(xs) => Hir::concat(
            xs.into_iter().map(|e| strip_from_match(e, byte)).collect::<Result<_, _>>()?,
        ),
        HirKind::Alternation(xs) => Hir::alternation(
            xs.into_iter().map(|e| strip_from_match(e, byte)).collect::<Result<_, _>>()?,
        ),
    })
}

/// The bytes no match of `expr` can hold. The searcher only asks whether the line terminator
/// is among them; grep-regex's reading is kept, its quirk included (an anchor of the whole
/// text counts as a `\n`).
pub(super) fn non_matching_bytes(expr: &Hir) -> ByteSet {
    let mut set = ByteSet::full();
    remove_matching_bytes(expr, &mut set);
    set
}

fn remove_matching_bytes(expr: &Hir, set: &mut ByteSet) {
    match expr.kind() {
        HirKind::Look(Look::Start | Look::End | Look::StartLF | Look::EndLF) => {
            set.remove(b'\n');
        }
        HirKind::Look(Look::StartCRLF | Look::EndCRLF) => {
            set.remove(b'\r');
            set.remove(b'\n');
        }
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(hir::Literal(lit)) => {
            for &b in lit.iter() {
                set.remove(b);
            }
        }
        HirKind::Class(Class::Unicode(cls)) => {
            for range in cls.iter() {
                for seq in Utf8Sequences::new(range.start(), range.end()) {
                    for bytes in seq.as_slice() {
                        set.remove_all(bytes.start, bytes.end);
                    }
                }
            }
        }
        HirKind::Class(Class::Bytes(cls)) => {
            for range in cls.iter() {
                set.remove_all(range.start(), range.end());
            }
        }
        HirKind::Repetition(x) => remove_matching_bytes(&x.sub, set),
        HirKind::Capture(x) => remove_matching_bytes(&x.sub, set),
        HirKind::Concat(xs) | HirKind::Alternation(xs) => {
            for x in xs {
                remove_matching_bytes(x, set);
            }
        }
    }
}

/// The case-folded word with each letter's class that reaches past ASCII (`s` is `[Ssſ]`, `k`
/// is `[Kk\u{212A}]`) written as the alternation of its ASCII part and its other characters'
/// bytes: the same strings (UTF-8 is prefix-free, so the alternatives never compete), but the
/// engine compiles a class past ASCII through a UTF-8 automaton builder whose table (10,000
/// entries, 400 KB) is made and filled for each pattern: 100 of the 350 µs of a cold compile
/// of a word with an `s` or a `k`. A class with no ASCII part (`[Σςσ]`) is kept: an
/// alternation of single characters is folded back into a class.
pub(super) fn spelled_out(hir: Hir) -> Hir {
    match hir.kind() {
        HirKind::Concat(parts) => Hir::concat(parts.iter().cloned().map(spelled_out).collect()),
        HirKind::Class(Class::Unicode(class)) if !class.is_ascii() => {
            let ascii = class.iter().filter(|r| r.start().is_ascii());
            let ascii = ClassUnicode::new(
                ascii.map(|r| ClassUnicodeRange::new(r.start(), r.end().min(char::from(0x7f)))),
            );
            let others: Vec<char> =
                class.iter().flat_map(|r| r.start().max('\u{80}')..=r.end()).take(5).collect();
            if ascii.ranges().is_empty() || others.len() > 4 {
                return hir;
            }
            let mut alternatives = vec![Hir::class(Class::Unicode(ascii))];
            for c in others {
                alternatives.push(Hir::literal(c.encode_utf8(&mut [0; 4]).as_bytes()));
            }
            Hir::alternation(alternatives)
        }
        _ => hir,
    }
}
