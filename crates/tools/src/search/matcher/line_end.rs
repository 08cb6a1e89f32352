//! Keeping a match on one line: the line end taken out of everything a pattern can match, and
//! what the searcher may assume about it afterwards.
//!
//! The walk is a post-order visit of the pattern's tree that rebuilds each node from its
//! already rebuilt children, kept on a stack: no recursion, whatever the nesting.

use grep_matcher::ByteSet;
use regex_syntax::hir::{
    self, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Visitor,
};

/// `expr` with the byte `nl` (ASCII) no longer matched by any class: `\s`, `[^a]` or `(?s).`
/// stop at the end of a line. A pattern that cannot do without it (a literal line end, or a
/// class of nothing but the line end) is refused with the message ripgrep gives.
pub(super) fn strip(expr: &Hir, nl: u8) -> Result<Hir, String> {
    hir::visit(expr, Rebuild { nl, done: Vec::new() })
}

/// The bytes the searcher may take as never matched. Only the line end is worth telling it
/// (it then searches line by line); a pattern with a line or text anchor does not promise it,
/// as ripgrep's matcher does not.
pub(super) fn never_matched(stripped: &Hir, nl: u8) -> ByteSet {
    let mut set = ByteSet::empty();
    if !stripped.properties().look_set().contains_anchor() {
        set.add(nl);
    }
    set
}

fn refused(nl: u8) -> String {
    format!("the literal {:?} is not allowed in a regex", char::from(nl).to_string())
}

struct Rebuild {
    nl: u8,
    /// Rebuilt nodes whose parent has not been visited yet.
    done: Vec<Hir>,
}

impl Rebuild {
    /// The last `n` rebuilt nodes, in their order.
    fn take(&mut self, n: usize) -> Vec<Hir> {
        self.done.split_off(self.done.len().saturating_sub(n))
    }

    fn one(&mut self) -> Hir {
        self.done.pop().unwrap_or_else(Hir::empty)
    }

    fn class(&self, class: &Class) -> Result<Hir, String> {
        let mut class = class.clone();
        if nothing_in(&class) {
            // Matches nothing already: nothing to take out.
            return Ok(Hir::class(class));
        }
        match &mut class {
            Class::Unicode(set) => {
                let nl = char::from(self.nl);
                set.difference(&ClassUnicode::new([ClassUnicodeRange::new(nl, nl)]));
            }
            Class::Bytes(set) => {
                set.difference(&ClassBytes::new([ClassBytesRange::new(self.nl, self.nl)]));
            }
        }
        if nothing_in(&class) { Err(refused(self.nl)) } else { Ok(Hir::class(class)) }
    }
}

fn nothing_in(class: &Class) -> bool {
    match class {
        Class::Unicode(set) => set.ranges().is_empty(),
        Class::Bytes(set) => set.ranges().is_empty(),
    }
}

impl Visitor for Rebuild {
    type Output = Hir;
    type Err = String;

    fn visit_post(&mut self, node: &Hir) -> Result<(), String> {
        let rebuilt = match node.kind() {
            HirKind::Literal(hir::Literal(bytes)) if bytes.contains(&self.nl) => {
                return Err(refused(self.nl));
            }
            HirKind::Empty | HirKind::Literal(_) | HirKind::Look(_) => node.clone(),
            HirKind::Class(class) => self.class(class)?,
            HirKind::Repetition(rep) => {
                Hir::repetition(hir::Repetition { sub: Box::new(self.one()), ..rep.clone() })
            }
            HirKind::Capture(group) => {
                Hir::capture(hir::Capture { sub: Box::new(self.one()), ..group.clone() })
            }
            HirKind::Concat(parts) => Hir::concat(self.take(parts.len())),
            HirKind::Alternation(parts) => Hir::alternation(self.take(parts.len())),
        };
        self.done.push(rebuilt);
        Ok(())
    }

    fn finish(mut self) -> Result<Hir, String> {
        Ok(self.one())
    }
}
