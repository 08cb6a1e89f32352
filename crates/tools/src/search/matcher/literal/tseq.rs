//! The tagged literal sequence of [`super`]'s extractor (grep-regex 0.1.14, `src/literal.rs`).

use regex_syntax::hir::literal::{Literal, Seq};

#[derive(Clone, Debug)]
pub(super) struct TSeq {
    pub(super) seq: Seq,
    pub(super) prefix: bool,
}

#[allow(dead_code)]
impl TSeq {
    pub(super) fn empty() -> TSeq {
        TSeq { seq: Seq::empty(), prefix: true }
    }

    pub(super) fn infinite() -> TSeq {
        TSeq { seq: Seq::infinite(), prefix: true }
    }

    pub(super) fn singleton(lit: Literal) -> TSeq {
        TSeq { seq: Seq::singleton(lit), prefix: true }
    }

    pub(super) fn new<I, B>(it: I) -> TSeq
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        TSeq { seq: Seq::new(it), prefix: true }
    }

    pub(super) fn literals(&self) -> Option<&[Literal]> {
        self.seq.literals()
    }

    pub(super) fn push(&mut self, lit: Literal) {
        self.seq.push(lit);
    }

    pub(super) fn make_inexact(&mut self) {
        self.seq.make_inexact();
    }

    pub(super) fn make_infinite(&mut self) {
        self.seq.make_infinite();
    }

    pub(super) fn cross_forward(&mut self, other: &mut TSeq) {
        debug_assert!(other.prefix);
        self.seq.cross_forward(&mut other.seq);
    }

    pub(super) fn union(&mut self, other: &mut TSeq) {
        self.seq.union(&mut other.seq);
    }

    pub(super) fn dedup(&mut self) {
        self.seq.dedup();
    }

    pub(super) fn sort(&mut self) {
        self.seq.sort();
    }

    pub(super) fn keep_first_bytes(&mut self, len: usize) {
        self.seq.keep_first_bytes(len);
    }

    pub(super) fn is_finite(&self) -> bool {
        self.seq.is_finite()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    pub(super) fn len(&self) -> Option<usize> {
        self.seq.len()
    }

    pub(super) fn is_exact(&self) -> bool {
        self.seq.is_exact()
    }

    pub(super) fn is_inexact(&self) -> bool {
        self.seq.is_inexact()
    }

    pub(super) fn max_union_len(&self, other: &TSeq) -> Option<usize> {
        self.seq.max_union_len(&other.seq)
    }

    pub(super) fn max_cross_len(&self, other: &TSeq) -> Option<usize> {
        debug_assert!(other.prefix);
        self.seq.max_cross_len(&other.seq)
    }

    pub(super) fn min_literal_len(&self) -> Option<usize> {
        self.seq.min_literal_len()
    }

    pub(super) fn max_literal_len(&self) -> Option<usize> {
        self.seq.max_literal_len()
    }

    // Below are methods specific to a TSeq that aren't just forwarding calls
    // to a Seq method.

    /// Tags this sequence as "not a prefix." When this happens, this sequence
    /// can't be crossed as a suffix of another sequence.
    pub(super) fn make_not_prefix(&mut self) {
        self.prefix = false;
    }

    /// Returns true if it's believed that the sequence given is "good" for
    /// acceleration. This is useful for determining whether a sequence of
    /// literals has any shot of being fast.
    pub(super) fn is_good(&self) -> bool {
        if self.has_poisonous_literal() {
            return false;
        }
        let Some(min) = self.min_literal_len() else { return false };
        let Some(len) = self.len() else { return false };
        // If we have some very short literals, then let's require that our
        // sequence is itself very small.
        if min <= 1 {
            return len <= 3;
        }
        min >= 2 && len <= 64
    }

    /// Returns true if it's believed that the sequence given is "really
    /// good" for acceleration. This is useful for short circuiting literal
    /// extraction.
    pub(super) fn is_really_good(&self) -> bool {
        if self.has_poisonous_literal() {
            return false;
        }
        let Some(min) = self.min_literal_len() else { return false };
        let Some(len) = self.len() else { return false };
        min >= 3 && len <= 8
    }

    /// Returns true if the given sequence contains a poisonous literal.
    pub(super) fn has_poisonous_literal(&self) -> bool {
        let Some(lits) = self.literals() else { return false };
        lits.iter().any(is_poisonous)
    }

    /// Compare the two sequences and return the one that is believed to be
    /// best according to a hodge podge of heuristics.
    pub(super) fn choose(self, other: TSeq) -> TSeq {
        let (mut seq1, mut seq2) = (self, other);
        // Whichever one we pick, by virtue of picking one, we choose
        // to not take the other. So we must consider the result inexact.
        seq1.make_inexact();
        seq2.make_inexact();

        if !seq1.is_finite() {
            return seq2;
        } else if !seq2.is_finite() {
            return seq1;
        }
        if seq1.has_poisonous_literal() {
            return seq2;
        } else if seq2.has_poisonous_literal() {
            return seq1;
        }
        let Some(min1) = seq1.min_literal_len() else { return seq2 };
        let Some(min2) = seq2.min_literal_len() else { return seq1 };
        if min1 < min2 {
            return seq2;
        } else if min2 < min1 {
            return seq1;
        }
        // Both are finite, otherwise they would have no minimum literal length.
        let (Some(len1), Some(len2)) = (seq1.len(), seq2.len()) else { return seq1 };
        if len1 < len2 {
            return seq2;
        } else if len2 < len1 {
            return seq1;
        }
        // We could do extra stuff like looking at a background frequency
        // distribution of bytes and picking the one that looks more rare, but for
        // now we just pick one.
        seq1
    }
}

impl FromIterator<Literal> for TSeq {
    fn from_iter<T: IntoIterator<Item = Literal>>(it: T) -> TSeq {
        TSeq { seq: Seq::from_iter(it), prefix: true }
    }
}

/// Returns true if it is believe that this literal is likely to match very
/// frequently, and is thus not a good candidate for a prefilter.
fn is_poisonous(lit: &Literal) -> bool {
    use regex_syntax::hir::literal::rank;

    lit.is_empty() || (lit.len() == 1 && rank(lit.as_bytes()[0]) >= 250)
}
