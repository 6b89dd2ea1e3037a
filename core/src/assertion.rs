//! Does a text assert something different from another? The heuristic review uses when no
//! judge function is configured: a flipped negation, a different number or date, or one
//! value swapped for another while the rest of the statement stays the same.
//!
//! "Customer prefers email." / "Customer prefers email for invoices." is an elaboration, not a
//! contradiction: only one side adds words. "... within 30 days" / "... within 45 days" is.

use crate::embed::{stem, tokens, CHECK_EVERY_TOKENS};
use crate::interrupt::Every;
use crate::text::normalize;
use std::collections::BTreeSet;

const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without",
    "isnt", "arent", "wasnt", "werent", "dont", "doesnt", "didnt", "wont", "wouldnt", "cant",
    "couldnt", "shouldnt", "hasnt", "havent", "hadnt", "mustnt", "aint",
];

/// Words that carry no value of their own when swapped ("the" for "a").
const FILLER: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as",
    "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "has", "have", "had",
    "do", "does", "did", "will", "would", "should", "can", "could", "may", "might", "must", "also",
    "very", "just", "please", "note", "all", "any", "some", "their", "they", "them", "he", "she",
    "his", "her", "we", "our", "you", "your", "i", "my",
];

/// At most this many words swapped on each side still reads as "the same statement with a
/// different value"; more is a different statement altogether.
const MAX_SWAP: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assertion {
    pub negated: bool,
    pub numbers: BTreeSet<String>,
    pub words: BTreeSet<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    Negation,
    Number,
    Value,
}

impl Difference {
    pub fn as_str(self) -> &'static str {
        match self {
            Difference::Negation => "negation",
            Difference::Number => "number",
            Difference::Value => "value",
        }
    }
}

pub fn parse(text: &str) -> Assertion {
    let mut negations = 0;
    let mut numbers = BTreeSet::new();
    let mut words = BTreeSet::new();
    let mut every = Every::new(CHECK_EVERY_TOKENS);
    for t in tokens(&normalize(text)) {
        every.tick(1);
        if NEGATIONS.contains(&t.as_str()) {
            negations += 1;
        } else if t.chars().any(|c| c.is_ascii_digit()) {
            numbers.insert(t.trim_start_matches('0').to_owned());
        } else if !FILLER.contains(&t.as_str()) {
            words.insert(stem(&t));
        }
    }
    Assertion { negated: negations % 2 == 1, numbers, words }
}

/// How many elements of `x` are not in `y`, counting no further than `cap`. Checks for
/// interrupts as it goes: the sets of a long text hold many words.
fn only(x: &BTreeSet<String>, y: &BTreeSet<String>, cap: usize) -> usize {
    let mut every = Every::new(CHECK_EVERY_TOKENS);
    let mut n = 0;
    for w in x {
        every.tick(1);
        if !y.contains(w) {
            n += 1;
            if n >= cap {
                break;
            }
        }
    }
    n
}

/// How `a` and `b` differ in what they assert, if they do.
pub fn differs(a: &Assertion, b: &Assertion) -> Option<Difference> {
    if a.negated != b.negated {
        return Some(Difference::Negation);
    }
    if only(&a.numbers, &b.numbers, 1) > 0 && only(&b.numbers, &a.numbers, 1) > 0 {
        return Some(Difference::Number);
    }
    let (wa, wb) = (only(&a.words, &b.words, MAX_SWAP + 1), only(&b.words, &a.words, MAX_SWAP + 1));
    if wa > 0 && wb > 0 && wa <= MAX_SWAP && wb <= MAX_SWAP {
        return Some(Difference::Value);
    }
    None
}

/// Whether `a` states something `b` does not: a number or a content word `b` lacks. A candidate
/// that adds information is never merged into a memory as its duplicate, however similar.
pub fn adds_information(a: &Assertion, b: &Assertion) -> bool {
    only(&a.numbers, &b.numbers, 1) > 0 || only(&a.words, &b.words, 1) > 0
}

pub fn texts_differ(a: &str, b: &str) -> Option<Difference> {
    differs(&parse(a), &parse(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negation() {
        assert_eq!(texts_differ("Customer wants paper invoices.", "Customer does not want paper invoices."), Some(Difference::Negation));
        assert_eq!(texts_differ("Customer doesn't want paper invoices.", "Customer does not want paper invoices."), None);
        assert_eq!(texts_differ("Never call after 6pm.", "Do not call after 6pm."), None);
    }

    #[test]
    fn numbers_and_dates() {
        assert_eq!(texts_differ("Returns are accepted within 30 days.", "Returns are accepted within 45 days."), Some(Difference::Number));
        assert_eq!(texts_differ("The contract renews on 2026-03-01.", "The contract renews on 2026-04-01."), Some(Difference::Number));
        // One side only adds a number: an elaboration.
        assert_eq!(texts_differ("Refunds within 30 days.", "Refunds within 30 days for orders over 50 dollars."), None);
        assert_eq!(texts_differ("Order 007 shipped.", "Order 7 shipped."), None);
    }

    #[test]
    fn added_information() {
        let (a, b) = (parse("Customer wants 5 paper invoices."), parse("Customer wants paper invoices."));
        assert!(adds_information(&a, &b));
        assert!(!adds_information(&b, &a));
        let (a, b) = (parse("The customer wants paper invoices!"), parse("customer wants paper invoice"));
        assert!(!adds_information(&a, &b));
    }

    #[test]
    fn swapped_values() {
        assert_eq!(texts_differ("Customer prefers email.", "Customer prefers phone."), Some(Difference::Value));
        assert_eq!(texts_differ("Account manager is Dana Lee.", "Account manager is Omar Haddad."), Some(Difference::Value));
        assert_eq!(texts_differ("Customer prefers email.", "Customer prefers email for invoices."), None);
        assert_eq!(texts_differ("Customer prefers email.", "The customer prefers email."), None);
        // Many words swapped: a different statement, not a contradiction of this one.
        assert_eq!(texts_differ("Customer prefers email.", "Deploys happen on Tuesdays after the freeze lifts."), None);
    }
}
