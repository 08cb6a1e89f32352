//! The strings a match cannot do without, looked for before the pattern itself.
//!
//! Some patterns leave the engine nothing to skip ahead with: `\w+Handler\b` starts with a
//! class, so the lazy DFA walks every byte, and gives up for a slower engine at the first
//! non-ASCII byte when a Unicode word boundary is asked for; `.{3000}Handler` does not fit its
//! cache. Yet every match of these holds `Handler`. Searching a buffer for the strings first
//! and running the pattern only on the lines that hold one turns such a search into a
//! substring search.
//!
//! Each node of the pattern's tree is summed up bottom-up as a [`Need`]: the exact strings it
//! matches when they are few, or strings one of which is in each of its matches. Sets stay
//! small ([`MOST`] strings); where a set would grow past that, the node says less.

use regex_syntax::hir::{self, Class, Hir, HirKind, Visitor};

/// The most strings a set may hold.
const MOST: usize = 64;

/// The most characters of a class spelled out as strings (`[Hh]` is two strings, `[a-z]` is
/// nothing worth looking for).
const CLASS_MOST: u32 = 16;

/// A string shorter than this is too common to be worth a pass of its own.
const SHORTEST: usize = 2;

/// What the matches of a node are known to hold.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Need {
    /// Every match is one of these strings (zero-width assertions are the empty string).
    Exactly(Vec<Vec<u8>>),
    /// Every match contains one of these strings.
    Contains(Vec<Vec<u8>>),
    /// Nothing worth knowing.
    Nothing,
}

impl Need {
    fn strings(&self) -> Option<&[Vec<u8>]> {
        match self {
            Need::Exactly(set) | Need::Contains(set) => Some(set),
            Need::Nothing => None,
        }
    }

    /// How good a set is to look for: its shortest string, then fewer strings.
    fn worth(&self) -> Option<(usize, usize)> {
        let set = self.strings()?;
        let shortest = set.iter().map(Vec::len).min()?;
        (shortest > 0).then_some((shortest, MOST + 1 - set.len()))
    }

    /// The better of two things to look for.
    fn better(self, other: Need) -> Need {
        if other.worth() > self.worth() { other } else { self }
    }

    fn contains(self) -> Need {
        match self {
            Need::Exactly(set) => Need::Contains(set),
            other => other,
        }
    }
}

/// The strings one of which every match of `expr` holds, when they are worth a search of
/// their own: none for a pattern that is only strings (the engine looks for those itself),
/// for one that can match the empty string, or for strings too short or too many.
pub(super) fn of(expr: &Hir) -> Option<Vec<Vec<u8>>> {
    let props = expr.properties();
    if props.is_literal() || props.is_alternation_literal() {
        return None;
    }
    let need = hir::visit(expr, Summary::default()).ok()?;
    let (shortest, _) = need.worth()?;
    match need {
        Need::Contains(set) | Need::Exactly(set) if shortest >= SHORTEST => Some(set),
        _ => None,
    }
}

/// Each node's [`Need`], once its children's are known.
#[derive(Default)]
struct Summary {
    /// The needs of visited nodes whose parent has not been visited yet.
    done: Vec<Need>,
}

impl Summary {
    fn take(&mut self, n: usize) -> Vec<Need> {
        self.done.split_off(self.done.len().saturating_sub(n))
    }
}

impl Visitor for Summary {
    type Output = Need;
    type Err = std::convert::Infallible;

    fn visit_post(&mut self, node: &Hir) -> Result<(), Self::Err> {
        let need = match node.kind() {
            HirKind::Empty | HirKind::Look(_) => Need::Exactly(vec![Vec::new()]),
            HirKind::Literal(hir::Literal(bytes)) => Need::Exactly(vec![bytes.to_vec()]),
            HirKind::Class(class) => members(class).map_or(Need::Nothing, Need::Exactly),
            HirKind::Capture(_) => self.done.pop().unwrap_or(Need::Nothing),
            HirKind::Repetition(rep) => {
                let sub = self.done.pop().unwrap_or(Need::Nothing);
                match (rep.min, rep.max) {
                    (0, _) => Need::Nothing,
                    (1, Some(1)) => sub,
                    _ => sub.contains(),
                }
            }
            HirKind::Concat(parts) => sequence(self.take(parts.len())),
            HirKind::Alternation(parts) => either(self.take(parts.len())),
        };
        self.done.push(need);
        Ok(())
    }

    fn finish(mut self) -> Result<Need, Self::Err> {
        Ok(self.done.pop().unwrap_or(Need::Nothing))
    }
}

/// A class's characters (or bytes) as strings, when there are few.
fn members(class: &Class) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    match class {
        Class::Unicode(set) => {
            let count: u32 =
                set.iter().map(|r| u32::from(r.end()) - u32::from(r.start()) + 1).sum();
            if count > CLASS_MOST {
                return None;
            }
            for c in set.iter().flat_map(|r| r.start()..=r.end()) {
                out.push(c.encode_utf8(&mut [0; 4]).as_bytes().to_vec());
            }
        }
        Class::Bytes(set) => {
            let count: u32 = set.iter().map(|r| u32::from(r.end() - r.start()) + 1).sum();
            if count > CLASS_MOST {
                return None;
            }
            out.extend(set.iter().flat_map(|r| r.start()..=r.end()).map(|b| vec![b]));
        }
    }
    // A class of nothing matches nothing: no string to look for.
    (!out.is_empty()).then_some(out)
}

/// The need of a concatenation: runs of exactly known parts multiplied out (`get` `[Dd]` `ata`
/// is `getData` or `getdata`), the best of those runs and of the other parts' strings.
fn sequence(parts: Vec<Need>) -> Need {
    let mut best = Need::Nothing;
    // The strings of the run of exact parts so far, and whether the run is all the parts.
    let mut run: Vec<Vec<u8>> = vec![Vec::new()];
    let mut whole = true;
    for part in parts {
        match part {
            Need::Exactly(set) => match product(&run, &set) {
                Some(longer) => run = longer,
                None => {
                    whole = false;
                    best = best.better(Need::Contains(std::mem::replace(&mut run, set)));
                }
            },
            other => {
                whole = false;
                best = best.better(Need::Contains(std::mem::replace(&mut run, vec![Vec::new()])));
                best = best.better(other);
            }
        }
    }
    if whole { Need::Exactly(run) } else { best.better(Need::Contains(run)) }
}

/// Every string of `a` followed by every string of `b`, unless that makes too many.
fn product(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len().saturating_mul(b.len()) > MOST {
        return None;
    }
    let mut out: Vec<Vec<u8>> =
        a.iter().flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat())).collect();
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// The need of an alternation: each branch's strings together, when every branch has some.
fn either(branches: Vec<Need>) -> Need {
    let mut all = Vec::new();
    let mut exact = true;
    for branch in branches {
        match branch {
            Need::Exactly(set) => all.extend(set),
            Need::Contains(set) => {
                exact = false;
                all.extend(set);
            }
            Need::Nothing => return Need::Nothing,
        }
    }
    all.sort_unstable();
    all.dedup();
    if all.len() > MOST {
        Need::Nothing
    } else if exact {
        Need::Exactly(all)
    } else {
        Need::Contains(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needed(pattern: &str) -> Option<Vec<String>> {
        let hir = regex_syntax::ParserBuilder::new().utf8(false).build().parse(pattern).unwrap();
        of(&hir).map(|set| set.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect())
    }

    #[test]
    fn the_strings_every_match_holds_are_found() {
        let some = |p: &str, want: &[&str]| assert_eq!(needed(p).unwrap(), want, "{p}");
        some(r"\w+Handler\b", &["Handler"]);
        some(r".{3000}Handler", &["Handler"]);
        some(r"\w*a\w{20}QQQ|\w*a\w{20}RRR", &["QQQ", "RRR"]);
        some(r"\w+[Hh]andler", &["Handler", "handler"]);
        some(r"(foo|bar)\d+", &["bar", "foo"]);
        // The fewer strings of the same length win.
        some(r"(foo|bar)\d+baz", &["baz"]);
        some(r"\bx(abc)+y\b", &["abc"]);
        some(r"\s(?:ab|cd)\s", &["ab", "cd"]);
    }

    #[test]
    fn nothing_is_looked_for_when_it_would_not_help_or_could_miss() {
        for p in [
            "plain",
            "one|two", // the engine's own literal search
            r"\w+",
            "a*b*",
            r"(foo)?\w+", // no string needed
            r"\w+a\d",    // one byte: too common
            r"foo|\w+",   // a branch with nothing
            r"[a-z]{5}",  // a class too wide
        ] {
            assert_eq!(needed(p), None, "{p}");
        }
    }

    #[test]
    fn sets_stay_small() {
        // 2^12 spellings: the longest run that fits is kept.
        let set = needed(r"\w(?i:abcdefghijkl)").unwrap();
        assert!(set.len() <= MOST && set.iter().all(|s| s.len() == 6), "{set:?}");
    }
}
