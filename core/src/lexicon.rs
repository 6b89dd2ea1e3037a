//! A compact English lexicon from WordNet 3.0, for review's word-level comparisons.
//!
//! The data is the extract in `core/data/wordnet/` (see its README.md and LICENSE),
//! compiled by `core/build.rs` into static little-endian tables: sorted lemma strings,
//! per-(lemma, part of speech) synset lists in WordNet's sense order, synset hypernyms
//! and subtree sizes, antonym pairs and the morphological exception lists. Every lookup is a
//! binary search over those tables; nothing is parsed or allocated at run time except
//! the `String`s/`Vec`s that [`lemma`] and [`lemmas`] return.
//!
//! * [`lemma`] / [`base_form`]: the single best base form of a word (WordNet's morphy
//!   plus a deterministic choice among its results, see [`lemma`]).
//! * [`lemmas`]: every base form morphy finds, best first.
//! * [`relation`]: how two words relate: [`Relation::Same`], [`Relation::Synonym`],
//!   [`Relation::Antonym`], [`Relation::Hypernym`]/[`Relation::Hyponym`],
//!   [`Relation::Sister`] (co-hyponyms) or [`Relation::Unrelated`].
//!
//! Only single ASCII words are covered (letters, inner hyphens); anything else is
//! treated as an unknown word.
//!
//! WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Used under
//! the WordNet 3.0 licence, reproduced with its disclaimer in
//! `core/data/wordnet/LICENSE`.

include!(concat!(env!("OUT_DIR"), "/lexicon_tables.rs"));

/// Part of speech, in the order the tables use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pos {
    Noun = 0,
    Verb = 1,
    Adj = 2,
    Adv = 3,
}

const ALL_POS: [Pos; 4] = [Pos::Noun, Pos::Verb, Pos::Adj, Pos::Adv];

/// How two words relate, strongest first (see [`relation`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Relation {
    /// The same word or the same base form ("went" / "go").
    Same,
    /// They share a WordNet synset among their first [`SYNONYM_SENSES`] senses
    /// ("couch" / "sofa", "kids" / "children"), in a part of speech that is the main one
    /// (by SemCor count) of at least one of them ("mother" / "father" share only a rare
    /// verb sense, "to father"); for adjectives, a satellite and its head count too
    /// ("quick" / "fast", "huge" / "large"; two satellites of one head do not: "green"
    /// and "yellow" are both satellites of "chromatic").
    Synonym,
    /// `a` is more general than `b`: one of `a`'s senses is a hypernym ancestor of one of
    /// `b`'s first [`HYPONYM_SENSES`] senses, at most [`HYPERNYM_LEVELS`] levels up
    /// ("animal" / "dog").
    Hypernym,
    /// `a` is more specific than `b` (the mirror of [`Relation::Hypernym`]).
    Hyponym,
    /// WordNet lists them as antonyms ("early" / "late"), directly or through an
    /// adjective satellite's head ("huge" has no antonym, its head "large" has "small").
    Antonym,
    /// Co-hyponyms: not related as above, but one of the first [`SISTER_SENSES`] noun
    /// senses of each has a parent or grandparent in common whose subtree is small
    /// ([`SISTER_MAX_SUBTREE`]): "dog" / "cat" (carnivore), "guitar" / "piano", "red" /
    /// "blue", "tea" / "coffee", "monday" / "tuesday"; or, for words mainly used as
    /// verbs, a direct parent with a subtree of at most [`SISTER_MAX_SUBTREE_VERB`]
    /// ("eat" / "drink").
    Sister,
    /// None of the above, or a word the lexicon does not know.
    Unrelated,
}

impl Relation {
    /// A short lowercase name ("same", "synonym", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Same => "same",
            Relation::Synonym => "synonym",
            Relation::Hypernym => "hypernym",
            Relation::Hyponym => "hyponym",
            Relation::Antonym => "antonym",
            Relation::Sister => "sister",
            Relation::Unrelated => "unrelated",
        }
    }

    /// Order of precedence when several apply (lower wins).
    fn rank(self) -> u8 {
        match self {
            Relation::Same => 0,
            Relation::Synonym => 1,
            Relation::Antonym => 2,
            Relation::Hypernym => 3,
            Relation::Hyponym => 3,
            Relation::Sister => 4,
            Relation::Unrelated => 5,
        }
    }
}

/// Synonyms must share a synset among the first this-many senses of each word (per POS).
pub const SYNONYM_SENSES: usize = 3;
/// Hypernym/hyponym: the more specific word's first this-many senses are walked up.
pub const HYPONYM_SENSES: usize = 1;
/// Hypernym/hyponym: how many hypernym levels are walked up.
pub const HYPERNYM_LEVELS: u32 = 8;
/// Sister terms: senses considered per word.
pub const SISTER_SENSES: usize = 3;
/// Sister terms: the shared hypernym may have at most this many synsets below it, so
/// that general nodes ("activity", "person", "change") do not make everything sisters,
/// while "beverage", "season", "musical instrument", "chromatic color" do count.
/// Nouns: the shared hypernym is a parent or grandparent of each.
pub const SISTER_MAX_SUBTREE: u32 = 500;
/// Verbs, whose hierarchy is shallow and whose siblings are often manners of one act
/// ("agree" / "accept"): a shared parent only, with a small subtree, and only when the
/// verb is the main part of speech of one of the two words.
pub const SISTER_MAX_SUBTREE_VERB: u32 = 120;

/// Longest word looked up; longer words are unknown.
const MAX_WORD: usize = 48;

// ---------------------------------------------------------------- table access

#[inline]
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
}

#[inline]
fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[2 * i], b[2 * i + 1]])
}

#[inline]
fn lemma_bytes(id: u32) -> &'static [u8] {
    let i = id as usize;
    &LEMMA_TEXT[u32_at(LEMMA_OFF, i) as usize..u32_at(LEMMA_OFF, i + 1) as usize]
}

#[inline]
fn lemma_str(id: u32) -> &'static str {
    // build.rs only admits ASCII lemmas.
    std::str::from_utf8(lemma_bytes(id)).unwrap_or("")
}

fn find_lemma(word: &[u8]) -> Option<u32> {
    let (mut lo, mut hi) = (0usize, N_LEMMAS);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match lemma_bytes(mid as u32).cmp(word) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid as u32),
        }
    }
    None
}

/// The synset ids of one (lemma, POS), in sense order.
#[derive(Clone, Copy)]
struct Senses {
    start: usize,
    end: usize,
}

impl Senses {
    /// A lemma's senses are stored together, nouns first; `POS_LENS` packs how many
    /// each POS has into four nibbles.
    fn of(id: u32, pos: Pos) -> Senses {
        let lens = u16_at(POS_LENS, id as usize) as usize;
        let mut start = u32_at(SENSE_START, id as usize) as usize;
        for p in 0..pos as usize {
            start += (lens >> (4 * p)) & 0xf;
        }
        Senses { start, end: start + ((lens >> (4 * pos as usize)) & 0xf) }
    }
    #[inline]
    fn len(self) -> usize {
        self.end - self.start
    }
    #[inline]
    fn get(self, k: usize) -> u32 {
        u32_at(SENSES, self.start + k)
    }
    fn first(self, n: usize) -> impl Iterator<Item = u32> {
        (0..self.len().min(n)).map(move |k| self.get(k))
    }
    fn contains(self, s: u32) -> bool {
        (0..self.len()).any(|k| self.get(k) == s)
    }
}

/// SemCor tag count of a (lemma, POS): how often the lemma occurred in that POS.
#[inline]
fn count(id: u32, pos: Pos) -> u16 {
    u16_at(COUNTS, 4 * id as usize + pos as usize)
}

#[inline]
fn has_pos(id: u32, pos: Pos) -> bool {
    Senses::of(id, pos).len() > 0
}

fn hypernyms(s: u32) -> impl Iterator<Item = u32> {
    let i = s as usize;
    (u32_at(HYPER_IDX, i) as usize..u32_at(HYPER_IDX, i + 1) as usize).map(|k| u32_at(HYPER, k))
}

#[cfg(test)]
fn synset_pos(s: u32) -> Pos {
    ALL_POS[POS_END.iter().position(|&end| s < end).unwrap_or(3)]
}

fn is_antonym(a: u32, b: u32) -> bool {
    antonym_index(a, b).is_some()
}

#[inline]
fn exc_form(i: usize) -> &'static [u8] {
    &EXC_TEXT[u32_at(EXC_OFF, i) as usize..u32_at(EXC_OFF, i + 1) as usize]
}

/// Indices of the exception entries for `word` (all POS).
fn exceptions(word: &[u8]) -> std::ops::Range<usize> {
    let lower = {
        let (mut lo, mut hi) = (0usize, N_EXCEPTIONS);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if exc_form(mid) < word {
                lo = mid + 1
            } else {
                hi = mid
            }
        }
        lo
    };
    let mut upper = lower;
    while upper < N_EXCEPTIONS && exc_form(upper) == word {
        upper += 1;
    }
    lower..upper
}

// ---------------------------------------------------------------- small fixed sets

/// A fixed-capacity, duplicate-free list on the stack.
struct Small<T: Copy + PartialEq, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + PartialEq, const N: usize> Small<T, N> {
    fn new(fill: T) -> Self {
        Small { items: [fill; N], len: 0 }
    }
    fn as_slice(&self) -> &[T] {
        &self.items[..self.len]
    }
    fn contains(&self, x: &T) -> bool {
        self.as_slice().contains(x)
    }
    /// Adds `x` unless present or full; true if added.
    fn push(&mut self, x: T) -> bool {
        if self.len == N || self.contains(&x) {
            return false;
        }
        self.items[self.len] = x;
        self.len += 1;
        true
    }
}

// ---------------------------------------------------------------- morphology

/// Where a candidate base form came from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Source {
    /// The word itself is a lemma of that POS.
    Itself,
    /// The POS's exception list (went -> go).
    Exception,
    /// A detachment rule (slicing -> slice).
    Rule,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Cand {
    id: u32,
    pos: Pos,
    source: Source,
}

type Cands = Small<Cand, 24>;

const NOUN_RULES: &[(&[u8], &[u8])] = &[
    (b"s", b""),
    (b"ses", b"s"),
    (b"xes", b"x"),
    (b"zes", b"z"),
    (b"ches", b"ch"),
    (b"shes", b"sh"),
    (b"men", b"man"),
    (b"ies", b"y"),
];
const VERB_RULES: &[(&[u8], &[u8])] = &[
    (b"s", b""),
    (b"ies", b"y"),
    (b"es", b"e"),
    (b"es", b""),
    (b"ed", b"e"),
    (b"ed", b""),
    (b"ing", b"e"),
    (b"ing", b""),
];
const ADJ_RULES: &[(&[u8], &[u8])] = &[(b"er", b""), (b"est", b""), (b"er", b"e"), (b"est", b"e")];

/// ASCII-lowercases `word` into `buf`; `None` for empty, non-ASCII or overlong words.
fn lower<'b>(word: &str, buf: &'b mut [u8; MAX_WORD]) -> Option<&'b [u8]> {
    let w = word.as_bytes();
    if w.is_empty() || w.len() > MAX_WORD || !w.is_ascii() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(w) {
        *d = s.to_ascii_lowercase();
    }
    Some(&buf[..w.len()])
}

/// WordNet's morphy for one POS: the word itself if it is a lemma, then its exceptions
/// if it has any, otherwise the base forms the detachment rules find in the table —
/// unless the word is itself a lemma of that POS, which then is its own base form ("bed"
/// is a verb, so it is not "be" + "-d"; "glasses" is a noun, so not "glass" + "-es").
fn morphy(word: &[u8], pos: Pos, out: &mut Cands) {
    let mut is_lemma_of_pos = false;
    if let Some(id) = find_lemma(word) {
        if has_pos(id, pos) {
            is_lemma_of_pos = true;
            out.push(Cand { id, pos, source: Source::Itself });
        }
    }
    let mut had_exception = false;
    for i in exceptions(word) {
        if EXC_POS[i] == pos as u8 {
            had_exception = true;
            out.push(Cand { id: u32_at(EXC_BASE, i), pos, source: Source::Exception });
        }
    }
    if had_exception || is_lemma_of_pos {
        return;
    }
    let rules = match pos {
        Pos::Noun => NOUN_RULES,
        Pos::Verb => VERB_RULES,
        Pos::Adj => ADJ_RULES,
        Pos::Adv => &[],
    };
    let mut buf = [0u8; MAX_WORD + 4];
    for (suffix, ending) in rules {
        if word.len() <= suffix.len() || !word.ends_with(suffix) {
            continue;
        }
        let stem = &word[..word.len() - suffix.len()];
        let n = stem.len() + ending.len();
        buf[..stem.len()].copy_from_slice(stem);
        buf[stem.len()..n].copy_from_slice(ending);
        if let Some(id) = find_lemma(&buf[..n]) {
            if has_pos(id, pos) {
                out.push(Cand { id, pos, source: Source::Rule });
            }
        }
    }
}

/// Every (base, POS) candidate of a lowercased word, in POS order n, v, a, r.
fn candidates(word: &[u8]) -> Cands {
    let mut out = Cands::new(Cand { id: 0, pos: Pos::Noun, source: Source::Itself });
    for pos in ALL_POS {
        morphy(word, pos, &mut out);
    }
    out
}

/// The preferred candidate of `word`: the highest SemCor count, where a participle's own
/// adjective senses (and, for -ed forms, its noun senses) count 0 when a verb base exists
/// (disabled -> disable, running -> run); ties go to a verb base form found by morphology
/// (sliced -> slice), then the word itself (us, news), then the first found (nouns before
/// verbs before adjectives before adverbs; exceptions before rules).
fn best(word: &[u8], cands: &Cands) -> Option<Cand> {
    let has_verb_base = cands.as_slice().iter().any(|c| c.pos == Pos::Verb && c.source != Source::Itself);
    let ed = has_verb_base && word.ends_with(b"ed");
    let ing = has_verb_base && word.ends_with(b"ing");
    let key = |c: &Cand| {
        let participle = c.source == Source::Itself
            && ((c.pos == Pos::Adj && (ed || ing)) || (c.pos == Pos::Noun && ed));
        let n = if participle { 0 } else { count(c.id, c.pos) };
        let tie = match (c.source, c.pos) {
            (Source::Itself, _) => 1u8,
            (_, Pos::Verb) => 2,
            _ => 0,
        };
        (n, tie)
    };
    let mut best: Option<Cand> = None;
    for c in cands.as_slice() {
        if best.is_none_or(|b| key(c) > key(&b)) {
            best = Some(*c);
        }
    }
    best
}

/// Distinct lemma ids of a word: the best base form first, then the other candidates.
fn lemma_ids(word: &[u8]) -> Small<u32, 8> {
    let cands = candidates(word);
    let mut ids = Small::new(0u32);
    if let Some(b) = best(word, &cands) {
        ids.push(b.id);
    }
    for c in cands.as_slice() {
        ids.push(c.id);
    }
    ids
}

/// The best WordNet base form of `word`, without allocating; `None` if the lexicon knows
/// no base form for it (unknown words, numbers, names it lacks, non-ASCII text).
/// See [`lemma`] for how the best one is chosen.
pub fn base_form(word: &str) -> Option<&'static str> {
    let mut buf = [0u8; MAX_WORD];
    let w = lower(word, &mut buf)?;
    best(w, &candidates(w)).map(|c| lemma_str(c.id))
}

/// The single best base form of `word` (lowercased), or the lowercased word itself when
/// the lexicon has none.
///
/// Candidates are what WordNet's morphy returns for each part of speech: the word itself
/// if it is a lemma, its exception-list bases (went → go, children → child, better →
/// good), else the bases the detachment rules find (noun -s/-ses/-xes/-zes/-ches/-shes/
/// -men/-ies, verb -s/-ies/-es/-ed/-ing with and without a restored -e, adjective
/// -er/-est; not tried for a part of speech the word is itself a lemma of: "bed" is not
/// "be" + "-d"). The choice among them is deterministic: the candidate with the highest
/// SemCor frequency for its part of speech wins, except that a participle's own
/// adjective senses (and an -ed form's noun senses) do not count when it has a verb
/// base ("disabled" → "disable", "interested" → "interest"); ties go to a verb base
/// (sliced → slice, agreed → agree), then to the word itself (us, news), then to the
/// first found. So "data" stays "data" (76 tagged uses against "datum"'s 5), "people"
/// and "glasses" stay (WordNet has them as lemmas of their own), "better" becomes
/// "good", "building" becomes "build" and "left" becomes "leave" — a context-free
/// choice; [`relation`] also tries the other candidates.
pub fn lemma(word: &str) -> String {
    match base_form(word) {
        Some(b) => b.to_string(),
        None => word.to_lowercase(),
    }
}

/// Every base form the lexicon finds for `word` (lowercased), the best ([`lemma`]) first,
/// then the others in POS order (nouns, verbs, adjectives, adverbs). Empty for unknown
/// words.
pub fn lemmas(word: &str) -> Vec<String> {
    let mut buf = [0u8; MAX_WORD];
    match lower(word, &mut buf) {
        Some(w) => lemma_ids(w).as_slice().iter().map(|&id| lemma_str(id).to_string()).collect(),
        None => Vec::new(),
    }
}

/// Whether `word` (lowercased) is itself a lemma in the lexicon, in any part of speech.
pub fn is_lemma(word: &str) -> bool {
    let mut buf = [0u8; MAX_WORD];
    lower(word, &mut buf).and_then(find_lemma).is_some()
}

/// The parts of speech `word` (lowercased) is a lemma of, as WordNet has them.
pub fn parts_of_speech(word: &str) -> Vec<Pos> {
    let mut buf = [0u8; MAX_WORD];
    match lower(word, &mut buf).and_then(find_lemma) {
        Some(id) => ALL_POS.into_iter().filter(|&p| has_pos(id, p)).collect(),
        None => Vec::new(),
    }
}

// ---------------------------------------------------------------- relations

/// Whether `pos` is a main part of speech of `id`: one with the highest SemCor count
/// (all of them when SemCor never saw the word).
fn salient(id: u32, pos: Pos) -> bool {
    let c = count(id, pos);
    has_pos(id, pos) && ALL_POS.into_iter().all(|p| count(id, p) <= c)
}

/// The head of an adjective satellite synset, or the synset itself.
fn adj_head(s: u32) -> u32 {
    hypernyms(s).next().unwrap_or(s)
}

fn synonyms(a: u32, b: u32) -> bool {
    ALL_POS.into_iter().any(|pos| {
        let (sa, sb) = (Senses::of(a, pos), Senses::of(b, pos));
        if sa.len() == 0 || sb.len() == 0 || !(salient(a, pos) || salient(b, pos)) {
            return false;
        }
        sa.first(SYNONYM_SENSES).any(|s| {
            sb.first(SYNONYM_SENSES).any(|t| s == t || (pos == Pos::Adj && (adj_head(s) == t || adj_head(t) == s)))
        })
    })
}

/// Is one of `general`'s senses an ancestor (≤ HYPERNYM_LEVELS up) of one of the first
/// HYPONYM_SENSES senses of `specific`?
fn is_hypernym_of(general: u32, specific: u32) -> bool {
    for pos in [Pos::Noun, Pos::Verb] {
        let g = Senses::of(general, pos);
        if g.len() == 0 {
            continue;
        }
        for s in Senses::of(specific, pos).first(HYPONYM_SENSES) {
            // Breadth-first walk up, level by level, on the stack.
            let mut seen: Small<u32, 192> = Small::new(0);
            seen.push(s);
            let mut level_start = 0;
            for _ in 0..HYPERNYM_LEVELS {
                let level_end = seen.len;
                if level_start == level_end {
                    break;
                }
                for k in level_start..level_end {
                    for h in hypernyms(seen.items[k]) {
                        if g.contains(h) {
                            return true;
                        }
                        seen.push(h);
                    }
                }
                level_start = level_end;
            }
        }
    }
    false
}

/// Parents (and, if `grand`, grandparents) of the first SISTER_SENSES senses of `id`.
fn near_ancestors(id: u32, pos: Pos, grand: bool) -> Small<u32, 64> {
    let mut out = Small::new(0);
    for s in Senses::of(id, pos).first(SISTER_SENSES) {
        for p in hypernyms(s) {
            out.push(p);
            if grand {
                for g in hypernyms(p) {
                    out.push(g);
                }
            }
        }
    }
    out
}

fn sisters(a: u32, b: u32) -> bool {
    for pos in [Pos::Noun, Pos::Verb] {
        if !has_pos(a, pos) || !has_pos(b, pos) {
            continue;
        }
        let (grand, max) = match pos {
            Pos::Verb if !(salient(a, pos) || salient(b, pos)) => continue,
            Pos::Verb => (false, SISTER_MAX_SUBTREE_VERB),
            _ => (true, SISTER_MAX_SUBTREE),
        };
        let (na, nb) = (near_ancestors(a, pos, grand), near_ancestors(b, pos, grand));
        if na.as_slice().iter().any(|&h| u32_at(SYN_DESC, h as usize) <= max && nb.contains(&h)) {
            return true;
        }
    }
    false
}

fn relate_ids(a: u32, b: u32) -> Relation {
    if a == b {
        Relation::Same
    } else if synonyms(a, b) {
        Relation::Synonym
    } else if is_antonym(a, b) {
        Relation::Antonym
    } else if is_hypernym_of(a, b) {
        Relation::Hypernym
    } else if is_hypernym_of(b, a) {
        Relation::Hyponym
    } else if sisters(a, b) {
        Relation::Sister
    } else {
        Relation::Unrelated
    }
}

/// Whether `a` and `b` are one of `pairs`, in either order (the hand-made word pairs the rule
/// engines keep beside WordNet: opposite prepositions, steps of a thing's life, exclusive outcomes).
pub fn paired(pairs: &[(&str, &str)], a: &str, b: &str) -> bool {
    pairs.iter().any(|(x, y)| (*x == a && *y == b) || (*x == b && *y == a))
}

/// How word `a` relates to word `b` (either may be inflected: both are lowercased and
/// lemmatised here, so callers need not call [`lemma`] first).
///
/// Each word stands for its base forms ([`lemmas`]: the best one and the other morphy
/// candidates, e.g. "left" is both "leave" and the adjective "left"); the strongest
/// relation over those pairs wins, in the order Same, Synonym, Antonym,
/// Hypernym/Hyponym, Sister, Unrelated. Words the lexicon does not know are `Same` when
/// equal (ignoring ASCII case) and `Unrelated` otherwise. Costs a few dozen binary
/// searches and no allocation.
pub fn relation(a: &str, b: &str) -> Relation {
    let (mut ba, mut bb) = ([0u8; MAX_WORD], [0u8; MAX_WORD]);
    let (wa, wb) = match (lower(a, &mut ba), lower(b, &mut bb)) {
        (Some(x), Some(y)) => (x, y),
        _ => return if a.to_lowercase() == b.to_lowercase() { Relation::Same } else { Relation::Unrelated },
    };
    if wa == wb {
        return Relation::Same;
    }
    let (ia, ib) = (lemma_ids(wa), lemma_ids(wb));
    let mut out = Relation::Unrelated;
    for &x in ia.as_slice() {
        for &y in ib.as_slice() {
            let r = relate_ids(x, y);
            if r.rank() < out.rank() {
                out = r;
            }
        }
    }
    out
}

/// Whether WordNet lists `a` and `b` (lemmatised as in [`relation`]) as antonyms and
/// the pair comes from a direct antonym pointer (`Some(true)`) or only through an
/// adjective satellite's head (`Some(false)`); `None` if they are not antonyms.
pub fn antonym_kind(a: &str, b: &str) -> Option<bool> {
    let (mut ba, mut bb) = ([0u8; MAX_WORD], [0u8; MAX_WORD]);
    let (ia, ib) = (lemma_ids(lower(a, &mut ba)?), lemma_ids(lower(b, &mut bb)?));
    let mut found = None;
    for &x in ia.as_slice() {
        for &y in ib.as_slice() {
            if let Some(i) = antonym_index(x, y) {
                let direct = ANT_KIND[i] == 0;
                if direct {
                    return Some(true);
                }
                found = Some(false);
            }
        }
    }
    found
}

fn antonym_index(a: u32, b: u32) -> Option<usize> {
    let (mut lo, mut hi) = (0usize, N_ANTONYM_PAIRS);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match (u32_at(ANT_PAIRS, 2 * mid), u32_at(ANT_PAIRS, 2 * mid + 1)).cmp(&(a, b)) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

/// Sizes of the compiled tables: (lemmas, synsets, antonym pairs counted once,
/// exception entries).
pub fn table_sizes() -> (usize, usize, usize, usize) {
    (N_LEMMAS, N_SYNSETS, N_ANTONYM_PAIRS / 2, N_EXCEPTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_consistent() {
        for id in 0..N_LEMMAS as u32 {
            let total: usize = ALL_POS.iter().map(|&p| Senses::of(id, p).len()).sum();
            assert!(total > 0);
            assert_eq!(Senses::of(id, Pos::Adv).end, u32_at(SENSE_START, id as usize + 1) as usize);
        }
        let (l, s, a, e) = table_sizes();
        assert!(l > 50_000 && s > 50_000 && a > 3_000 && e > 4_000, "{l} {s} {a} {e}");
        assert_eq!(POS_END[3] as usize, N_SYNSETS);
        assert_eq!(synset_pos(Senses::of(find_lemma(b"dog").unwrap(), Pos::Noun).get(0)), Pos::Noun);
        assert_eq!(synset_pos(Senses::of(find_lemma(b"run").unwrap(), Pos::Verb).get(0)), Pos::Verb);
        // Sorted, so binary search is sound.
        for i in 1..N_LEMMAS {
            assert!(lemma_bytes(i as u32 - 1) < lemma_bytes(i as u32));
        }
        for i in 1..N_EXCEPTIONS {
            assert!(exc_form(i - 1) <= exc_form(i));
        }
    }

    #[test]
    fn lemma_examples() {
        let cases = [
            ("slicing", "slice"),
            ("slices", "slice"),
            ("sliced", "slice"),
            ("agreed", "agree"),
            ("agrees", "agree"),
            ("children", "child"),
            ("kids", "kid"),
            ("went", "go"),
            ("gone", "go"),
            ("better", "good"),
            ("best", "good"),
            ("worse", "bad"),
            ("news", "news"),
            ("is", "be"),
            ("are", "be"),
            ("was", "be"),
            ("were", "be"),
            ("has", "have"),
            ("had", "have"),
            ("does", "do"),
            ("did", "do"),
            ("men", "man"),
            ("women", "woman"),
            ("people", "people"),
            ("running", "run"),
            ("ran", "run"),
            ("lying", "lie"),
            ("data", "data"),
            ("status", "status"),
            ("address", "address"),
            ("addresses", "address"),
            ("analysis", "analysis"),
            ("analyses", "analysis"),
            ("mice", "mouse"),
            ("boxes", "box"),
            ("churches", "church"),
            ("cities", "city"),
            ("studied", "study"),
            ("bigger", "big"),
            ("largest", "large"),
            ("enabled", "enable"),
            ("disabled", "disable"),
            ("us", "us"),
            ("Dogs", "dog"),
            ("Refunds", "refund"),
            ("glasses", "glasses"),
            ("bed", "bed"),
            ("seed", "seed"),
            ("evening", "evening"),
            ("interested", "interest"),
            ("used", "use"),
            ("xyzzy", "xyzzy"),
            ("Zürich", "zürich"),
        ];
        let mut bad = Vec::new();
        for (w, want) in cases {
            let got = lemma(w);
            if got != want {
                bad.push(format!("{w} -> {got} (want {want})"));
            }
        }
        assert!(bad.is_empty(), "{bad:#?}");
    }

    #[test]
    fn lemmas_lists_all_base_forms_best_first() {
        assert_eq!(lemmas("better")[0], "good");
        assert!(lemmas("better").contains(&"well".to_string()));
        assert!(lemmas("better").contains(&"better".to_string()));
        assert_eq!(lemmas("left")[0], "leave");
        assert!(lemmas("left").contains(&"left".to_string()));
        assert!(lemmas("qwertyuiop").is_empty());
        assert!(lemmas("").is_empty());
        assert_eq!(base_form("went"), Some("go"));
        assert_eq!(base_form("qwertyuiop"), None);
        assert!(is_lemma("Dog") && !is_lemma("dogs"));
        assert_eq!(parts_of_speech("dog"), vec![Pos::Noun, Pos::Verb]);
    }

    fn check(cases: &[(&str, &str, Relation)]) {
        let mut bad = Vec::new();
        for &(a, b, want) in cases {
            let got = relation(a, b);
            if got != want {
                bad.push(format!("{a} / {b}: {got:?} (want {want:?})"));
            }
        }
        assert!(bad.is_empty(), "{bad:#?}");
    }

    #[test]
    fn same() {
        use Relation::*;
        check(&[("dog", "dog"), ("Dogs", "dog"), ("went", "go"), ("children", "child"), ("xyzzy", "XYZZY")]
            .map(|(a, b)| (a, b, Same)));
    }

    #[test]
    fn synonyms_examples() {
        use Relation::*;
        check(&[
            ("kids", "children", Synonym),
            ("couch", "sofa", Synonym),
            ("motorbike", "motorcycle", Synonym),
            ("buy", "purchase", Synonym),
            ("big", "large", Synonym),
            ("start", "begin", Synonym),
            ("car", "automobile", Synonym),
            ("bought", "purchased", Synonym),
        ]);
        for (a, b) in [
            ("man", "woman"),
            ("dog", "cat"),
            ("guitar", "piano"),
            ("red", "blue"),
            ("green", "yellow"),   // two satellites of "chromatic"
            ("mother", "father"),  // share only the rare verb sense "to father"
            ("cancel", "terminate"),
        ] {
            assert_ne!(relation(a, b), Synonym, "{a} / {b}");
        }
        check(&[("quick", "fast", Synonym), ("huge", "large", Synonym), ("phone", "telephone", Synonym)]);
    }

    #[test]
    fn antonym_examples() {
        use Relation::*;
        check(
            &[
                ("early", "late"),
                ("enabled", "disabled"),
                ("enable", "disable"),
                ("accept", "reject"),
                ("increase", "decrease"),
                ("open", "close"),
                ("up", "down"),
                ("on", "off"),
                ("buy", "sell"),
                ("win", "lose"),
                ("full", "empty"),
                ("asleep", "awake"),
                ("young", "old"),
                ("hot", "cold"),
                ("wet", "dry"),
                ("inside", "outside"),
                ("left", "right"),
                ("above", "below"),
                ("love", "hate"),
                ("true", "false"),
                // WordNet pairs these nouns as antonyms, so they come out as Antonym
                // rather than Sister.
                ("man", "woman"),
                ("boy", "girl"),
            ]
            .map(|(a, b)| (a, b, Antonym)),
        );
        // Not in WordNet's antonym pointers (prepositions are not in WordNet at all).
        check(&[("before", "after", Unrelated), ("in", "out", Unrelated)]);
        assert_eq!(antonym_kind("early", "late"), Some(true));
        assert_eq!(antonym_kind("huge", "small"), Some(false));
        assert_eq!(relation("huge", "small"), Antonym);
        assert_eq!(antonym_kind("dog", "cat"), None);
    }

    #[test]
    fn hypernym_examples() {
        use Relation::*;
        check(&[
            ("animal", "dog", Hypernym),
            ("dog", "animal", Hyponym),
            ("instrument", "guitar", Hypernym),
            ("guitar", "instrument", Hyponym),
            ("person", "man", Hypernym),
            ("fruit", "apple", Hypernym),
            ("apples", "fruit", Hyponym),
            ("vehicle", "car", Hypernym),
        ]);
    }

    #[test]
    fn sister_examples() {
        use Relation::*;
        check(&[
            ("dog", "cat", Sister),
            ("guitar", "piano", Sister),
            ("red", "blue", Sister),
            ("tea", "coffee", Sister),
            ("monday", "tuesday", Sister),
            ("paris", "london", Sister),
            ("beer", "wine", Sister),
            ("car", "truck", Sister),
            ("eat", "drink", Sister),
        ]);
        // General shared hypernyms ("activity", "person") do not make sisters.
        check(&[("work", "job", Unrelated), ("child", "adult", Unrelated), ("agreed", "accepted", Unrelated)]);
    }

    /// `cargo test -p memory_fabric_core lexicon::tests::relation_table -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn relation_table() {
        let pairs = [
            "kids children", "couch sofa", "motorbike motorcycle", "buy purchase", "cancel terminate",
            "big large", "start begin", "car automobile", "man woman", "dog cat", "guitar piano",
            "red blue", "tea coffee", "dog animal", "animal dog", "guitar instrument", "man person",
            "apple fruit", "early late", "enabled disabled", "accept reject", "increase decrease",
            "open close", "up down", "on off", "in out", "before after", "above below", "buy sell",
            "win lose", "full empty", "asleep awake", "young old", "hot cold", "wet dry",
            "inside outside", "refund guitar", "meeting call", "house home", "car bus", "happy sad",
            "user customer", "email message", "price cost", "city town", "server database",
            "work job", "phone telephone", "laptop computer", "big small", "buy get", "boss manager",
            "friend colleague", "paris london", "january february", "english french", "python java",
            "coffee beverage", "run walk", "like love", "love hate", "always never", "true false",
            "many few", "more less", "first last", "mother father", "brother sister",
            "husband wife", "north south", "summer winter", "morning evening", "cat kitten",
            "child adult", "doctor nurse", "teacher student", "refund payment", "apple banana",
            "monday tuesday", "vegetarian vegan", "allow deny", "allow forbid", "succeed fail",
            "pass fail", "left right", "present absent", "alive dead", "public private",
            "remote local", "online offline", "light dark", "light heavy", "cheap expensive",
            "fast slow", "quick fast", "tall short", "long short", "good bad", "right wrong",
            "agree disagree", "like dislike", "remember forget", "arrive leave", "come go",
            "give take", "add remove", "include exclude", "start stop", "start finish",
            "begin end", "dog wolf", "dog puppy", "cat lion", "water juice", "beer wine",
            "car truck", "train plane", "london city", "paris france", "english language",
            "son daughter", "boy girl", "king queen", "uncle aunt", "mr mrs", "he she",
            "morning afternoon", "yesterday tomorrow", "spring autumn", "java python",
            "postgres mysql", "linux windows", "slice cut", "sliced cut", "agreed accepted",
        ];
        println!("{:<24} relation", "pair");
        for p in pairs {
            let (a, b) = p.split_once(' ').unwrap();
            println!("{:<24} {}  ({} / {})", p, relation(a, b).as_str(), lemma(a), lemma(b));
        }
    }

    #[test]
    fn unrelated_examples() {
        use Relation::*;
        check(&[("refund", "guitar", Unrelated), ("xyzzy", "dog", Unrelated), ("refund", "sofa", Unrelated)]);
    }
}
