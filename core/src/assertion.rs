//! What a short text asserts, and how two of them relate: the comparison review uses when no
//! judge function is configured.
//!
//! A text becomes an `Assertion`: its content words in order, as lemmas (core/src/lexicon.rs),
//! each marked negated when it lies in the scope of a negation ("not", "no", "never", "without",
//! "nobody", a contraction's "n't") up to the end of its clause; its numbers, dates and amounts
//! in canonical form (units and currencies resolved); its identifiers (cust_7714); and a passive
//! clause turned active ("the refund was approved by Alice" reads as "Alice approve refund").
//!
//! Two assertions are compared by aligning their content words (equal lemmas or WordNet
//! synonyms, the longest common subsequence) and looking at what is left over between the
//! aligned words:
//! - a word both say, with opposite polarity: a negation;
//! - numbers, dates or amounts where each side has one the other lacks: a number;
//! - at the same place, antonyms ("enabled"/"disabled") or opposite prepositions ("to"/"from",
//!   "on"/"off"): an antonym or a preposition;
//! - at the same place, another value ("prefers email"/"prefers phone", "a man"/"a woman"),
//!   unless one is a synonym or a more general word for the other: a value;
//! - the same words with two of them on opposite sides of a third ("Acme pays Globex" /
//!   "Globex pays Acme"): swapped roles.
//!
//! Words one side adds are neither a contradiction nor nothing: the two are equivalent (and may
//! be merged as duplicates) only when nothing is left over on either side, so a one-way
//! entailment ("is very near" / "is near") is never a duplicate. Different identifiers on the
//! two sides are different subjects: never a contradiction, never equivalent.

use crate::interrupt::Every;
use crate::lexicon::{self, Relation};
use crate::text::normalize;
use std::collections::BTreeSet;

/// The comparison's loops check for interrupts once per this many steps.
const CHECK_EVERY: usize = 4096;
/// Content words aligned exactly, position by position, at most; a longer text is compared by
/// its first this many (review compares short statements; the bound keeps a pair quadratic in
/// a constant).
const MAX_WORDS: usize = 200;
/// At most this many words on each side of one place read as "another value there"; more is a
/// different statement altogether.
const MAX_SWAP: usize = 2;

const NEGATIONS: &[&str] = &["not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "nowhere"];

/// Words that carry no value of their own: articles, auxiliaries, pronouns, most prepositions.
const FILLER: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "at", "by", "for", "with", "as", "be", "is", "are", "was",
    "were", "been", "being", "am", "it", "its", "this", "that", "these", "those", "there", "here",
    "have", "has", "had", "having", "do", "does", "did", "doing", "will", "would", "shall", "also",
    "just", "please", "note", "any", "some", "their", "they", "them", "he", "she", "his", "her",
    "him", "we", "our", "us", "you", "your", "i", "me", "my", "who", "which", "whose", "whom",
    "what", "one", "someone", "somebody", "anyone", "anybody", "anything", "currently", "now", "still", "s", "re", "ve", "ll", "d",
    "m", "t", "so", "then", "than", "if", "via", "per", "about", "such", "each", "both",
];

/// Prepositions and particles whose opposite changes the meaning; kept as words, compared by
/// this table, and otherwise ignored when one side simply has one more.
const OPPOSITE: &[(&str, &str)] = &[
    ("to", "from"), ("into", "from"), ("on", "off"), ("in", "out"), ("into", "out"), ("inside", "outside"),
    ("before", "after"), ("above", "below"), ("over", "under"), ("up", "down"), ("for", "against"),
    ("including", "excluding"), ("with", "without"), ("onto", "off"), ("early", "late"), ("earlier", "later"),
    ("always", "never"), ("more", "less"), ("most", "least"), ("min", "max"), ("minimum", "maximum"),
    ("first", "last"), ("open", "closed"),
];
const PREPOSITIONS: &[&str] = &[
    "to", "from", "into", "onto", "on", "off", "in", "out", "inside", "outside", "before", "after", "above",
    "below", "over", "under", "up", "down", "against", "including", "excluding",
];

/// Words that end a passive's agent ("by Acme for hosting", "by Contoso every month"), besides
/// PREPOSITIONS ("of" does not: "by the head of finance").
const AGENT_ENDS: &[&str] = &[
    "for", "with", "at", "via", "per", "about", "during", "since", "until", "within", "through", "across", "because",
    // a time after the agent ("paid by Contoso every month")
    "every", "each", "once", "twice", "today", "yesterday", "tomorrow", "daily", "weekly", "monthly", "yearly", "annually",
];

/// Clause boundaries: a negation's scope ends here, and so does a passive's agent.
const CLAUSE_WORDS: &[&str] = &["and", "but", "or", "while", "whereas", "although", "though", "because", "however", "yet"];

const NUMBER_WORDS: &[(&str, u32)] = &[
    ("zero", 0), ("one", 1), ("two", 2), ("three", 3), ("four", 4), ("five", 5), ("six", 6), ("seven", 7),
    ("eight", 8), ("nine", 9), ("ten", 10), ("eleven", 11), ("twelve", 12), ("thirteen", 13), ("fourteen", 14),
    ("fifteen", 15), ("sixteen", 16), ("seventeen", 17), ("eighteen", 18), ("nineteen", 19), ("twenty", 20), ("thirty", 30),
    ("forty", 40), ("fifty", 50), ("sixty", 60), ("seventy", 70), ("eighty", 80), ("ninety", 90), ("hundred", 100), ("thousand", 1000), ("dozen", 12), ("single", 1),
    ("couple", 2), ("twice", 2), ("once", 1), ("half", 0),
];

/// Ordinals, read as "1st", "3rd" are: the number, of unit "ord" ("second" is a unit of time
/// too, left out).
const ORDINALS: &[(&str, u32)] = &[
    ("first", 1), ("third", 3), ("fourth", 4), ("fifth", 5), ("sixth", 6), ("seventh", 7), ("eighth", 8),
    ("ninth", 9), ("tenth", 10), ("eleventh", 11), ("twelfth", 12), ("fifteenth", 15), ("twentieth", 20), ("thirtieth", 30),
];
const MONTHS: &[&str] = &[
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
];
/// (unit, canonical unit, factor)
const UNITS: &[(&str, &str, f64)] = &[
    ("kg", "g", 1000.0), ("kilogram", "g", 1000.0), ("g", "g", 1.0), ("gram", "g", 1.0), ("mg", "g", 0.001),
    ("km", "m", 1000.0), ("kilometer", "m", 1000.0), ("kilometre", "m", 1000.0), ("m", "m", 1.0), ("meter", "m", 1.0),
    ("metre", "m", 1.0), ("cm", "m", 0.01), ("mm", "m", 0.001), ("l", "l", 1.0), ("liter", "l", 1.0), ("litre", "l", 1.0),
    ("ml", "l", 0.001), ("lb", "lb", 1.0), ("pound", "gbp?", 1.0), ("lbs", "lb", 1.0), ("mb", "b", 1e6), ("gb", "b", 1e9),
    ("kb", "b", 1e3), ("tb", "b", 1e12), ("percent", "%", 1.0), ("%", "%", 1.0), ("h", "s", 3600.0), ("hour", "s", 3600.0),
    ("hr", "s", 3600.0), ("minute", "s", 60.0), ("min", "s", 60.0), ("second", "s", 1.0), ("sec", "s", 1.0),
    ("day", "day", 1.0), ("week", "day", 7.0), ("month", "month", 1.0), ("year", "month", 12.0),
    ("$", "usd", 1.0), ("usd", "usd", 1.0), ("dollar", "usd", 1.0), ("€", "eur", 1.0), ("eur", "eur", 1.0),
    ("euro", "eur", 1.0), ("£", "gbp", 1.0), ("gbp", "gbp", 1.0), ("¥", "jpy", 1.0), ("jpy", "jpy", 1.0), ("yen", "jpy", 1.0),
    ("am", "am", 1.0), ("pm", "pm", 1.0), ("cent", "usd", 0.01), ("k", "", 1000.0),
];
const MONTH_ABBREVIATIONS: &[&str] = &["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"];

/// The month a word names (0-based), full or abbreviated.
pub(crate) fn month(w: &str) -> Option<usize> {
    MONTHS.iter().position(|m| *m == w).or_else(|| {
        MONTH_ABBREVIATIONS.iter().position(|m| *m == w).map(|k| if k > 8 { k - 1 } else { k })
    })
}

/// One content word: its lemma, and whether a negation's scope covers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub lemma: String,
    /// The word as written (lowercased): the lexicon tries each of its possible lemmas.
    pub surface: String,
    pub negated: bool,
    /// A number, date or amount, compared by value and unit.
    pub quantity: Option<Quantity>,
    /// "and" joins it to the next word, one word each ("speaks Spanish and Italian").
    pub and_next: bool,
}

/// A number as the text states it: its canonical value and unit (e.g. "5000" "g", "1250" "usd",
/// "2026-03-01" "date").
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Quantity {
    pub value: String,
    pub unit: Option<String>,
    /// The word that makes it a bound rather than a value: "more" than $500, "before"
    /// 2026-04-01, at "least" three.
    pub bound: Option<String>,
}

/// Words that make the number after them a bound.
const BOUNDS: &[&str] = &[
    "more", "less", "fewer", "under", "over", "above", "below", "least", "most", "between", "before", "after",
    "since", "until", "till", "within", "up", "approximately", "about", "around", "roughly", "nearly", "almost",
    "greater", "higher", "lower", "exceeding", "exceeds", "max", "min", "maximum", "minimum",
];

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assertion {
    /// Content words in order (a passive clause turned active).
    pub words: Vec<Word>,
    pub numbers: Vec<Quantity>,
    /// Identifiers: tokens that mix letters with digits or underscores (cust_7714, ord-4410).
    pub ids: BTreeSet<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    Negation,
    Number,
    Antonym,
    Preposition,
    Roles,
    Value,
}

impl Difference {
    /// Every finding, in the order of their index.
    pub const ALL: [Difference; 6] =
        [Difference::Negation, Difference::Number, Difference::Antonym, Difference::Preposition, Difference::Roles, Difference::Value];

    /// Its place in `ALL`.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Difference::Negation => "negation",
            Difference::Number => "number",
            Difference::Antonym => "antonym",
            Difference::Preposition => "preposition",
            Difference::Roles => "roles",
            Difference::Value => "value",
        }
    }
}

/// How two assertions relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    /// They cannot both hold, and why.
    pub difference: Option<Difference>,
    /// They say the same: nothing is left over on either side. Only these may be merged.
    pub equivalent: bool,
    /// Each names an identifier the other does not: they are about different subjects, and
    /// neither differs from nor repeats the other.
    pub other_subjects: bool,
    /// Either side states a number, date, time or amount.
    pub quantities: bool,
    /// At some place each side has content words the other lacks (no synonym, no more general
    /// word): besides any finding, the two speak of different things there.
    pub other_words: bool,
    /// Both state the same numbers, dates and amounts and name the same identifiers, and no two
    /// things swap roles.
    pub same_values: bool,
    /// A word both say stands elsewhere in one of them ("Nine episodes ordered were broadcast" /
    /// "Nine broadcast episodes were ordered").
    pub reordered: bool,
    /// One side has content words (not numbers) the other does not, or a more general word, or
    /// a preposition that says more ("Shipping for ord_1180 costs ¥500" / "ord_1180 costs
    /// ¥3,000").
    pub more_words: bool,
    /// A number of either side is a bound ("over $500", "at least three", "before noon").
    pub bounds: bool,
    /// Two things swap roles in a relation that holds one way only (`ONE_WAY`: "reports to",
    /// "acquired", "owes", "prefers … over").
    pub one_way_roles: bool,
    /// Two things swap places in a relation that holds both ways (`SYMMETRIC`: "is married to",
    /// "is the neighbour of"), nothing else changed: the same statement.
    pub symmetric_roles: bool,
    /// Each states a date or a month of a year, and they are other times ("in January 2026" /
    /// "in February 2026"; not "on 2025-07-04" / "in July 2025").
    pub other_times: bool,
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    /// A number with the unit glued to it, if any ("5kg", "3pm").
    Number(f64, Option<String>),
    Date(String),
    Id(String),
    /// A currency or percent sign.
    Symbol(String),
    /// Clause punctuation.
    Stop,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits normalised text into tokens. "cust_7714's" is the identifier cust_7714 (the
/// possessive dropped); "doesn't" is "does" "not"; "$1,250.00" is "$" and 1250; "2026-03-01"
/// is a date; "e-mail" is one word.
fn lex(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut every = Every::new(CHECK_EVERY);
    while i < chars.len() {
        every.tick(1);
        let c = chars[i];
        if matches!(c, '$' | '€' | '£' | '¥' | '%') {
            out.push(Tok::Symbol(c.to_string()));
            i += 1;
        } else if matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '(' | ')' | '"' | '—' | '–') {
            if !matches!(c, '"' | ':') {
                out.push(Tok::Stop);
            }
            i += 1;
        } else if is_word_char(c) {
            let start = i;
            // a word: letters, digits, '_', and inner '-', '.', ',' (between digits) or '/'
            while i < chars.len() {
                let ch = chars[i];
                let next = chars.get(i + 1).copied();
                if is_word_char(ch) {
                    i += 1;
                } else if matches!(ch, '-' | '/') && next.is_some_and(is_word_char) && i > start {
                    i += 1;
                } else if matches!(ch, '.' | ',' | ':')
                    && chars[i - 1].is_ascii_digit()
                    && next.is_some_and(|n| n.is_ascii_digit())
                {
                    i += 1;
                } else {
                    break;
                }
            }
            let w: String = chars[start..i].iter().collect();
            // contractions and possessives
            if i < chars.len() && matches!(chars[i], '\'' | '’') && chars.get(i + 1).is_some_and(|c| c.is_alphabetic()) {
                let mut j = i + 1;
                while j < chars.len() && chars[j].is_alphabetic() {
                    j += 1;
                }
                let tail: String = chars[i + 1..j].iter().collect();
                i = j;
                if tail == "t" && w.ends_with('n') {
                    let base = &w[..w.len() - 1];
                    let base = match base {
                        "ca" => "can",
                        "wo" => "will",
                        "sha" => "shall",
                        "ai" => "be",
                        b => b,
                    };
                    push_word(&mut out, base);
                    out.push(Tok::Word("not".into()));
                    continue;
                }
                push_word(&mut out, &w);
                // 's 're 've 'll 'd 'm: possessive or auxiliary, nothing of its own
                continue;
            }
            push_word(&mut out, &w);
        } else {
            i += 1;
        }
    }
    // "half a kilogram", "half an hour": the number 0.5, which takes the unit after it as any
    // number does
    let mut k = 0;
    while k + 2 < out.len() {
        if matches!(&out[k], Tok::Word(h) if h == "half")
            && matches!(&out[k + 1], Tok::Word(a) if a == "a" || a == "an")
            && matches!(&out[k + 2], Tok::Word(u) if unit_of(u).is_some())
        {
            out.splice(k..k + 2, [Tok::Number(0.5, None)]);
        }
        k += 1;
    }
    // "a week", "an hour": the number one, which takes the unit after it ("once a week", "twice a
    // day", "$5 a month" are rates, left as they are); "a quarter of an hour": a quarter
    const TIME_UNITS: &[&str] = &["second", "minute", "hour", "day", "week", "month", "year"];
    let mut k = 0;
    while k + 1 < out.len() {
        let rate = k > 0
            && match &out[k - 1] {
                Tok::Number(..) | Tok::Symbol(_) => true,
                Tok::Word(p) => {
                    matches!(p.as_str(), "once" | "twice" | "thrice" | "times" | "per" | "every" | "quarter" | "half") || unit_of(p).is_some()
                }
                _ => false,
            };
        let quarter = k + 3 < out.len()
            && matches!(&out[k], Tok::Word(q) if q == "quarter")
            && matches!(&out[k + 1], Tok::Word(o) if o == "of")
            && matches!(&out[k + 2], Tok::Word(a) if a == "a" || a == "an")
            && matches!(&out[k + 3], Tok::Word(u) if TIME_UNITS.contains(&u.as_str()));
        if quarter {
            out.splice(k..k + 3, [Tok::Number(0.25, None)]);
        } else if !rate
            && matches!(&out[k], Tok::Word(a) if a == "a" || a == "an")
            && matches!(&out[k + 1], Tok::Word(u) if TIME_UNITS.contains(&u.as_str()))
        {
            out[k] = Tok::Number(1.0, None);
        }
        k += 1;
    }
    // one word for an approximate amount ("roughly a week", "about seven days")
    for k in 0..out.len().saturating_sub(1) {
        if matches!(&out[k], Tok::Word(w) if matches!(w.as_str(), "roughly" | "approximately" | "around" | "approx"))
            && matches!(out[k + 1], Tok::Number(..) | Tok::Symbol(_))
        {
            out[k] = Tok::Word("about".into());
        }
    }
    // a day of the week beside the date it falls on says nothing more ("on Tuesday, 2026-03-10")
    let dated = out.iter().enumerate().any(|(k, t)| match t {
        Tok::Date(_) => true,
        Tok::Word(w) if w != "may" && month(w).is_some() => {
            matches!(out.get(k + 1), Some(Tok::Number(..))) || (k > 0 && matches!(out[k - 1], Tok::Number(..)))
        }
        _ => false,
    });
    if dated {
        let mut k = 0;
        while k < out.len() {
            if matches!(&out[k], Tok::Word(w) if WEEKDAYS.contains(&w.as_str())) {
                let to = if matches!(out.get(k + 1), Some(Tok::Stop)) { k + 2 } else { k + 1 };
                out.drain(k..to);
            } else {
                k += 1;
            }
        }
    }
    out
}

const WEEKDAYS: &[&str] = &["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let t: String = s.chars().filter(|&c| c != ',').collect();
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit() || c == '.') || t.chars().filter(|&c| c == '.').count() > 1 {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

fn push_word(out: &mut Vec<Tok>, w: &str) {
    // "non-refundable" is "can not be refunded", "non-binding" is "not binding"
    if let Some(rest) = w.strip_prefix("non-").filter(|r| r.len() > 2 && r.chars().all(char::is_alphabetic)) {
        let stem = rest.strip_suffix("able").or_else(|| rest.strip_suffix("ible")).filter(|s| s.len() > 2);
        let verb = stem.and_then(|s| [s.to_owned(), format!("{s}e")].into_iter().find(|v| lexicon::parts_of_speech(v).contains(&lexicon::Pos::Verb)));
        if let Some(v) = verb {
            out.push(Tok::Word("can".into()));
            out.push(Tok::Word("not".into()));
            return out.push(Tok::Word(v));
        }
        out.push(Tok::Word("not".into()));
        return push_word(out, rest);
    }
    // the hours that have names ("at midnight UTC" / "at 00:00 UTC")
    match w {
        "midnight" => return out.push(Tok::Number(0.0, Some("clock".into()))),
        "noon" | "midday" => return out.push(Tok::Number(12.0, Some("clock".into()))),
        // a rate in one word is the rate in two ("$99 annually" / "99 USD per year")
        "annually" | "annual" | "yearly" | "monthly" | "weekly" | "daily" | "hourly" => {
            let unit = match w {
                "annually" | "annual" | "yearly" => "year",
                "daily" => "day",
                _ => w.trim_end_matches("ly"),
            };
            out.push(Tok::Word("per".into()));
            return out.push(Tok::Word(unit.into()));
        }
        _ => {}
    }
    if w == "cannot" {
        out.push(Tok::Word("can".into()));
        out.push(Tok::Word("not".into()));
        return;
    }
    let has_digit = w.chars().any(|c| c.is_ascii_digit());
    let has_alpha = w.chars().any(char::is_alphabetic);
    // a number in words, read as one written in digits so that its unit follows it: "fifteen
    // percent", "twenty-five days", "seventy-five-dollar"
    if let Some((x, unit)) = spelled_number(w) {
        out.push(Tok::Number(x, unit));
        return;
    }
    if !has_digit {
        if w.contains('_') {
            out.push(Tok::Id(w.to_owned()));
        } else {
            out.push(Tok::Word(w.to_owned()));
        }
        return;
    }
    if let Some(d) = iso_date(w) {
        out.push(Tok::Date(d));
        return;
    }
    // "last-4", "2-factor", "24/7": the parts, each a word or a number
    if w.contains(['-', '/']) {
        for part in w.split(['-', '/']).filter(|p| !p.is_empty()) {
            push_word(out, part);
        }
        return;
    }
    if let Some(x) = parse_number(w) {
        out.push(Tok::Number(x, None));
        return;
    }
    if let Some((h, m)) = w.split_once(':').and_then(|(h, m)| Some((h.parse::<u32>().ok()?, m.parse::<u32>().ok()?))) {
        out.push(Tok::Number(f64::from(h) + f64::from(m) / 60.0, Some("clock".into())));
        return;
    }
    // a number with its unit or ordinal suffix glued on: 5kg, 3pm, 1st, 30days
    let digits: String = w.chars().take_while(|c| c.is_ascii_digit() || matches!(c, '.' | ',')).collect();
    let rest = &w[digits.len()..];
    if !digits.is_empty() && rest.chars().all(char::is_alphabetic) && !rest.is_empty() {
        if let Some(x) = parse_number(&digits) {
            if matches!(rest, "st" | "nd" | "rd" | "th") {
                out.push(Tok::Number(x, Some("ord".into())));
            } else {
                out.push(Tok::Number(x, Some(rest.to_owned())));
            }
            return;
        }
    }
    if has_alpha {
        out.push(Tok::Id(w.to_owned()));
    } else {
        out.push(Tok::Word(w.to_owned()));
    }
}

/// The value of a cardinal from "two" to "ninety-nine" written in words (hyphenated tens and
/// units too), with a unit hyphenated after it ("seventy-five-dollar"). "One" is left alone (it
/// is as often a pronoun), and so are the words NUMBER_WORDS reads in context ("hundred",
/// "dozen", "twice"…).
pub(crate) fn spelled_number(w: &str) -> Option<(f64, Option<String>)> {
    let small = |p: &str| match NUMBER_WORDS.iter().find(|(x, _)| *x == p) {
        Some((_, n)) if (2..=90).contains(n) && !matches!(p, "dozen" | "couple" | "twice") => Some(*n),
        _ => None,
    };
    let mut parts = w.split('-');
    let first = small(parts.next()?)?;
    let mut value = first;
    let mut rest: Vec<&str> = parts.collect();
    if first >= 20 && first % 10 == 0 {
        if let Some(u) = rest.first().and_then(|p| small(p)).filter(|u| *u < 10) {
            value += u;
            rest.remove(0);
        }
    }
    match rest.as_slice() {
        [] => Some((f64::from(value), None)),
        [unit] if unit_of(unit).is_some() => Some((f64::from(value), Some((*unit).to_owned()))),
        _ => None,
    }
}

fn iso_date(w: &str) -> Option<String> {
    let p: Vec<&str> = w.split(['-', '/']).collect();
    if p.len() == 3 && p.iter().all(|x| !x.is_empty() && x.chars().all(|c| c.is_ascii_digit())) {
        let n: Vec<u32> = p.iter().map(|x| x.parse().ok()).collect::<Option<_>>()?;
        if p[0].len() == 4 && (1..=12).contains(&n[1]) && (1..=31).contains(&n[2]) {
            return Some(format!("{:04}-{:02}-{:02}", n[0], n[1], n[2]));
        }
    }
    None
}

pub(crate) fn fmt_value(x: f64) -> String {
    let r = (x * 1e6).round() / 1e6;
    if r.fract() == 0.0 && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

pub(crate) fn unit_of(w: &str) -> Option<(&'static str, f64)> {
    let w = w.trim_end_matches('s');
    let w = if w.is_empty() { "s" } else { w };
    UNITS.iter().find(|(u, _, _)| *u == w).map(|(_, c, f)| (*c, *f))
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// One token of the content sequence before negation and voice are resolved.
#[derive(Debug, Clone)]
struct Item {
    lemma: String,
    surface: String,
    quantity: Option<Quantity>,
    negated: bool,
    clause: usize,
}

/// Opposites WordNet does not pair: of permission ("allowed" / "forbidden"), of directions of
/// change ("grew" / "shrank") and of wills ("prefers WhatsApp" / "refuses to use WhatsApp").
const OPPOSITES: &[(&str, &str)] = &[
    ("allow", "forbid"), ("allow", "prohibit"), ("permit", "forbid"), ("permit", "prohibit"),
    ("grow", "shrink"), ("rise", "fall"), ("rise", "drop"), ("grow", "decline"),
    ("prefer", "refuse"), ("want", "refuse"), ("like", "refuse"), ("prefer", "avoid"), ("want", "avoid"), ("like", "avoid"),
];

/// Verbs with a particle that mean one verb: (verb, particle, the verb they mean).
const PHRASAL: &[(&str, &str, &str)] = &[
    ("ask", "for", "request"), ("go", "out", "ship"), ("send", "out", "ship"), ("move", "up", "upgrade"), ("sign", "up", "register"),
];

/// Nouns whose modifier says what they are of: (noun, what it says, the preposition before the
/// modifier put after it): "an Italian speaker" speaks Italian, "a pollen allergy" is an
/// allergy to pollen.
const HEADS_AFTER: &[(&str, &str, Option<&str>)] = &[("speaker", "speak", None), ("allergy", "allergy", Some("to"))];

/// Nouns of the one who does something, before "of": the verb they mean.
const AGENTS: &[(&str, &str)] = &[
    ("manager", "manage"), ("owner", "own"), ("founder", "found"), ("leader", "lead"), ("holder", "hold"), ("buyer", "buy"),
    ("seller", "sell"), ("supplier", "supply"), ("provider", "provide"), ("creator", "create"), ("director", "direct"),
];

/// Labels a note may open with ("FYI, …", "Reminder - …", "Important: …"): they say nothing of
/// what the note states.
const LABELS: &[&str] = &["fyi", "note", "reminder", "important", "update", "heads up", "heads-up", "ps", "p.s.", "nb", "n.b.", "btw"];

/// `text` without a leading label and its separator (a colon, a comma or a dash): what review
/// compares and what the learned judge reads.
pub fn without_label(text: &str) -> &str {
    let t = text.trim_start();
    for l in LABELS {
        let Some(head) = t.get(..l.len()).filter(|h| h.eq_ignore_ascii_case(l)) else { continue };
        let rest = &t[head.len()..];
        let sep = rest.trim_start();
        if let Some(after) = sep.strip_prefix([':', ',', '-', '\u{2013}', '\u{2014}']) {
            if after.starts_with(char::is_whitespace) && !after.trim().is_empty() {
                return after.trim_start();
            }
        }
    }
    text
}

pub fn parse(text: &str) -> Assertion {
    let text = without_label(text);
    let toks = lex(&normalize(text));
    // words written in capitals in a text that has small letters are names, not inflected words
    // ("UPS" is no plural of "up"); a text all in capitals is only shouted
    let capitals: Vec<String> = if text.chars().any(char::is_lowercase) {
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase())).map(str::to_lowercase).collect()
    } else {
        Vec::new()
    };
    let mut a = Assertion::default();
    let mut items: Vec<Item> = Vec::new();
    let mut clause = 0usize;
    let mut negating = false;
    // a passive: (index in items where the clause's subject starts, index of the participle,
    // index of the first agent word, index after its last)
    let mut passives: Vec<(usize, usize, usize, Option<usize>)> = Vec::new();
    let mut clause_start = 0usize;
    let mut after_be = false;
    let mut pending_participle: Option<usize> = None;
    let mut agent_from: Option<usize> = None;
    // where the agent's noun phrase ends: at a preposition or a number after it ("by the team on
    // 2026-02-11", "by Acme for hosting")
    let mut agent_to: Option<usize> = None;
    let mut pending_currency: Option<&'static str> = None;
    let mut bounded: Option<&str> = None;
    let mut every = Every::new(CHECK_EVERY);
    // where each "and" falls among the items
    let mut ands: Vec<usize> = Vec::new();
    let mut i = 0;
    let end_clause = |items: &Vec<Item>,
                          passives: &mut Vec<(usize, usize, usize, Option<usize>)>,
                          clause_start: &mut usize,
                          pending: &mut Option<usize>,
                          agent: &mut Option<usize>,
                          agent_to: &mut Option<usize>| {
        if let (Some(p), Some(ag)) = (*pending, *agent) {
            if ag < items.len() {
                passives.push((*clause_start, p, ag, *agent_to));
            }
        }
        *pending = None;
        *agent = None;
        *agent_to = None;
        *clause_start = items.len();
    };
    while i < toks.len() {
        every.tick(1);
        let t = &toks[i];
        i += 1;
        if let Some(ag) = agent_from.filter(|&ag| agent_to.is_none() && items.len() > ag) {
            let ends = match t {
                Tok::Word(w) => is_prep(w) || AGENT_ENDS.contains(&w.as_str()),
                Tok::Number(..) | Tok::Date(_) | Tok::Symbol(_) => true,
                _ => false,
            };
            if ends {
                agent_to = Some(items.len().max(ag + 1));
            }
        }
        match t {
            Tok::Stop => {
                negating = false;
                after_be = false;
                clause += 1;
                end_clause(&items, &mut passives, &mut clause_start, &mut pending_participle, &mut agent_from, &mut agent_to);
            }
            Tok::Symbol(s) => {
                if s != "%" {
                    pending_currency = unit_of(s).map(|(c, _)| c);
                }
            }
            Tok::Date(d) => quantity(&mut items, Quantity { value: d.clone(), unit: Some("date".into()), bound: None }, negating, clause, bounded),
            Tok::Id(id) => {
                let id = id.replace('-', "_");
                // the kind of thing an identifier names, said before it ("customer cust_6012",
                // "order ord_5521", "a customer, cust_4410"): the identifier says it already
                // (another identifier is no kind: "cust_1001 and cust_1002")
                if items.last().is_some_and(|it| it.quantity.is_none() && !a.ids.contains(&it.lemma) && abbreviates(&id, &it.surface)) {
                    items.pop();
                }
                a.ids.insert(id.clone());
                items.push(Item { lemma: id.clone(), surface: id, quantity: None, negated: negating, clause });
            }
            Tok::Number(x, glued) => {
                let mut value = *x;
                let mut unit: Option<String> = None;
                // a unit glued on, or the next word
                let next_unit = glued.clone().or_else(|| match toks.get(i) {
                    Some(Tok::Word(w)) if unit_of(w).is_some() => {
                        i += 1;
                        Some(w.clone())
                    }
                    Some(Tok::Symbol(s)) if s == "%" => {
                        i += 1;
                        Some("%".into())
                    }
                    _ => None,
                });
                if let Some(u) = next_unit {
                    match unit_of(&u) {
                        Some(("", f)) => value *= f,
                        Some((c, f)) => {
                            value *= f;
                            unit = Some(c.to_owned());
                            if c == "pm" && value < 12.0 {
                                value += 12.0;
                            }
                            if c == "pm" || c == "am" {
                                unit = Some("clock".into());
                            }
                        }
                        None => unit = Some(u),
                    }
                }
                if unit.is_none() {
                    if let Some(c) = pending_currency.take() {
                        unit = Some(c.to_owned());
                    }
                }
                if unit.is_none() {
                    // a currency code after the number: 1250 USD
                    if let Some(Tok::Word(w)) = toks.get(i) {
                        if let Some((c, _)) = unit_of(w).filter(|(c, _)| matches!(*c, "usd" | "eur" | "gbp" | "jpy")) {
                            unit = Some(c.to_owned());
                            i += 1;
                        }
                    }
                }
                // "March 1st, 2026" / "1 March 2026": a date
                let day = value.fract() == 0.0 && (1.0..=31.0).contains(&value) && (unit.is_none() || unit.as_deref() == Some("ord"));
                if let Some(m) = items.last().and_then(|it| month(&it.surface)).filter(|_| day) {
                    items.pop();
                    let year = year_at(&toks, &mut i, true);
                    quantity(&mut items, date(&year, m, value), negating, clause, bounded);
                    continue;
                }
                // "August 2025", "in March 2026": a month of a year
                let year = glued.is_none() && value.fract() == 0.0 && (1900.0..=2999.0).contains(&value);
                if let Some(m) = items.last().filter(|it| it.surface != "may").and_then(|it| month(&it.surface)).filter(|_| year && unit.is_none()) {
                    items.pop();
                    let q = Quantity { value: format!("{:04}-{:02}", value as i64, m + 1), unit: Some("month-date".into()), bound: None };
                    quantity(&mut items, q, negating, clause, bounded);
                    continue;
                }
                if let Some(m) = toks.get(i).and_then(|t| if let Tok::Word(w) = t { month(w) } else { None }).filter(|_| day) {
                    i += 1;
                    // "9 October 1933", "9 October, 1933"
                    let year = year_at(&toks, &mut i, true);
                    quantity(&mut items, date(&year, m, value), negating, clause, bounded);
                    continue;
                }
                quantity(&mut items, Quantity { value: fmt_value(value), unit, bound: None }, negating, clause, bounded);
            }
            Tok::Word(w) => {
                let w = w.as_str();
                if let Some(b) = BOUNDS.iter().find(|b| **b == w) {
                    bounded = Some(b);
                } else if !matches!(w, "than" | "to" | "of" | "at" | "and" | "or" | "equal") && unit_of(w).is_none() {
                    bounded = None;
                }
                // "and" between two words, nothing else between them ("Spanish and Italian", not
                // "mostly andesitic and some basaltic")
                let word_at = |t: Option<&Tok>| matches!(t, Some(Tok::Id(_))) || matches!(t, Some(Tok::Word(x)) if !FILLER.contains(&x.as_str()) && !NEGATIONS.contains(&x.as_str()));
                if w == "and" && word_at(before(&toks, i)) && word_at(toks.get(i)) {
                    ands.push(items.len());
                }
                if CLAUSE_WORDS.contains(&w) {
                    negating = false;
                    after_be = false;
                    clause += 1;
                    end_clause(&items, &mut passives, &mut clause_start, &mut pending_participle, &mut agent_from, &mut agent_to);
                    continue;
                }
                if NEGATIONS.contains(&w) {
                    negating = true;
                    if w == "without" {
                        // "with"'s opposite is its negation
                    }
                    continue;
                }
                if let Some((_, n)) = ORDINALS.iter().find(|(x, _)| *x == w) {
                    quantity(&mut items, Quantity { value: n.to_string(), unit: Some("ord".into()), bound: None }, negating, clause, bounded);
                    continue;
                }
                // "half of the invoices" is 50 % of them
                if w == "half" && matches!(toks.get(i), Some(Tok::Word(p)) if p == "of") {
                    quantity(&mut items, Quantity { value: "50".into(), unit: Some("%".into()), bound: None }, negating, clause, bounded);
                    continue;
                }
                if let Some((_, n)) = NUMBER_WORDS.iter().find(|(x, _)| *x == w) {
                    // "one" is a number where it counts ("only one", "exactly one"), not as
                    // a pronoun ("no one", "the one", "one of")
                    let counts = w != "one" || matches!(before(&toks, i), Some(Tok::Word(p)) if matches!(p.as_str(), "only" | "exactly" | "just"));
                    if w != "half" && counts {
                        quantity(&mut items, Quantity { value: n.to_string(), unit: None, bound: None }, negating, clause, bounded);
                        continue;
                    }
                }
                if matches!(w, "is" | "are" | "was" | "were" | "be" | "been" | "being" | "am" | "get" | "got" | "gets") {
                    after_be = true;
                    continue;
                }
                // "takes place" says "is" ("the review takes place on 2024-09-10" / "the review is
                // on 10 September 2024")
                if matches!(w, "take" | "takes" | "took" | "taken" | "taking") && matches!(toks.get(i), Some(Tok::Word(p)) if p == "place") {
                    i += 1;
                    after_be = true;
                    continue;
                }
                if w == "by" && pending_participle.is_some() && agent_from.is_none() {
                    agent_from = Some(items.len());
                    continue;
                }
                if let Some(c) = unit_of(w).filter(|(c, _)| matches!(*c, "usd" | "eur" | "gbp" | "jpy")).map(|(c, _)| c) {
                    if matches!(toks.get(i), Some(Tok::Number(..))) {
                        pending_currency = Some(c);
                        continue;
                    }
                }
                if FILLER.contains(&w) {
                    continue;
                }
                let mut lemma = if capitals.iter().any(|c| c == w) { w.to_owned() } else { lexicon::lemma(w) };
                // after a form of "be": a word that is not its own lemma, nor a gerund or a plural
                let participle = after_be && lemma != w && !w.ends_with("ing") && !w.ends_with('s');
                // a verb and its particle that say one verb ("asked for" a quote requested it; an
                // order that "went out" shipped), or the one who does it ("the manager of the
                // Athens team" manages it)
                if let Some(Tok::Word(next)) = toks.get(i) {
                    if let Some((_, _, v)) = PHRASAL.iter().find(|(verb, particle, _)| *verb == lemma && next == particle) {
                        lemma = (*v).to_owned();
                        i += 1;
                    } else if let Some((_, v)) = AGENTS.iter().find(|(noun, _)| *noun == w).filter(|_| next == "of") {
                        lemma = (*v).to_owned();
                        i += 1;
                    }
                }
                // "an Italian speaker" speaks Italian; "a pollen allergy" is an allergy to
                // pollen; "allergic" says "allergy"
                if let Some((_, head, prep)) = HEADS_AFTER.iter().find(|(h, _, _)| *h == lemma) {
                    // (the modifier right before it, no article or verb between)
                    let modifier = items.last().is_some_and(|it| {
                        it.quantity.is_none() && it.clause == clause && matches!(before(&toks, i), Some(Tok::Word(x)) if *x == it.surface)
                    });
                    if let Some(m) = items.pop_if(|_| modifier) {
                        items.push(Item { lemma: (*head).to_owned(), surface: w.to_owned(), quantity: None, negated: negating, clause });
                        if let Some(p) = prep {
                            items.push(Item { lemma: (*p).to_owned(), surface: (*p).to_owned(), quantity: None, negated: negating, clause });
                        }
                        items.push(m);
                        after_be = false;
                        continue;
                    }
                }
                if lemma == "allergic" {
                    lemma = "allergy".to_owned();
                }
                if participle && pending_participle.is_none() {
                    pending_participle = Some(items.len());
                }
                after_be = false;
                items.push(Item { lemma, surface: w.to_owned(), quantity: None, negated: negating, clause });
            }
        }
    }
    end_clause(&items, &mut passives, &mut clause_start, &mut pending_participle, &mut agent_from, &mut agent_to);
    let _ = clause;

    // Passive to active: [subject…] [participle] [between…] by [agent…] [rest…] → [agent…]
    // [participle] [subject…] [between…] [rest…], the rest being what follows the agent's noun
    // phrase in its clause.
    let mut order: Vec<usize> = (0..items.len()).collect();
    for &(start, p, ag, to) in passives.iter().rev() {
        let end = items[ag..].iter().position(|it| it.clause != items[ag].clause).map_or(items.len(), |k| ag + k);
        if start > p || p >= ag {
            continue;
        }
        let to = to.map_or(end, |t| t.clamp(ag + 1, end));
        let mut new: Vec<usize> = Vec::with_capacity(end - start);
        new.extend(ag..to);
        new.push(p);
        new.extend(start..p);
        new.extend(p + 1..ag);
        new.extend(to..end);
        order.splice(start..end, new);
    }
    order.truncate(MAX_WORDS);
    a.words = order
        .iter()
        .enumerate()
        .map(|(at, &k)| Word {
            lemma: items[k].lemma.clone(),
            surface: items[k].surface.clone(),
            negated: items[k].negated,
            quantity: items[k].quantity.clone(),
            // an "and" right after it, before the next item, both no number, and the two still
            // next to each other once voice is resolved
            and_next: ands.contains(&(k + 1))
                && order.get(at + 1) == Some(&(k + 1))
                && items[k].quantity.is_none()
                && items[k + 1].quantity.is_none(),
        })
        .collect();
    // A date written without its year takes the year of the text's other dates, if they agree.
    let years: BTreeSet<&str> = items
        .iter()
        .filter_map(|it| it.quantity.as_ref())
        .filter(|q| q.unit.as_deref() == Some("date") && !q.value.starts_with("????"))
        .map(|q| &q.value[..4])
        .collect();
    if years.len() == 1 {
        let y = years.into_iter().next().unwrap_or_default().to_owned();
        for w in &mut a.words {
            if let Some(q) = w.quantity.as_mut().filter(|q| q.value.starts_with("????")) {
                q.value = format!("{y}{}", &q.value[4..]);
                w.lemma = format!("#{}date", q.value);
            }
        }
    }
    a.numbers = a.words.iter().filter_map(|w| w.quantity.clone()).collect();
    a.numbers.sort();
    a.numbers.dedup();
    a
}

/// The token before the one the parser just took (`toks[i - 1]`, with `i` already past it).
fn before(toks: &[Tok], i: usize) -> Option<&Tok> {
    i.checked_sub(2).map(|k| &toks[k])
}

/// Whether an identifier's letters before its digits ("acct" of acct_2231, two at least) are an
/// abbreviation of `word`: its first letter, then the others in order ("account").
fn abbreviates(id: &str, word: &str) -> bool {
    let prefix: Vec<char> = id.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    if prefix.len() < 2 || !word.starts_with(prefix[0]) {
        return false;
    }
    let mut rest = word.chars();
    prefix.iter().all(|p| rest.any(|c| c == *p))
}

/// The year at `toks[*i]` (after a comma too when `after_comma`: "March 1st, 2026"), taken;
/// "????" when there is none.
fn year_at(toks: &[Tok], i: &mut usize, after_comma: bool) -> String {
    let year = |t: Option<&Tok>| match t {
        Some(Tok::Number(y, None)) if (1900.0..=2999.0).contains(y) => Some(format!("{:04}", *y as i64)),
        _ => None,
    };
    if let Some(y) = year(toks.get(*i)) {
        *i += 1;
        return y;
    }
    if after_comma && matches!(toks.get(*i), Some(Tok::Stop)) {
        if let Some(y) = year(toks.get(*i + 1)) {
            *i += 2;
            return y;
        }
    }
    "????".into()
}

/// The date `year`-`month0 + 1`-`day`.
fn date(year: &str, month0: usize, day: f64) -> Quantity {
    Quantity { value: format!("{year}-{:02}-{:02}", month0 + 1, day as i64), unit: Some("date".into()), bound: None }
}

fn quantity(items: &mut Vec<Item>, mut q: Quantity, negated: bool, clause: usize, bound: Option<&str>) {
    q.bound = bound.map(str::to_owned);
    let lemma = format!("#{}{}", q.value, q.unit.as_deref().unwrap_or(""));
    items.push(Item { surface: lemma.clone(), lemma, quantity: Some(q), negated, clause });
}

// ---------------------------------------------------------------------------------------------
// Comparing

fn is_prep(w: &str) -> bool {
    PREPOSITIONS.contains(&w)
}

/// Prepositions one side may have and the other not without saying more ("ships to Lisbon" /
/// "ships Lisbon-bound" aside, these mostly mark a verb's object). The others ("outside",
/// "before", "above"…) add information.
fn light_prep(w: &str) -> bool {
    matches!(w, "to" | "from" | "in" | "on" | "into" | "onto" | "up" | "down" | "out" | "off")
}

fn opposite(a: &str, b: &str) -> bool {
    lexicon::paired(OPPOSITE, a, b)
}

/// Whether two words mean the same here: equal lemmas or synonyms (over every lemma the written
/// forms may have), or quantities of the same value and unit (or a unit on one side only).
fn same(a: &Word, b: &Word) -> bool {
    match (&a.quantity, &b.quantity) {
        (Some(x), Some(y)) => return same_quantity(x, y),
        (None, None) => {}
        _ => return false,
    }
    a.lemma == b.lemma
        || (!is_prep(&a.lemma)
            && !is_prep(&b.lemma)
            && (matches!(lexicon::relation(&a.lemma, &b.lemma), Relation::Same | Relation::Synonym)
                || (a.surface != a.lemma || b.surface != b.lemma)
                    && matches!(lexicon::relation(&a.surface, &b.surface), Relation::Same | Relation::Synonym)))
}

/// The longest common subsequence of the two word lists under `same`: pairs of indexes.
fn align(a: &[Word], b: &[Word]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    let mut eq = vec![false; n * m];
    let mut every = Every::new(CHECK_EVERY);
    for i in 0..n {
        for j in 0..m {
            every.tick(1);
            eq[i * m + j] = same(&a[i], &b[j]);
        }
    }
    // dp[i][j]: LCS length of a[i..], b[j..]
    let mut dp = vec![0u16; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            dp[i * (m + 1) + j] = if eq[i * m + j] {
                dp[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                dp[(i + 1) * (m + 1) + j].max(dp[i * (m + 1) + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n && j < m {
        if eq[i * m + j] && dp[i * (m + 1) + j] == dp[(i + 1) * (m + 1) + j + 1] + 1 {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if dp[(i + 1) * (m + 1) + j] >= dp[i * (m + 1) + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Whether two words that both texts say stand on opposite sides of a third in one text and the
/// other way round in the other ("Acme pays Globex" / "Globex pays Acme").
fn roles_swapped(a: &Assertion, in_b: &dyn Fn(&Word) -> Option<usize>) -> Option<(usize, usize)> {
    const ROLE_WORDS: usize = 48;
    // where each word of `a` is in `b`; a number may stand between two swapped words ("34
    // Nigerians, 28 Chadians" / "34 Chadians, 28 Nigerians") but is not itself a role
    // (a preposition too: "prefers email over phone" / "prefers phone over email")
    let pos: Vec<Option<usize>> = a.words.iter().take(ROLE_WORDS).map(in_b).collect();
    let role = |k: usize| a.words[k].quantity.is_none() && !is_prep(&a.words[k].lemma);
    let n = pos.len();
    let mut every = Every::new(CHECK_EVERY);
    for x in (0..n).filter(|&k| role(k)) {
        let Some(bx) = pos[x] else { continue };
        for y in (x + 2..n).filter(|&k| role(k)) {
            let Some(by) = pos[y] else { continue };
            if by >= bx {
                continue;
            }
            for z in pos.iter().take(y).skip(x + 1) {
                every.tick(1);
                if let Some(bz) = *z {
                    if by < bz && bz < bx {
                        return Some((x, y));
                    }
                }
            }
        }
    }
    None
}

/// Relations that hold one way only: of two things, at most one reports to, is the parent of,
/// acquired, owes or is preferred to the other ("Priya reports to Tomás" / "Tomás reports to
/// Priya"), where "pays", "sends invoices to" or "emailed" may hold both ways.
const ONE_WAY: &[&str] = &[
    "report", "parent", "subsidiary", "owe", "acquire", "merge", "own", "owner", "manage", "manager", "supervise",
    "supervisor", "prefer", "precede", "succeed", "replace", "outrank", "employ", "employer", "hire", "older", "younger",
    "senior", "junior", "superior", "subordinate",
];

/// Whether `b` is `a` with the two things at `a`'s words `x` and `y` swapped and nothing else
/// changed, in a relation that holds one way only: its word between them, or just before the
/// first ("prefers email over phone"). A sentence restructured around a relation ("Ron
/// Atkinson, the manager of West Bromwich Albion" / "West Bromwich Albion manager Ron Atkinson")
/// is no such swap.
fn one_way(a: &Assertion, b: &Assertion, r: (usize, usize)) -> bool {
    swapped_around(a, b, r, ONE_WAY)
}

/// Relations that hold both ways: two things swapped in one are the same statement.
const SYMMETRIC: &[&str] = &["married", "marry", "sibling", "spouse", "neighbor", "neighbour", "cousin", "twin"];

/// Whether `b` is `a` with the two things at `a`'s words `x` and `y` swapped and nothing else
/// changed, with a word of `relation` between them or just before the first.
fn swapped_around(a: &Assertion, b: &Assertion, (x, y): (usize, usize), relation: &[&str]) -> bool {
    let swapped = |k: usize| if k == x { y } else if k == y { x } else { k };
    a.words.len() == b.words.len()
        && (0..a.words.len()).all(|k| same(&a.words[swapped(k)], &b.words[k]))
        && a.words[x.saturating_sub(1)..y].iter().any(|w| relation.contains(&w.lemma.as_str()))
}

/// The same quantity: the same value, with the same unit or a unit on one side only.
fn same_quantity(x: &Quantity, y: &Quantity) -> bool {
    // (an ordinal is no count: "three lessons" / "the third lesson")
    let ord = |q: &Quantity| q.unit.as_deref() == Some("ord");
    x.value == y.value && (x.unit == y.unit || x.unit.is_none() || y.unit.is_none()) && ord(x) == ord(y)
}

/// Whether two quantities measure the same kind of thing, so that two values of them at one
/// place differ: the same unit, or two currencies, or two units of duration ("2 hours" / "2
/// days", "$75" / "€75").
fn same_kind(x: &Quantity, y: &Quantity) -> bool {
    let kind = |u: Option<&str>| match u {
        Some("usd" | "eur" | "gbp" | "jpy") => Some("money"),
        Some("s" | "day" | "month") => Some("duration"),
        Some("date" | "month-date") => Some("time"),
        _ => None,
    };
    x.unit == y.unit || kind(x.unit.as_deref()).is_some_and(|k| kind(y.unit.as_deref()) == Some(k))
}

/// Whether each states a time (a date, a month of a year) and none of one is a time of the
/// other.
fn other_times(a: &Assertion, b: &Assertion) -> bool {
    let times = |x: &Assertion| x.numbers.iter().filter(|q| matches!(q.unit.as_deref(), Some("date" | "month-date"))).cloned().collect::<Vec<_>>();
    let (ta, tb) = (times(a), times(b));
    !ta.is_empty() && !tb.is_empty() && !ta.iter().any(|x| tb.iter().any(|y| same_quantity(x, y) || day_of_month(x, y)))
}

/// Whether one is a day of the other, a month ("2025-07-04" / "July 2025"): the same time told
/// less precisely, no other value.
fn day_of_month(x: &Quantity, y: &Quantity) -> bool {
    let within = |d: &Quantity, m: &Quantity| {
        d.unit.as_deref() == Some("date") && m.unit.as_deref() == Some("month-date") && d.value.starts_with(&format!("{}-", m.value))
    };
    within(x, y) || within(y, x)
}

/// Whether every number of each side has its match on the other.
fn same_numbers(a: &[Quantity], b: &[Quantity]) -> bool {
    a.iter().all(|q| b.iter().any(|o| same_quantity(q, o))) && b.iter().all(|q| a.iter().any(|o| same_quantity(q, o)))
}

/// Whether a bound and an opposite bound leave values both allow ("above $50" / "below $100"):
/// each is (the word that bounds, the number it bounds).
fn ranges_meet(a: (&str, &Quantity), b: (&str, &Quantity)) -> bool {
    const LOWER: &[&str] = &["above", "over", "after", "more", "min", "minimum"];
    const UPPER: &[&str] = &["below", "under", "before", "less", "max", "maximum"];
    let ((lo, l), (hi, h)) = if LOWER.contains(&a.0) { (a, b) } else { (b, a) };
    if !LOWER.contains(&lo) || !UPPER.contains(&hi) {
        return false;
    }
    // numbers by value, dates (ISO 8601) in order
    match (l.value.parse::<f64>(), h.value.parse::<f64>()) {
        (Ok(x), Ok(y)) => x < y,
        _ => l.unit.as_deref() == Some("date") && h.unit.as_deref() == Some("date") && l.value < h.value,
    }
}

/// The longest phrase a moved word of `a` may be part of when it is put before the rest.
const MAX_FRONTED: usize = 4;

/// Where `a` opens with a phrase (a time, a frequency: "Every month, …", "On weekdays …") that
/// `b` states, word for word, at its end, the rest of both aligned in one order (`pairs`), or `a`
/// ends with one `b` opens with: that phrase's range in `a`.
fn fronted(a: &Assertion, b: &Assertion, pairs: &[(usize, usize)]) -> Option<std::ops::Range<usize>> {
    let (&(i0, j0), &(i1, j1)) = (pairs.first()?, pairs.last()?);
    // (a phrase with a verb in the past in it is a clause: "After his retirement he died and
    // remained in Krzemieniec" / "He remained in Krzemieniec after his retirement and died")
    let verb = |w: &Word| w.surface != w.lemma && w.surface.ends_with("ed");
    let same_run = |x: &[Word], y: &[Word]| {
        !x.is_empty()
            && x.len() <= MAX_FRONTED
            && x.len() == y.len()
            && x.iter().zip(y).all(|(p, q)| same(p, q) && p.negated == q.negated)
            && !x.iter().any(verb)
    };
    if j0 == 0 && same_run(&a.words[..i0], &b.words[j1 + 1..]) && i1 + 1 == a.words.len() {
        return Some(0..i0);
    }
    if i0 == 0 && same_run(&a.words[i1 + 1..], &b.words[..j0]) && j1 + 1 == b.words.len() {
        return Some(i1 + 1..a.words.len());
    }
    None
}

/// `a` with each two words "and" joins in one order (by lemma), if any are in the other.
fn coordinated_in_order(a: &Assertion) -> Option<Assertion> {
    let mut out = a.clone();
    let mut swapped = false;
    for k in 0..out.words.len().saturating_sub(1) {
        let (x, y) = (&out.words[k], &out.words[k + 1]);
        // (words as written, no inflected verb: "retirement and died" are two clauses)
        let plain = |w: &Word| w.surface == w.lemma;
        if x.and_next && y.quantity.is_none() && x.negated == y.negated && plain(x) && plain(y) && x.lemma > y.lemma {
            out.words.swap(k, k + 1);
            out.words[k].and_next = true;
            out.words[k + 1].and_next = false;
            swapped = true;
        }
    }
    swapped.then_some(out)
}

/// How `a` and `b` compare; where the words of one are in another order only because two words
/// "and" joins are ("speaks Spanish and Italian" / "speaks Italian and Spanish"), as if they
/// were in the same.
pub fn compare(a: &Assertion, b: &Assertion) -> Comparison {
    let c = compare_as_written(a, b);
    if !c.reordered {
        return c;
    }
    let (ca, cb) = (coordinated_in_order(a), coordinated_in_order(b));
    if ca.is_none() && cb.is_none() {
        return c;
    }
    let again = compare_as_written(ca.as_ref().unwrap_or(a), cb.as_ref().unwrap_or(b));
    if again.reordered { c } else { again }
}

fn compare_as_written(a: &Assertion, b: &Assertion) -> Comparison {
    // Different identifiers on both sides: about different subjects.
    let ids_equal = a.ids == b.ids;
    let quantities = !a.numbers.is_empty() || !b.numbers.is_empty();
    let bounded = a.numbers.iter().chain(&b.numbers).any(|q| q.bound.is_some());
    if !a.ids.is_empty() && !b.ids.is_empty() && a.ids.iter().any(|x| !b.ids.contains(x)) && b.ids.iter().any(|x| !a.ids.contains(x)) {
        return Comparison { difference: None, equivalent: false, other_subjects: true, quantities, other_words: false, same_values: false, reordered: false, more_words: false, bounds: bounded, one_way_roles: false, symmetric_roles: false, other_times: other_times(a, b) };
    }
    let numbers_equal = same_numbers(&a.numbers, &b.numbers);
    let pairs = align(&a.words, &b.words);

    let mut difference = None;
    let mut note = |d: Difference| {
        if difference.is_none() {
            difference = Some(d);
        }
    };
    // polarity of the words both say
    if pairs.iter().any(|&(i, j)| a.words[i].negated != b.words[j].negated) {
        note(Difference::Negation);
    }

    // the gaps between aligned words
    let mut leftover = false;
    let mut other_words = false;
    let mut reordered = false;
    let mut more_words = false;
    let mut swaps: Vec<(Vec<&Word>, Vec<&Word>)> = Vec::new();
    let (mut pi, mut pj) = (0usize, 0usize);
    let bounds = pairs.iter().copied().chain(std::iter::once((a.words.len(), b.words.len())));
    for (i, j) in bounds {
        let ga: Vec<&Word> = a.words[pi..i].iter().collect();
        let gb: Vec<&Word> = b.words[pj..j].iter().collect();
        if !ga.is_empty() || !gb.is_empty() {
            swaps.push((ga, gb));
        }
        pi = i + 1;
        pj = j + 1;
    }
    // Words both sides say, in another order: moved, not added. Two of them on opposite sides of
    // a third in one text and the other way round in the other is a swap of roles.
    let in_b = |w: &Word| b.words.iter().position(|x| same(w, x));
    let in_a = |w: &Word| a.words.iter().position(|x| same(w, x));
    let moved = |w: &Word, other_is_b: bool| if other_is_b { in_b(w).is_some() } else { in_a(w).is_some() };
    let swapped = roles_swapped(a, &in_b);
    let role_swap = swapped.is_some();
    if role_swap {
        note(Difference::Roles);
    }
    // (a phrase put before the rest in one and after it in the other is no reordering: "Every
    // month, Acme pays Globex" / "Acme pays Globex every month")
    let moved_phrase = fronted(a, b, &pairs);
    let is_moved_phrase = |g: &[&Word]| {
        moved_phrase.as_ref().is_some_and(|r| g.len() == r.len() && g.iter().zip(&a.words[r.clone()]).all(|(x, y)| std::ptr::eq(*x, y)))
    };
    for (ga, gb) in &swaps {
        // a preposition only one side has says more, unless it is a light one
        let says_more = |w: &Word| is_prep(&w.lemma) && !light_prep(&w.lemma);
        if ga.iter().any(|w| says_more(w) && !moved(w, true)) || gb.iter().any(|w| says_more(w) && !moved(w, false)) {
            leftover = true;
            more_words = true;
        }
        // a word both say at different places: the same words, maybe not the same statement
        // ("Nine episodes ordered were broadcast" / "Nine broadcast episodes were ordered")
        if ga.iter().any(|w| !is_prep(&w.lemma) && !a.ids.contains(&w.lemma) && moved(w, true)) && !is_moved_phrase(ga) {
            reordered = true;
        }
        let content_a: Vec<&Word> = ga.iter().copied().filter(|w| !is_prep(&w.lemma) && !moved(w, true)).collect();
        let content_b: Vec<&Word> = gb.iter().copied().filter(|w| !is_prep(&w.lemma) && !moved(w, false)).collect();
        // another number, date or amount of the same kind at the same place
        let qa: Vec<&Quantity> = content_a.iter().filter_map(|w| w.quantity.as_ref()).collect();
        let qb: Vec<&Quantity> = content_b.iter().filter_map(|w| w.quantity.as_ref()).collect();
        // opposite prepositions or particles at the same place, unless they bound two ranges that
        // meet ("above $50" / "below $100"; "above 8 °C" / "below 4 °C" do not meet)
        let opposed = ga.iter().find_map(|x| gb.iter().find(|y| opposite(&x.lemma, &y.lemma) && x.negated == y.negated).map(|y| (x, y)));
        if let Some((x, y)) = opposed {
            let ranges_meet = match (qa.as_slice(), qb.as_slice()) {
                ([p], [q]) if same_kind(p, q) => ranges_meet((&x.lemma, p), (&y.lemma, q)),
                _ => false,
            };
            if ranges_meet {
                leftover = true;
            } else {
                note(Difference::Preposition);
            }
        }
        if qa.iter().any(|x| qb.iter().any(|y| same_kind(x, y) && x.bound == y.bound && !day_of_month(x, y))) {
            note(Difference::Number);
        }
        if !qa.is_empty() || !qb.is_empty() {
            leftover = true;
        }
        let content_a: Vec<&Word> = content_a.into_iter().filter(|w| w.quantity.is_none()).collect();
        let content_b: Vec<&Word> = content_b.into_iter().filter(|w| w.quantity.is_none()).collect();
        // what is left once synonyms, antonyms under opposite polarity and more general words
        // are taken out
        let mut rest_a: Vec<&Word> = Vec::new();
        let mut used_b = vec![false; content_b.len()];
        let mut general = false;
        let mut sister = false;
        for x in &content_a {
            let mut matched = false;
            for (k, y) in content_b.iter().enumerate() {
                if used_b[k] {
                    continue;
                }
                let mut r = lexicon::relation(&x.lemma, &y.lemma);
                if r == Relation::Unrelated && (x.surface != x.lemma || y.surface != y.lemma) {
                    r = lexicon::relation(&x.surface, &y.surface);
                }
                if r == Relation::Unrelated && lexicon::paired(OPPOSITES, &x.lemma, &y.lemma) {
                    r = Relation::Antonym;
                }
                match r {
                    Relation::Sister => sister = true,
                    Relation::Antonym if x.negated != y.negated => matched = true,
                    Relation::Antonym => {
                        note(Difference::Antonym);
                        matched = true;
                    }
                    Relation::Hypernym | Relation::Hyponym => {
                        general = true;
                        matched = true;
                    }
                    _ => {}
                }
                if matched {
                    used_b[k] = true;
                    break;
                }
            }
            if !matched {
                rest_a.push(x);
            }
        }
        let rest_b: Vec<&Word> = content_b.iter().enumerate().filter(|(k, _)| !used_b[*k]).map(|(_, w)| *w).collect();
        if general || !rest_a.is_empty() || !rest_b.is_empty() {
            leftover = true;
            more_words = true;
        }
        // another value at the same place, in a statement that is otherwise the same: at least
        // as many words in common as swapped (or kinds of one thing, like "a man" / "a woman")
        if !rest_a.is_empty() && !rest_b.is_empty() {
            other_words = true;
        }
        let swapped = rest_a.len().max(rest_b.len());
        if !rest_a.is_empty() && !rest_b.is_empty() && swapped <= MAX_SWAP && (sister || pairs.len() >= swapped) {
            note(Difference::Value);
        }
    }
    // another value beside another number ("the deposit … is $75" / "the cancellation fee … is
    // $25"): two things told apart, not one thing said two ways
    if matches!(difference, Some(Difference::Value | Difference::Number)) && other_words && !numbers_equal {
        difference = None;
    }
    // words that moved only past an identifier, the rest in the same order, say the same ("The
    // refund for ord_9090 was $0.99" / "ord_9090 was refunded 99 cents"): who did what to whom
    // between two of them is a swap of roles, above
    if reordered && in_order_but_ids(a, b) == in_order_but_ids(b, a) {
        reordered = false;
    }
    // (two texts of no content word say nothing to compare: "I am." / "I am not.")
    let equivalent = difference.is_none() && !leftover && !reordered && numbers_equal && ids_equal && !role_swap && !a.words.is_empty() && !b.words.is_empty();
    let one_way_roles = swapped.is_some_and(|r| one_way(a, b, r));
    let symmetric_roles = swapped.is_some_and(|r| swapped_around(a, b, r, SYMMETRIC));
    Comparison { difference, equivalent, other_subjects: false, quantities, other_words, same_values: numbers_equal && ids_equal && !role_swap, reordered, more_words, bounds: bounded, one_way_roles, symmetric_roles, other_times: other_times(a, b) }
}

/// The content words of `x` that `y` says too, in `x`'s order, without identifiers.
fn in_order_but_ids<'a>(x: &'a Assertion, y: &Assertion) -> Vec<&'a str> {
    x.words.iter().filter(|w| !x.ids.contains(&w.lemma) && !is_prep(&w.lemma) && y.words.iter().any(|v| same(w, v))).map(|w| w.lemma.as_str()).collect()
}

/// How `a` and `b` differ in what they assert, if they do.
pub fn differs(a: &Assertion, b: &Assertion) -> Option<Difference> {
    compare(a, b).difference
}

pub fn texts_differ(a: &str, b: &str) -> Option<Difference> {
    differs(&parse(a), &parse(b))
}

/// Whether a text denies a quantifier, not a statement: "not every refund", "does not always
/// pay", "is not both a reseller and a distributor" hold beside "some refunds", "paid on time
/// once", "is a reseller".
/// The quantifier denied, when there is one; `other`, saying that quantifier itself ("All
/// refunds over $500 need approval" / "Not all refunds …"), is contradicted all the same.
pub fn denies_a_quantifier(text: &str, other: &str) -> bool {
    const QUANTIFIERS: &[&str] = &["every", "all", "always", "both", "each", "everyone", "everybody", "everything", "necessarily"];
    let words = |t: &str| -> Vec<String> {
        normalize(t).split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|t| !t.is_empty()).map(str::to_owned).collect()
    };
    let (w, o) = (words(text), words(other));
    w.windows(2).any(|p| {
        matches!(p[0].as_str(), "not" | "never" | "isn't" | "doesn't" | "don't" | "aren't")
            && QUANTIFIERS.contains(&p[1].as_str())
            && !o.contains(&p[1])
    })
}

pub fn texts_equivalent(a: &str, b: &str) -> bool {
    compare(&parse(a), &parse(b)).equivalent
}

/// Whether `a` and `b` are the same words, only two that "and" joins in the other order
/// ("cust_1001 and cust_1002 share a billing address" / "cust_1002 and cust_1001 share …").
pub fn coordinated_otherwise(a: &str, b: &str) -> bool {
    let words = |t: &str| -> Vec<String> { normalize(without_label(t)).split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()).map(str::to_owned).collect() };
    let (wa, wb) = (words(a), words(b));
    let bag = |w: &[String]| {
        let mut v = w.to_vec();
        v.sort_unstable();
        v
    };
    // (the words in the same order are no such pair: punctuation and case are the judge's)
    if wa == wb || bag(&wa) != bag(&wb) {
        return false;
    }
    let (x, y) = (parse(a), parse(b));
    let (x, y) = (coordinated_in_order(&x).unwrap_or(x), coordinated_in_order(&y).unwrap_or(y));
    !x.words.is_empty()
        && x.ids == y.ids
        && x.words.len() == y.words.len()
        && x.words.iter().zip(&y.words).all(|(p, q)| p.lemma == q.lemma && p.negated == q.negated && p.quantity == q.quantity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(a: &str, b: &str) -> Option<Difference> {
        let x = texts_differ(a, b);
        assert_eq!(x, texts_differ(b, a), "not symmetric: {a} / {b}");
        x
    }

    #[test]
    fn negation_by_scope() {
        assert_eq!(d("Customer wants paper invoices.", "Customer does not want paper invoices."), Some(Difference::Negation));
        assert_eq!(d("Customer doesn't want paper invoices.", "Customer does not want paper invoices."), None);
        assert!(texts_equivalent("Customer doesn't want paper invoices.", "Customer does not want paper invoices."));
        assert_eq!(d("Never call after 6pm.", "Do not call after 6pm."), None);
        assert_eq!(d("The account is not frozen and is not closed.", "The account is frozen and closed."), Some(Difference::Negation));
        assert_eq!(d("There is no refund for this order.", "A refund was issued for this order."), Some(Difference::Negation));
        assert_eq!(d("Nobody is playing the guitar.", "A man is playing the guitar."), Some(Difference::Negation));
    }

    #[test]
    fn numbers_dates_amounts_units() {
        assert_eq!(d("Returns are accepted within 30 days.", "Returns are accepted within 45 days."), Some(Difference::Number));
        assert_eq!(d("The contract renews on 2026-03-01.", "The contract renews on 2026-04-01."), Some(Difference::Number));
        assert!(texts_equivalent("The contract renews on 2026-03-01.", "The contract renews on March 1st, 2026."));
        assert!(texts_equivalent("Ján Sokol was born on October 9, 1933.", "Ján Sokol was born on 9 October, 1933."));
        assert_eq!(d("Refunds within 30 days.", "Refunds within 30 days for orders over 50 dollars."), None);
        assert!(texts_equivalent("Order 007 shipped.", "Order 7 shipped."));
        assert!(texts_equivalent("The refund was $1,250.00.", "The refund was 1250 USD."));
        assert!(texts_equivalent("The parcel weighs 5 kg.", "The parcel weighs 5000 g."));
        assert_eq!(d("The parcel weighs 5 kg.", "The parcel weighs 6 kg."), Some(Difference::Number));
        assert_eq!(d("Two dogs are running.", "Three dogs are running."), Some(Difference::Number));
        // numbers in words take their unit as digits do
        assert!(texts_equivalent("Refunds take 25 days.", "Refunds take twenty-five days."));
        assert!(texts_equivalent("The discount is 15%.", "The discount is fifteen percent."));
        assert!(texts_equivalent("The deposit is a seventy-five-dollar payment.", "The deposit is a $75 payment."));
        assert_eq!(d("cust_2601 placed twelve orders.", "cust_2601 placed 3 orders."), Some(Difference::Number));
        assert_eq!(d("Returns take thirty days.", "Returns take forty days."), Some(Difference::Number));
        assert!(texts_equivalent("The package weighs half a kilogram.", "The package weighs 0.5 kg."));
        assert_eq!(d("The package weighs half a kilogram.", "The package weighs 5 kg."), Some(Difference::Number));
        // another unit of the same kind at the same place
        assert_eq!(d("The deposit is $75.", "The deposit is €75."), Some(Difference::Number));
        assert_eq!(d("The SLA is 2 hours.", "The SLA is 2 days."), Some(Difference::Number));
        assert!(texts_equivalent("The SLA is 2 hours.", "The SLA is 120 minutes."));
    }

    #[test]
    fn identifiers_are_not_numbers() {
        assert!(texts_equivalent("cust_7714's refund was approved.", "The refund of cust_7714 was approved."));
        assert_eq!(d("cust_7714 prefers email.", "cust_8861 prefers phone."), None);
        assert!(!texts_equivalent("cust_7714 prefers email.", "cust_8861 prefers email."));
    }

    #[test]
    fn roles_and_voice() {
        assert_eq!(d("Acme pays Globex.", "Globex pays Acme."), Some(Difference::Roles));
        assert!(!texts_equivalent("Acme pays Globex.", "Globex pays Acme."));
        assert!(texts_equivalent("Alice approved the refund.", "The refund was approved by Alice."));
        assert_eq!(d("Alice approved the refund.", "The refund was approved by Bob."), Some(Difference::Value));
        assert!(texts_equivalent("A woman is slicing an onion.", "An onion is being sliced by a woman."));
        assert_eq!(d("On Fridays deploys are frozen.", "Deploys are frozen on Fridays."), None);
        // the agent is the noun phrase after "by": what follows it stays where it was
        assert!(texts_equivalent(
            "The billing team reviewed cust_2208's dispute on 2026-02-11.",
            "cust_2208's dispute was reviewed by the billing team on 2026-02-11."
        ));
        assert!(texts_equivalent("Acme Corp pays Globex for hosting every month.", "Globex is paid by Acme Corp for hosting every month."));
        assert!(texts_equivalent("The refund was approved by the head of finance.", "The head of finance approved the refund."));
        assert_eq!(d("Acme pays Globex for hosting.", "Acme is paid by Globex for hosting."), Some(Difference::Roles));
    }

    #[test]
    fn a_denied_quantifier() {
        assert!(denies_a_quantifier("Not every refund needs approval.", "Refunds over $500 need approval."));
        assert!(denies_a_quantifier("cust_2121 does not always pay on time.", "cust_2121 paid the March invoice on time."));
        assert!(denies_a_quantifier("cust_3307 is not both a reseller and a distributor.", "cust_3307 is a reseller."));
        // against the quantifier itself it is a denial all the same
        assert!(!denies_a_quantifier("Not all refunds over $500 need approval.", "All refunds over $500 need approval."));
        assert!(!denies_a_quantifier("The customer does not want paper invoices.", "The customer wants paper invoices."));
    }

    #[test]
    fn a_label_says_nothing() {
        assert_eq!(without_label("FYI, the Berlin warehouse won't ship on Sundays."), "the Berlin warehouse won't ship on Sundays.");
        assert_eq!(without_label("Reminder - invoices go out on the 1st."), "invoices go out on the 1st.");
        assert_eq!(without_label("Important: acct_1020 must not be charged twice."), "acct_1020 must not be charged twice.");
        // a word that only begins like a label, or a label with nothing after it
        assert_eq!(without_label("Notes on ord_1 are kept."), "Notes on ord_1 are kept.");
        assert_eq!(without_label("Important things matter."), "Important things matter.");
        assert_eq!(without_label("FYI:"), "FYI:");
        assert!(texts_equivalent("FYI, the Berlin warehouse will not ship on Sundays.", "The Berlin warehouse will not ship on Sundays."));
    }

    #[test]
    fn a_verb_and_its_particle_or_its_agent() {
        assert!(texts_equivalent("cust_3104 requested a quote for 40 laptops.", "cust_3104 asked for a quote for 40 laptops."));
        assert!(texts_equivalent("Order 1124 went out on 20 February 2024.", "Order 1124 shipped on 20 February 2024."));
        assert_eq!(d("Order 1124 went out on 20 February 2024.", "Order 1124 shipped on 21 February 2024."), Some(Difference::Number));
        assert!(texts_equivalent("Ana is the manager of the Athens team.", "Ana manages the Athens team."));
        assert_eq!(d("Returns without a receipt are allowed.", "Returns without a receipt are forbidden."), Some(Difference::Antonym));
        assert!(!texts_equivalent("Ana is the manager of the Athens team.", "Ana manages the Porto team."));
    }

    #[test]
    fn what_the_text_says_twice() {
        // the kind of thing an identifier names, before it
        assert!(texts_equivalent("cust_6012's credit limit is 5,000 dollars.", "The credit limit for customer cust_6012 is $5000."));
        assert!(texts_equivalent("There is a customer, cust_4410, who prefers SMS reminders.", "Customer cust_4410 prefers SMS reminders."));
        assert!(texts_equivalent("Booking bk_220 is confirmed.", "bk_220 is confirmed."));
        // a word the identifier does not abbreviate stays
        assert!(!texts_equivalent("Parcel ord_5 is late.", "ord_5 is late."));
        // a day of the week beside its date
        assert_eq!(
            d("The onboarding call with cust_4120 is on Tuesday, 2026-03-10.", "The onboarding call with cust_4120 is on Thursday, 2026-03-12."),
            Some(Difference::Number)
        );
        assert!(texts_equivalent("The call is on Tuesday, March 10, 2026.", "The call is on 2026-03-10."));
        // without a date the weekday is the value
        assert_eq!(d("The call is on Tuesday.", "The call is on Thursday."), Some(Difference::Value));
    }

    #[test]
    fn words_and_joins_in_either_order() {
        assert!(texts_equivalent("cust_5120 speaks Spanish and Italian.", "cust_5120 speaks Italian and Spanish."));
        assert!(texts_equivalent("Acme and Globex signed a joint contract on 2026-01-20.", "Globex and Acme signed a joint contract on 2026-01-20."));
        // only the two words "and" joins: the rest keeps its order
        assert!(!texts_equivalent("cust_1 likes green tea and black coffee.", "cust_1 likes black coffee and green tea."));
        assert_eq!(d("Ana was born in Lisbon and died in Porto.", "Ana was born in Porto and died in Lisbon."), Some(Difference::Roles));
        assert!(!texts_equivalent("Acme pays Globex and Initech.", "Globex pays Acme and Initech."));
        // with other words between them, or a verb: no two words "and" joins
        assert!(!texts_equivalent("The flanks are mostly andesitic and some basaltic lava.", "The flanks are mostly basaltic and some andesitic lava."));
    }

    #[test]
    fn a_phrase_moved_and_nothing_to_compare() {
        assert!(texts_equivalent("Every month, Acme pays Globex.", "Acme pays Globex every month."));
        // a phrase put first with a verb in it is no phrase moved
        assert!(!texts_equivalent("He remained in Krzemieniec after his retirement and died there.", "After his retirement he died and remained in Krzemieniec."));
        // nothing to compare
        assert!(!texts_equivalent("I am not.", "I am."));
        // a phrase moved is the same phrase only with the same polarity
        assert!(!texts_equivalent("Chapter 3: the Federal Mission PP.", "The Federal Mission PP is not Chapter 3."));
    }

    #[test]
    fn a_noun_its_modifier_says_what_of() {
        assert!(texts_equivalent("Luis Horvat is an Italian speaker.", "Luis Horvat speaks Italian."));
        assert!(texts_equivalent("Karl Santos has a pollen allergy.", "Karl Santos is allergic to pollen."));
        assert!(texts_equivalent("Karl Santos has an allergy to pollen.", "Karl Santos is allergic to pollen."));
        assert_eq!(d("Karl Santos is not allergic to pollen.", "Karl Santos has a pollen allergy."), Some(Difference::Negation));
        assert_eq!(d("Luis Horvat is an Italian speaker.", "Luis Horvat speaks German."), Some(Difference::Value));
        // with no modifier right before it, the noun is itself
        assert!(!texts_equivalent("The speaker arrived.", "The speaker arrived late."));
    }

    #[test]
    fn a_week_a_quarter_and_only_one() {
        assert!(texts_equivalent("Shipping to the Azores takes roughly a week.", "Shipping to the Azores takes about seven days."));
        assert!(texts_equivalent("The SLA for P1 incidents is a quarter of an hour.", "The SLA for P1 incidents is 15 minutes."));
        // a rate is no amount of time
        assert!(texts_equivalent("The subscription is 59 EUR per month.", "The subscription is 59 EUR a month."));
        assert!(!texts_equivalent("cust_1 calls once a week.", "cust_1 calls for 7 days."));
        assert_eq!(d("cust_6045 has two active subscriptions.", "cust_6045 has only one active subscription."), Some(Difference::Number));
        // ordinals: "1st" and "first" alike, and no count
        assert!(texts_equivalent("Invoices go out on the 1st business day of each month.", "Invoices go out on the first business day of each month."));
        assert!(texts_equivalent("The contract renews on March 1st, 2026.", "The contract renews on 2026-03-01."));
        assert!(!texts_equivalent("Adrin had three lessons.", "Adrin had the third lesson."));
        // "one" as a pronoun is no number
        assert!(texts_equivalent("No one from the team attended.", "Nobody from the team attended."));
    }

    #[test]
    fn prepositions() {
        assert_eq!(d("The order ships to Lisbon.", "The order ships from Lisbon."), Some(Difference::Preposition));
        assert_eq!(d("The alarm is on.", "The alarm is off."), Some(Difference::Preposition));
        // bounds of two ranges: a contradiction only where they do not meet
        assert_eq!(d("The Rotterdam cold room is kept above 8 °C.", "The Rotterdam cold room is kept below 4 °C."), Some(Difference::Preposition));
        assert_eq!(d("The price of ord_4470 is above $50.", "The price of ord_4470 is below $100."), None);
        // another thing and another amount at once: two things, not one changed
        assert_eq!(d("The deposit for booking bk_220 is $75.", "The cancellation fee for booking bk_220 is $25."), None);
        assert_eq!(d("The deposit for booking bk_220 is $75.", "The deposit for booking bk_220 is $25."), Some(Difference::Number));
        assert!(texts_equivalent("There is a guy playing a guitar.", "A guy is playing a guitar."));
    }

    #[test]
    fn synonyms_antonyms_and_general_words() {
        assert!(texts_equivalent("The kids are playing.", "The children are playing."));
        assert!(texts_equivalent("A cat is on the couch.", "A cat is on the sofa."));
        assert_eq!(d("The kids are playing.", "The children are playing."), None);
        assert_eq!(d("Two-factor login is enabled.", "Two-factor login is disabled."), Some(Difference::Antonym));
        assert!(texts_equivalent("Two-factor login is not enabled.", "Two-factor login is disabled."));
        // one-way: neither a contradiction nor equivalent
        assert_eq!(d("A dog is running.", "An animal is running."), None);
        assert!(!texts_equivalent("A dog is running.", "An animal is running."));
        assert!(!texts_equivalent("The office is very near the station.", "The office is near the station."));
    }

    #[test]
    fn values() {
        assert_eq!(d("Customer prefers email.", "Customer prefers phone."), Some(Difference::Value));
        assert_eq!(d("Account manager is Dana Lee.", "Account manager is Omar Haddad."), Some(Difference::Value));
        assert_eq!(d("Customer prefers email.", "Customer prefers email for invoices."), None);
        assert!(texts_equivalent("Customer prefers email.", "The customer prefers email."));
        assert_eq!(d("Customer prefers email.", "Deploys happen on Tuesdays after the freeze lifts."), None);
    }

    #[test]
    fn named_hours_and_one_word_rates() {
        assert!(texts_equivalent("The export runs at midnight UTC.", "The export runs at 00:00 UTC."));
        assert!(texts_equivalent("The call is at noon.", "The call is at 12:00."));
        assert_eq!(d("The call is at noon.", "The call is at 15:00."), Some(Difference::Number));
        assert!(texts_equivalent("The subscription renews at $99 annually.", "The subscription renews at 99 USD per year."));
        assert!(texts_equivalent("Three annual performances.", "Three yearly performances."));
        assert_eq!(d("The fee is 40 EUR weekly.", "The fee is 40 EUR per month."), Some(Difference::Value));
    }

    #[test]
    fn roles_swapped_in_a_one_way_relation() {
        let one_way = |a: &str, b: &str| compare(&parse(a), &parse(b)).one_way_roles;
        assert!(one_way("Acme acquired Globex in 2025.", "Globex acquired Acme in 2025."));
        assert!(one_way("acct_2050 is the parent account of acct_2051.", "acct_2051 is the parent account of acct_2050."));
        assert!(one_way("cust_1402 prefers email over phone.", "cust_1402 prefers phone over email."));
        // a relation that may hold both ways
        assert!(!one_way("Acme sends invoices to Globex.", "Globex sends invoices to Acme."));
        assert!(!one_way("Tomás emailed Priya about ord_4520.", "Priya emailed Tomás about ord_4520."));
        // restructured, not only swapped
        assert!(!one_way(
            "Ron Atkinson, the manager of West Bromwich Albion, is appointed manager of Cambridge United.",
            "West Bromwich Albion manager Ron Atkinson is appointed manager of Cambridge United."
        ));
        assert!(!one_way("Two teams of children play each other in the rain.", "The children's teams play in the rain, red versus green."));
    }

    #[test]
    fn roles_swapped_in_a_relation_that_holds_both_ways() {
        let both = |a: &str, b: &str| compare(&parse(a), &parse(b)).symmetric_roles;
        assert!(both("cust_7450 is married to cust_7451.", "cust_7451 is married to cust_7450."));
        assert!(both("cust_1 is the neighbour of cust_2.", "cust_2 is the neighbour of cust_1."));
        assert!(!both("cust_4022 referred cust_5150.", "cust_5150 referred cust_4022."));
        assert!(!both("cust_7450 is married to cust_7451.", "cust_7451 was married to cust_7450 in 2019."));
    }

    #[test]
    fn takes_place_says_is() {
        assert!(texts_equivalent("The quarterly review with Contoso takes place on 2024-09-10.", "The quarterly review with Contoso is on 10 September 2024."));
        assert!(texts_equivalent("The webinar took place in Lisbon.", "The webinar was in Lisbon."));
        // "take" alone is a verb of its own
        assert!(!texts_equivalent("Ana takes the train.", "Ana is the train."));
    }

    #[test]
    fn half_of_is_fifty_percent() {
        assert!(texts_equivalent("Half of cust_6650's invoices were paid late.", "50% of cust_6650's invoices were paid late."));
        assert_eq!(d("Half of cust_6650's invoices were paid late.", "Only 10% of cust_6650's invoices were paid late."), Some(Difference::Number));
        // "half" without "of" is left alone
        assert!(parse("The deal is half done.").numbers.is_empty());
    }

    #[test]
    fn a_word_moved_past_an_identifier_only() {
        assert!(texts_equivalent("The refund for ord_9090 was $0.99.", "ord_9090 was refunded 99 cents."));
        assert!(texts_equivalent("ord_9090 was refunded 99 cents.", "The refund for ord_9090 was $0.99."));
        // words moved past each other still are
        assert!(compare(&parse("Nine episodes ordered were broadcast."), &parse("Nine broadcast episodes were ordered.")).reordered);
        assert!(compare(&parse("The refund for ord_9090 was approved after the return."), &parse("The return for ord_9090 was approved after the refund.")).reordered);
    }

    #[test]
    fn words_in_capitals_are_names() {
        let lemmas = |t: &str| parse(t).words.iter().map(|w| w.lemma.clone()).collect::<Vec<_>>();
        assert_eq!(lemmas("ord_5120 was shipped via UPS."), ["ord_5120", "ship", "ups"]);
        assert_eq!(d("ord_5120 was shipped via UPS.", "ord_5120 was shipped via DHL."), Some(Difference::Value));
        assert!(lemmas("Prices went up and then ups and downs.").contains(&"up".to_owned()));
        assert_eq!(lemmas("THE KIDS PLAYED ON THE RIVERBANK."), lemmas("The kids played on the riverbank."));
    }

    #[test]
    fn a_time_after_a_passive_agent() {
        assert!(texts_equivalent("Vandelay Industries is paid by Contoso every month.", "Contoso pays Vandelay Industries every month."));
        assert!(texts_equivalent("The invoice was approved by Dana each Friday.", "Dana approved the invoice each Friday."));
        assert_eq!(d("Vandelay Industries is paid by Contoso every month.", "Contoso is paid by Vandelay Industries every month."), Some(Difference::Roles));
    }

    #[test]
    fn an_identifier_before_another_is_no_kind() {
        assert_eq!(parse("cust_1001 and cust_1002 share a billing address.").words.len(), 5);
        assert!(texts_equivalent("cust_1001 and cust_1002 share a billing address.", "cust_1002 and cust_1001 share a billing address."));
        // the kind before an identifier still is
        assert!(texts_equivalent("Customer cust_6012 paid.", "cust_6012 paid."));
    }

    #[test]
    fn words_joined_by_and_in_the_other_order() {
        assert!(coordinated_otherwise("cust_1001 and cust_1002 share a billing address.", "cust_1002 and cust_1001 share a billing address."));
        assert!(coordinated_otherwise("Luis speaks Spanish and Italian.", "Luis speaks Italian and Spanish."));
        assert!(!coordinated_otherwise("cust_1001 referred cust_1002.", "cust_1002 referred cust_1001."));
        assert!(!coordinated_otherwise("Ana paid and left.", "Ana left and paid."));
        assert!(!coordinated_otherwise("Luis speaks Spanish and Italian.", "Luis speaks Spanish and French."));
        assert!(!coordinated_otherwise("The VPN certificate expires in March.", "The VPN certificate expires in March!"));
    }

    #[test]
    fn non_says_not() {
        assert_eq!(d("Gift cards can be refunded.", "Gift cards are non-refundable."), Some(Difference::Negation));
        assert!(texts_equivalent("Gift cards are non-refundable.", "Gift cards cannot be refunded."));
        assert!(texts_equivalent("The offer is non-binding.", "The offer is not binding."));
    }

    #[test]
    fn opposite_directions_of_change() {
        assert_eq!(d("cust_1190's order volume grew in Q1 2026.", "cust_1190's order volume shrank in Q1 2026."), Some(Difference::Antonym));
        assert_eq!(d("Prices rose in May.", "Prices fell in May."), Some(Difference::Antonym));
        assert_eq!(d("Prices rose in May.", "Prices went up in May."), None);
        assert_eq!(d("cust_4330 prefers WhatsApp.", "cust_4330 refuses to use WhatsApp."), Some(Difference::Antonym));
        assert_eq!(d("cust_4330 wants paper invoices.", "cust_4330 avoids paper invoices."), Some(Difference::Antonym));
    }

    #[test]
    fn a_month_of_a_year() {
        assert_eq!(parse("cust_8123 joined in August 2025.").numbers[0].value, "2025-08");
        assert_eq!(d("cust_8123 joined on 2025-07-04.", "cust_8123 joined in August 2025."), Some(Difference::Number));
        // the day told, then its month: no other value, and no more than one of them says
        assert_eq!(d("cust_8123 joined on 2025-07-04.", "cust_8123 joined in July 2025."), None);
        assert!(!texts_equivalent("cust_8123 joined on 2025-07-04.", "cust_8123 joined in July 2025."));
        assert!(texts_equivalent("The promo ends in March 2026.", "The promo ends in March 2026."));
        assert_eq!(d("The promo ends in March 2026.", "The promo ends in April 2026."), Some(Difference::Number));
        // "may" before a year is the verb as often as the month
        assert!(parse("It may 2025 be").numbers.iter().all(|q| q.unit.as_deref() != Some("month-date")));
        let other = |a: &str, b: &str| compare(&parse(a), &parse(b)).other_times;
        assert!(other("cust_4012 did not order in January 2026.", "cust_4012 ordered twice in February 2026."));
        assert!(!other("cust_8123 joined on 2025-07-04.", "cust_8123 joined in July 2025."));
        assert!(!other("ord_5120 has not shipped yet.", "ord_5120 shipped on 2026-03-02."));
    }
}
