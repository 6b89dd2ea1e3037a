//! What a memory claims, for review's contradiction and duplicate steps: whose claim it is, what
//! kind of claim, and, for a state, which attribute and value.
//!
//! Two memories contradict only when they give incompatible values of one single-valued attribute
//! of one subject at overlapping times (SPEC §6). So review first asks what each text claims:
//! - an **event** (something done or happening at a time: a past action, a plan, an order or a
//!   ticket by its number, anything placed by "yesterday", "on 8 May", "day 3") accumulates and
//!   never contradicts another by its number or date;
//! - a **multi-valued** fact (likes, speaks, has visited, owns, plays) coexists with another value;
//! - a **keyed state** (a single-valued attribute this module knows: where someone lives, who
//!   they work for, their diet, how they want to be contacted, their plan, …) contradicts another
//!   value of the same attribute of the same subject; a **change** of state ("moved to", "no
//!   longer", "changed jobs", "now works at", "downgraded to") supersedes the older value;
//! - a **generic state** ("The west gate opens at 10 am.", "Refunds need a manager's sign-off.")
//!   is left to the sentence comparison and the judge, as before, when each text is that one
//!   statement;
//! - anything else (questions, greetings, thanks, opinions, chat) claims nothing that can clash.
//!
//! Whose claim: a speaker's prefix ("Caroline: …", "Caroline (8 May 2023): …") makes "I", "my" and
//! "we" that speaker, and its date places the claim in time, not in its value; an identifier
//! ("cus_1") or a name opening the sentence is its subject. What one speaker says of themself is
//! not contradicted by what another says of themself.
//!
//! The rules are word patterns over the lowercased text; they are deterministic, and
//! `core/tests/claims.rs` measures them on conversations, event streams and state changes.

use crate::lexicon;

/// What kind of claim a sentence makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A single-valued attribute this module knows (`Claim::attribute`).
    State,
    /// A present statement of no known attribute, left to the sentence comparison.
    Generic,
    /// Something done or happening at a time.
    Event,
    /// One value among several the subject may have.
    Multi,
    /// Nothing that can clash: a question, a greeting, thanks, an opinion, chat.
    Other,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::State => "state",
            Kind::Generic => "generic",
            Kind::Event => "event",
            Kind::Multi => "multi",
            Kind::Other => "other",
        }
    }
}

/// One sentence's claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub kind: Kind,
    /// Whose claim: a speaker (`speaker:<name>`), an identifier or a name; None: not said.
    pub subject: Option<String>,
    /// For a keyed state: the attribute (e.g. "residence"), with a topic where it has one
    /// ("contact_channel:invoices").
    pub attribute: Option<String>,
    /// For a keyed state: its value, normalised ("porto", "email", "vegan"); None when a change
    /// only says the old value no longer holds ("quit her job").
    pub value: Option<String>,
    /// False when it says the value does not hold ("no longer follows a vegan diet").
    pub positive: bool,
    /// It says the state changed ("moved to", "no longer", "now", "switched to").
    pub change: bool,
    /// A state that held before and no longer ("lived in", "used to work at").
    pub past: bool,
    /// The things it names by number or identifier besides its subject (an order, an invoice, a
    /// parcel: "order 1001", "#8122", "inv_4410"): an event of one is not an event of another.
    pub instances: Vec<String>,
    /// How many clauses its predicate has (a second one says more than the attribute).
    pub clauses: usize,
    /// The sentence's words.
    pub words: Vec<String>,
}

/// What a text claims, sentence by sentence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    /// The speaker of a "Name: …" prefix, lowercased.
    pub speaker: Option<String>,
    /// The date of a "Name (date): …" prefix, as written.
    pub date: Option<String>,
    pub claims: Vec<Claim>,
}

impl Analysis {
    /// The one claim of a text that makes exactly one (after what claims nothing).
    pub fn single(&self) -> Option<&Claim> {
        let mut it = self.claims.iter().filter(|c| c.kind != Kind::Other);
        let c = it.next()?;
        it.next().is_none().then_some(c)
    }

    /// The kinds of its claims, for a review's notes ("state:residence", "event", …).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .claims
            .iter()
            .map(|c| match (&c.attribute, &c.value) {
                (Some(a), Some(v)) => format!("{}:{a}={}{v}{}", c.kind.as_str(), if c.positive { "" } else { "not " }, if c.change { " (change)" } else { "" }),
                (Some(a), None) => format!("{}:{a}{}", c.kind.as_str(), if c.change { " (change)" } else { "" }),
                _ => c.kind.as_str().to_owned(),
            })
            .collect();
        parts.dedup();
        parts.join(", ")
    }
}

/// How two texts' claims relate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relation {
    /// Incompatible values of one keyed attribute of one subject, both current: the first of
    /// them, and whether the first text says it changed.
    Conflict { attribute: String, change: bool },
    /// Each is the same one keyed claim (same subject, attribute, value and polarity): a
    /// duplicate whatever the words.
    Same { attribute: String },
    /// Each is one generic statement: the sentence comparison and the judge decide.
    Generic,
    /// Each is one event (or one an event and the other a statement), in a record (no speaker):
    /// it contradicts the other only by a denial (a negation, an antonym, swapped roles: events
    /// accumulate, another day or amount is another event), unless both are one event
    /// (`same_instance`: one thing and one action, one order delivered on two dates), or both
    /// tell of one thing outcomes that exclude each other (`opposed`: a refund approved and
    /// declined, an item kept and returned).
    Events { same_instance: bool, opposed: bool },
    /// Each is one value among several of the same subject, in a record: it contradicts the
    /// other only by denying it (a negation, an antonym, swapped roles), never by another value.
    Values,
    /// Nothing in one can clash with the other, and why.
    Compatible(&'static str),
}

// ---------------------------------------------------------------------------------------------
// Words

/// A text's sentences, each as lowercased word tokens (contractions split: "i'm" is "i am",
/// "don't" is "do not"; an identifier, an order number "#8122" and "e-mail" stay one token).
fn sentences(text: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    let flush = |word: &mut String, cur: &mut Vec<String>| {
        if !word.is_empty() {
            split_contraction(&word.to_lowercase(), cur);
            word.clear();
        }
    };
    for (i, &ch) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let prev = if i > 0 { chars.get(i - 1).copied() } else { None };
        let inner = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
        if ch.is_alphanumeric() || ch == '_' || ((ch == '\'' || ch == '’') && inner(prev) && inner(next))
            || ((ch == '-' || ch == '.' || ch == ':' || ch == ',') && inner(prev) && inner(next) && (ch != ',' || next.is_some_and(|c| c.is_ascii_digit()) && prev.is_some_and(|c| c.is_ascii_digit())))
            || (ch == '#' && inner(next))
        {
            word.push(if ch == '’' { '\'' } else { ch });
        } else {
            flush(&mut word, &mut cur);
            if matches!(ch, '.' | '!' | '?' | ';' | '\n') {
                if ch == '?' || ch == '!' {
                    cur.push(ch.to_string());
                }
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            } else if ch == ',' || ch == '-' || ch == '—' || ch == '(' || ch == ')' {
                cur.push(",".into());
            }
        }
    }
    flush(&mut word, &mut cur);
    if !cur.is_empty() {
        out.push(cur);
    }
    // a lone abbreviation's full stop ("Dr. Lee") does not end a sentence
    let mut merged: Vec<Vec<String>> = Vec::new();
    for s in out {
        match merged.last_mut() {
            Some(last) if last.len() == 1 && ABBREVIATIONS.contains(&last[0].as_str()) => last.extend(s),
            Some(last) if last.last().is_some_and(|w| ABBREVIATIONS.contains(&w.as_str())) && last.len() > 1 => last.extend(s),
            _ => merged.push(s),
        }
    }
    merged
}

const ABBREVIATIONS: &[&str] = &["dr", "mr", "mrs", "ms", "st", "no", "vs", "e.g", "i.e", "etc", "jr", "sr", "prof", "inc", "ltd", "co"];

fn split_contraction(w: &str, out: &mut Vec<String>) {
    const SUFFIXES: &[(&str, &[&str])] = &[
        ("n't", &["not"]), ("'m", &["am"]), ("'re", &["are"]), ("'ve", &["have"]), ("'ll", &["will"]), ("'d", &["would"]),
        ("'s", &["'s"]),
    ];
    match w {
        "can't" | "cannot" => return out.extend(["can".to_owned(), "not".to_owned()]),
        "won't" => return out.extend(["will".to_owned(), "not".to_owned()]),
        "shan't" => return out.extend(["shall".to_owned(), "not".to_owned()]),
        _ => {}
    }
    for (suf, rep) in SUFFIXES {
        if let Some(stem) = w.strip_suffix(suf) {
            if !stem.is_empty() {
                out.push(stem.to_owned());
                out.extend(rep.iter().map(|s| s.to_string()));
                return;
            }
        }
    }
    out.push(w.to_owned());
}

fn is_id(w: &str) -> bool {
    w.contains('_') && w.chars().any(|c| c.is_ascii_digit()) || (w.len() > 1 && w.starts_with('#'))
}

const FIRST_PERSON: &[&str] = &["i", "me", "my", "mine", "we", "us", "our", "myself"];
const NEGATIONS: &[&str] = &["not", "never", "no"];

const QUESTION_OPENERS: &[&str] = &["what", "how", "why", "when", "where", "who", "which", "do", "does", "did", "is", "are", "can", "could", "would", "will", "should", "have", "has", "anything", "any"];

/// Openers of what claims nothing: greetings, thanks, exclamations, agreement, advice.
const CHAT_OPENERS: &[&str] = &[
    "hi", "hey", "hello", "thanks", "thank", "wow", "cool", "awesome", "great", "glad", "sounds", "congrats",
    "congratulations", "yeah", "yes", "yep", "nope", "oh", "aw", "aww", "haha", "lol", "sure", "okay", "ok", "nice",
    "amazing", "good", "bye", "see", "take", "keep", "let", "lets", "agreed", "totally", "absolutely", "definitely",
    "exactly", "right", "true", "sorry", "omg", "ah", "hmm", "well", "so", "that", "this", "it", "you", "your", "they",
    "there", "what", "love", "lucky", "hope", "too", "same", "welcome", "cheers", "please",
];

/// Words that place a claim at a time, making an action an event.
const TIME_ANCHORS: &[&str] = &[
    "yesterday", "today", "tonight", "tomorrow", "ago", "recently", "earlier", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday",
];
const MONTHS: &[&str] = &[
    "january", "february", "march", "april", "june", "july", "august", "september", "october", "november", "december",
];
const TIME_UNITS: &[&str] = &[
    "week", "weekend", "month", "year", "night", "morning", "evening", "afternoon", "time", "summer", "winter", "spring",
    "autumn", "fall", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "fri", "sat", "sun",
];

/// Nouns whose number names one thing done: an order, a ticket, a parcel.
const INSTANCE_NOUNS: &[&str] = &["order", "orders", "ticket", "tickets", "parcel", "package", "shipment", "invoice", "payment", "refund", "case", "booking", "reservation", "delivery", "return", "request", "claim", "transaction"];

/// Irregular past tenses (regular ones end in -ed and have a verb base).
const PAST_IRREGULAR: &[&str] = &[
    "went", "came", "got", "made", "took", "saw", "bought", "sold", "met", "left", "ran", "ate", "drank", "gave", "told",
    "said", "thought", "found", "felt", "kept", "brought", "began", "wrote", "sent", "spent", "built", "paid", "won",
    "lost", "flew", "drove", "rode", "sang", "swam", "broke", "chose", "wore", "taught", "caught", "fought", "heard",
    "held", "stood", "sat", "slept", "fell", "grew", "knew", "threw", "drew", "forgot", "hid", "shook", "woke", "spoke",
    "stole", "froze", "became", "did", "had", "was", "were", "led", "lent", "meant", "put", "set", "shut", "hit", "cut",
    "let", "quit", "read", "understood", "overslept", "became", "arose", "awoke", "bent", "bit", "blew", "bled", "bred",
    "burnt", "dealt", "dug", "fed", "fled", "flung", "forgave", "hung", "knelt", "laid", "lit", "mistook", "rang", "rose",
    "sank", "slid", "sped", "spun", "sprang", "stuck", "stung", "swept", "swung", "tore", "wept", "withdrew", "wound",
];

/// An identifier of one thing rather than of someone who acts (ord_5120, prc_8812, inv_4410).
fn is_thing_id(w: &str) -> bool {
    is_id(w)
        && matches!(
            w.split('_').next().unwrap_or(""),
            "ord" | "order" | "prc" | "parcel" | "pkg" | "inv" | "invoice" | "tkt" | "ticket" | "bk" | "booking" | "pay"
                | "payment" | "ref" | "refund" | "shp" | "shipment" | "case" | "claim" | "txn" | "res" | "ret" | "return"
        )
}

/// Actions that happen to one thing once: two of them with other dates or values are one event
/// told two ways.
const ONCE: &[&str] = &[
    "ship", "deliver", "cancel", "arrive", "close", "open", "join", "found", "bear", "approve", "decline", "reject", "accept",
    "lose", "dispatch", "complete", "fail", "succeed", "merge", "acquire", "create", "start", "end", "expire", "activate",
    "terminate", "issue", "sign", "register", "die", "marry", "graduate", "launch",
];

/// Actions that follow one another in a thing's life: opposite words, never a contradiction.
const LIFECYCLE: &[(&str, &str)] = &[
    ("open", "close"), ("open", "shut"), ("reopen", "close"), ("leave", "arrive"), ("depart", "arrive"), ("start", "end"),
    ("start", "finish"), ("start", "stop"), ("begin", "end"), ("begin", "finish"), ("activate", "deactivate"), ("enable", "disable"),
    ("lock", "unlock"), ("pause", "resume"), ("suspend", "resume"), ("suspend", "reinstate"), ("send", "receive"),
    ("ship", "receive"), ("ship", "return"), ("deliver", "return"), ("borrow", "return"), ("check", "resolve"),
];

/// Outcomes that exclude each other for one thing (a request approved or declined, an item kept
/// or returned, a parcel lost or delivered).
const OPPOSED: &[(&str, &str)] = &[
    ("approve", "decline"), ("approve", "reject"), ("approve", "deny"), ("accept", "reject"), ("accept", "decline"),
    ("grant", "deny"), ("keep", "return"), ("grow", "shrink"), ("increase", "decrease"), ("rise", "fall"), ("win", "lose"),
    ("pass", "fail"), ("succeed", "fail"), ("cancel", "deliver"), ("lose", "deliver"),
];

/// Actions that happen to a customer or a person once.
const ONCE_IN_A_LIFE: &[&str] = &["join", "bear", "found", "die", "become", "register", "graduate"];

/// The action an event names: its first past tense, as a lemma ("shipped" → "ship").
fn action(c: &Claim) -> Option<String> {
    c.words.iter().find(|w| past_tense(w) && !matches!(w.as_str(), "was" | "were" | "had" | "did" | "been")).map(|w| lexicon::lemma(w))
}

fn past_tense(w: &str) -> bool {
    if PAST_IRREGULAR.contains(&w) {
        return true;
    }
    if w.len() > 3 && w.ends_with("ed") && !matches!(w, "need" | "feed" | "seed" | "weed" | "bed" | "red" | "shed" | "speed" | "breed" | "bleed" | "embed" | "proceed" | "succeed" | "exceed" | "indeed" | "based" | "interested" | "married" | "engaged" | "divorced" | "retired" | "tired" | "excited" | "scared" | "worried" | "pleased" | "used" | "related" | "located" | "allowed" | "required" | "limited" | "detailed" | "advanced" | "qualified" | "supposed" | "expected") {
        let base = lexicon::lemma(w);
        return base != w && lexicon::parts_of_speech(&base).contains(&lexicon::Pos::Verb);
    }
    false
}

// ---------------------------------------------------------------------------------------------
// Values

/// A contact channel's one spelling.
fn channel(w: &str) -> Option<&'static str> {
    Some(match w {
        "email" | "e-mail" | "emails" | "e-mails" => "email",
        "post" | "postal" | "mail" | "letter" | "letters" | "paper" => "post",
        "phone" | "telephone" | "call" | "calls" | "calling" | "phonecall" => "phone",
        "sms" | "text" | "texts" | "texting" => "sms",
        "whatsapp" => "whatsapp",
        "chat" | "livechat" => "chat",
        _ => return None,
    })
}

const DIETS: &[(&str, &str)] = &[
    ("vegan", "vegan"), ("vegetarian", "vegetarian"), ("veggie", "vegetarian"), ("pescatarian", "pescatarian"),
    ("pescetarian", "pescatarian"), ("keto", "keto"), ("paleo", "paleo"), ("carnivore", "carnivore"),
    ("gluten-free", "gluten-free"), ("halal", "halal"), ("kosher", "kosher"), ("omnivore", "omnivore"),
];

const RELATIONSHIP: &[(&str, &str)] = &[
    ("married", "married"), ("single", "single"), ("divorced", "divorced"), ("engaged", "engaged"), ("widowed", "widowed"),
    ("separated", "separated"),
];

/// Words that end a value's phrase.
const STOP: &[&str] = &[
    ",", "and", "but", "because", "since", "for", "with", "who", "which", "that", "where", "when", "after", "before",
    "now", "then", "so", "as", "while", "from", "until", "?", "!", "on", "at", "in", "to", "by", "via", "through", "last",
    "this", "next", "every", "each", "again", "too", "also", "anymore", "any", "more", "is", "are", "was", "were",
];
const ARTICLES: &[&str] = &["a", "an", "the", "his", "her", "their", "my", "our", "its", "your", "new"];

/// The value phrase from `i` on: up to four words, articles dropped, ending at a stop word.
fn phrase(w: &[String], i: usize) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    let mut j = i;
    while j < w.len() && out.len() < 4 {
        let t = w[j].as_str();
        if STOP.contains(&t) && !out.is_empty() {
            break;
        }
        if STOP.contains(&t) && ![ "in", "at" ].contains(&t) {
            break;
        }
        if !ARTICLES.contains(&t) && !STOP.contains(&t) {
            out.push(t);
        }
        j += 1;
    }
    (!out.is_empty()).then(|| out.join(" "))
}

fn find(w: &[String], words: &[&str]) -> Option<usize> {
    w.iter().position(|t| words.contains(&t.as_str()))
}

fn has(w: &[String], word: &str) -> bool {
    w.iter().any(|t| t == word)
}

/// Whether `w[i..]` starts with `seq`.
fn at(w: &[String], i: usize, seq: &[&str]) -> bool {
    seq.iter().enumerate().all(|(k, s)| w.get(i + k).is_some_and(|t| t == s))
}

fn find_seq(w: &[String], seq: &[&str]) -> Option<usize> {
    (0..w.len()).find(|&i| at(w, i, seq))
}

// ---------------------------------------------------------------------------------------------
// Analysis

/// Splits a "Name: …" or "Name (date): …" prefix off a text.
fn speaker_prefix(text: &str) -> (Option<String>, Option<String>, &str) {
    let t = text.trim_start();
    let Some(colon) = t.find(':') else { return (None, None, text) };
    let head = &t[..colon];
    if colon == 0 || colon > 60 || head.contains(['.', '!', '?', '\n']) {
        return (None, None, text);
    }
    let (name, date) = match head.find('(') {
        Some(p) if head.trim_end().ends_with(')') => (head[..p].trim(), Some(head[p + 1..head.trim_end().len() - 1].trim().to_owned())),
        Some(_) => return (None, None, text),
        None => (head.trim(), None),
    };
    // a name: one to three words, each starting with a letter, the first capitalised or an id
    let words: Vec<&str> = name.split_whitespace().collect();
    let is_name = !words.is_empty()
        && words.len() <= 3
        && words.iter().all(|w| w.chars().next().is_some_and(|c| c.is_alphabetic()) && w.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '\''))
        && name.chars().next().is_some_and(|c| c.is_uppercase() || name.contains('_'));
    // a label is not a speaker ("Note: …", "Update: …")
    const LABELS: &[&str] = &["note", "notes", "update", "summary", "fact", "reminder", "todo", "memo", "info", "fyi", "warning",
                              "important", "re", "subject", "policy", "rule", "decision", "correction", "status", "context"];
    if !is_name || LABELS.contains(&name.to_lowercase().as_str()) {
        return (None, None, text);
    }
    (Some(name.to_lowercase()), date, &t[colon + 1..])
}

/// Analyses a text: its speaker, and each sentence's claim.
pub fn analyze(text: &str) -> Analysis {
    let (speaker, date, body) = speaker_prefix(text);
    let claims = sentences(body).iter().map(|s| claim(s, speaker.as_deref())).collect();
    Analysis { speaker, date, claims }
}

/// The subject a sentence opens with, and where its predicate starts.
fn subject(w: &[String], speaker: Option<&str>) -> (Option<String>, usize) {
    let first_person = |i: usize| (speaker.map(|s| format!("speaker:{s}")).or_else(|| Some("speaker:".to_owned())), i);
    let mut i = lead_time(w);
    // leading adverbs and interjections: "Now I live …", "Actually, cus_1 …"
    while i < w.len() && matches!(w[i].as_str(), "now" | "actually" | "currently" | "also" | "btw" | "so" | "well" | "anyway" | "," | "recently" | "since" | "then" | "today") {
        i += 1;
    }
    let Some(t) = w.get(i) else { return (None, 0) };
    if FIRST_PERSON.contains(&t.as_str()) {
        return first_person(i + 1);
    }
    // "customer cus_1", "user u1", "the customer cus_1", "client acme_42"
    let mut j = i;
    if t == "the" {
        j += 1;
    }
    if w.get(j).is_some_and(|t| matches!(t.as_str(), "customer" | "user" | "client" | "member" | "patient" | "account" | "subscriber")) {
        if let Some(id) = w.get(j + 1).filter(|x| is_id(x) || x.chars().any(|c| c.is_ascii_digit())) {
            return (Some(id.clone()), j + 2);
        }
        return (None, j + 1);
    }
    if is_id(t) || t.chars().any(|c| c.is_ascii_digit()) && t.chars().any(|c| c.is_alphabetic()) && t.len() <= 16 {
        return (Some(t.clone()), i + 1);
    }
    // a name: a word the speaker prefix or the text capitalised that is not a common word
    if speaker.is_some_and(|s| s == t) {
        return first_person(i + 1);
    }
    if let Some(p) = name_at(w, i) {
        return (Some(format!("name:{}", w[i..p].join(" "))), p);
    }
    (None, i)
}

/// Where a sentence's claim starts after a leading time ("As of 20 January 2024, …", "Since
/// March 2024, …", "On 4 April 2024, …", "In March 2024, …", "From 20 March 2024, …"): the
/// position after its comma; 0 when it opens otherwise. The time places the claim; it is not its
/// subject.
fn lead_time(w: &[String]) -> usize {
    let opens = match w.first().map(String::as_str) {
        Some("as") if w.get(1).is_some_and(|x| x == "of") => true,
        Some("since" | "on" | "in" | "from" | "starting" | "effective") => true,
        _ => false,
    };
    if !opens {
        return 0;
    }
    let Some(comma) = w.iter().take(8).position(|x| x == ",") else { return 0 };
    let timed = w[1..comma].iter().any(|t| {
        MONTHS.contains(&t.as_str()) || t.chars().next().is_some_and(|c| c.is_ascii_digit()) || matches!(t.as_str(), "now" | "today" | "yesterday")
    });
    if !timed {
        return 0;
    }
    // "On April 20, 2024, …": the year after the first comma belongs to the time
    let year = |t: &String| t.len() == 4 && t.chars().all(|c| c.is_ascii_digit());
    if w.get(comma + 1).is_some_and(year) && w.get(comma + 2).is_some_and(|x| x == ",") {
        return comma + 3;
    }
    comma + 1
}

/// Verbs (and the possessive) a named subject's claim opens with.
const NAME_VERBS: &[&str] = &[
    "'s", "is", "has", "lives", "works", "prefers", "wants", "goes", "follows", "moved", "relocated", "switched", "upgraded",
    "downgraded", "changed", "left", "became", "got", "would", "likes", "loves", "speaks", "uses", "holds", "eats", "was",
    "does", "no", "never", "now", "recently", "just", "quit", "started", "joined", "stopped", "lived", "worked", "asked",
    "visited", "travelled", "traveled", "went", "can", "enjoys", "dislikes", "hates", "owns", "plays", "is,",
];

/// A name of one to three words at `i` followed by a verb of NAME_VERBS (after adverbs such as
/// "really"): where its predicate starts. Common words are no name: a single word WordNet knows
/// opens a name only before a verb other than "is" or "has" ("Ana likes tea", not "Support is
/// open").
fn name_at(w: &[String], i: usize) -> Option<usize> {
    const NOT_NAME: &[&str] = &[
        "all", "every", "some", "any", "each", "no", "this", "that", "these", "those", "there", "here", "it", "what", "who",
        "which", "nobody", "everyone", "someone", "only", "our", "your", "their", "one", "none", "most", "many", "customer",
        "customers", "user", "users", "agent", "agents", "employees", "staff", "admins", "support", "orders", "order",
    ];
    for n in 1..=3 {
        let p = i + n;
        let Some(next) = w.get(p) else { return None };
        let words = &w[i..p];
        if !words.iter().all(|t| t.chars().all(|c| c.is_alphabetic() || c == '-') && !t.is_empty())
            || words.iter().any(|t| ARTICLES.contains(&t.as_str()) || PRONOUNS.contains(&t.as_str()) || FIRST_PERSON.contains(&t.as_str())
                || STOP.contains(&t.as_str()) || NOT_NAME.contains(&t.as_str()) || LEAD.contains(&t.as_str()) || past_tense(t))
        {
            return None;
        }
        let mut v = p;
        while w.get(v).is_some_and(|x| matches!(x.as_str(), "really" | "also" | "still" | "currently" | "usually" | "always")) {
            v += 1;
        }
        let Some(verb) = w.get(v) else { return None };
        // a verb of the third person ("pays", "manages", "employs")
        let third_person = verb.len() > 3 && verb.ends_with('s') && {
            let base = lexicon::lemma(verb);
            base != *verb && lexicon::parts_of_speech(&base).contains(&lexicon::Pos::Verb)
        };
        if NAME_VERBS.contains(&verb.as_str()) || third_person || past_tense(verb) {
 // words that are all common nouns are no name ("time zone is …")
            if n > 1 && words.iter().all(|t| lexicon::is_lemma(t)) {
                return None;
            }
            let common = n == 1 && lexicon::is_lemma(&words[0]);
            if common && matches!(verb.as_str(), "is" | "has" | "was" | "does" | "can" | "would" | "no" | "never" | "now") {
                return None;
            }
            return Some(p);
        }
        let _ = next;
    }
    None
}

/// Words a clause's verb may follow: auxiliaries, negations and adverbs of time or degree.
const LEAD: &[&str] = &[
    "is", "am", "are", "was", "were", "be", "been", "has", "have", "had", "does", "do", "did", "will", "would", "'s", "'re",
    "'m", "'d", "now", "currently", "still", "also", "recently", "just", "finally", "actually", "already", "really",
    "no", "longer", "not", "never", "officially", "even", "always", "usually", "then", "since", "today", "lately",
    "fully", "strictly", "mostly", "now,", "happily", "permanently", "temporarily",
];

/// Where a sentence's clauses put their verbs: the first word of each clause (the predicate's
/// start, and after "and", "but" or a comma) that is not an auxiliary, a negation or an adverb.
fn heads(w: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut start = true;
    let mut aside = false;
    for (i, t) in w.iter().enumerate() {
        let t = t.as_str();
        if matches!(t, "and" | "but" | "," | "so" | "then") {
            start = true;
            aside = false;
            continue;
        }
        // an aside after a comma says nothing of its own (", as they prefer", ", as agreed")
        if start && t == "as" && i > 0 && w[i - 1] == "," {
            aside = true;
        }
        if aside {
            continue;
        }
        if start {
            if LEAD.contains(&t) {
                continue;
            }
            out.push(i);
            start = false;
        }
    }
    out
}

const PRONOUNS: &[&str] = &[
    "me", "you", "him", "her", "them", "us", "it", "this", "that", "these", "those", "both", "everyone", "everybody",
    "someone", "something", "anyone", "anything", "myself", "yourself", "themselves", "one", "i", "we", "they", "he", "she",
];

/// A value phrase that names something: not a pronoun, not empty.
fn value_at(w: &[String], i: usize) -> Option<String> {
    phrase(w, i).filter(|v| !PRONOUNS.contains(&v.split_whitespace().next().unwrap_or("")))
}

/// The keyed attribute a sentence's predicate states: (attribute, value, positive, change, past),
/// the first that matches at the head of a clause.
fn keyed(w: &[String]) -> Option<(String, Option<String>, bool, bool, bool)> {
    let negated = |i: usize| (i.saturating_sub(3)..i).any(|k| NEGATIONS.contains(&w[k].as_str()));
    let no_longer = find_seq(w, &["no", "longer"]).is_some() || find_seq(w, &["not", "anymore"]).is_some()
        || (has(w, "not") && (has(w, "anymore") || find_seq(w, &["any", "more"]).is_some()));
    let now = has(w, "now");
    let used_to = find_seq(w, &["used", "to"]).is_some();
    let next = |k: usize| w.get(k + 1).map(String::as_str);
    // a birthday: "was born on 21 August", "'s birthday is on 21 August", "celebrates their
    // birthday on 21 August" (one a person; the day and month in any order)
    let day = |from: usize| -> Option<String> {
        let mut t: Vec<String> = w[from..]
            .iter()
            .take_while(|x| x.chars().all(|c| c.is_alphanumeric()))
            .filter(|x| !matches!(x.as_str(), "the" | "of"))
            .map(|x| x.trim_end_matches(|c: char| c.is_ascii_alphabetic() && x.starts_with(|d: char| d.is_ascii_digit())).to_owned())
            .collect();
        t.sort();
        (!t.is_empty() && t.len() <= 3).then(|| t.join(" "))
    };
    let birthday_at = find_seq(w, &["born", "on"]).map(|p| p + 2).or_else(|| {
        find(w, &["birthday"]).and_then(|p| match (w.get(p + 1).map(String::as_str), w.get(p + 2).map(String::as_str)) {
            (Some("is"), Some("on")) => Some(p + 3),
            (Some("on"), _) => Some(p + 2),
            _ => None,
        })
    });
    if let Some(v) = birthday_at.and_then(day) {
        return Some(("birthday".into(), Some(v), !has(w, "not"), false, false));
    }
    // when deliveries are wanted: "prefers morning deliveries", "would rather have deliveries in
    // the morning", "likes deliveries to arrive in the evening"
    if (has(w, "deliveries") || has(w, "delivery"))
        && w.iter().any(|x| matches!(x.as_str(), "prefers" | "prefer" | "likes" | "like" | "rather" | "wants" | "want"))
        && !w.iter().any(|x| NEGATIONS.contains(&x.as_str()))
    {
        let times: Vec<&String> = w.iter().filter(|x| matches!(x.as_str(), "morning" | "afternoon" | "evening" | "night" | "weekend")).collect();
        if let [t] = times.as_slice() {
            return Some(("delivery_time".into(), Some((*t).clone()), true, no_longer || now, used_to));
        }
    }
    // when calls are wanted: "prefers calls after 2 pm", "would rather be called after 2 pm",
    // "Call Ana Rossi after 4 pm, as they prefer" (the time with its preposition: "before 2 pm" is
    // another value)
    let wants = |x: &String| matches!(x.as_str(), "prefers" | "prefer" | "rather" | "wants" | "want" | "likes" | "like");
    if let Some(p) = w.iter().position(|x| matches!(x.as_str(), "call" | "calls" | "called" | "calling")) {
        let timeish = |x: &String| x.starts_with(|c: char| c.is_ascii_digit()) || matches!(x.as_str(), "am" | "pm" | "a.m." | "p.m." | "noon" | "midnight" | "morning" | "afternoon" | "evening" | "and");
        let at = (p + 1..w.len().min(p + 6)).find(|&k| matches!(w[k].as_str(), "after" | "before" | "between" | "until" | "in") && w.get(k + 1).is_some_and(|x| timeish(x) || x == "the"));
        if let Some(k) = at.filter(|_| w.iter().any(wants) && !w.iter().any(|x| NEGATIONS.contains(&x.as_str()))) {
            let time: Vec<&str> = w[k + 1..].iter().filter(|x| x.as_str() != "the").take_while(|x| timeish(x)).map(String::as_str).collect();
            if time.iter().any(|x| x.starts_with(|c: char| c.is_ascii_digit()) || matches!(*x, "noon" | "midnight" | "morning" | "afternoon" | "evening")) {
                return Some(("call_time".into(), Some(format!("{} {}", w[k], time.join(" "))), true, no_longer || now, used_to));
            }
        }
    }
    // how long a customer has to return items: "may return items within 60 days", "has 60 days to
    // return items", "the return window for customer cus_1 is 60 days"
    let returning = (0..w.len()).any(|k| matches!(w[k].as_str(), "return" | "returns") || w[k] == "returned" && k > 0 && w[k - 1] == "be");
    if returning && w.iter().any(|x| matches!(x.as_str(), "items" | "window" | "purchases" | "products" | "orders"))
        && !w.iter().any(|x| NEGATIONS.contains(&x.as_str()))
    {
        // in days ("two weeks" is "14 days"); a month is not a fixed number of days, so months stay
        const SMALL: &[&str] = &["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
        let count = |t: &str| t.parse::<u32>().ok().or_else(|| SMALL.iter().position(|x| *x == t).map(|n| n as u32));
        let spans: Vec<String> = w
            .windows(2)
            .filter_map(|p| {
                let n = count(&p[0])?;
                match p[1].as_str() {
                    "day" | "days" => Some(format!("{n} days")),
                    "week" | "weeks" => Some(format!("{} days", n * 7)),
                    "month" | "months" => Some(format!("{n} months")),
                    _ => None,
                }
            })
            .collect();
        if let [v] = spans.as_slice() {
            return Some(("return_window".into(), Some(v.clone()), true, no_longer || now, used_to));
        }
    }
    for k in heads(w) {
        let t = w[k].as_str();
        // "was on the Basic plan", "were married": a state that held, not one that holds
        let was = w[..k].iter().rev().take_while(|x| LEAD.contains(&x.as_str())).any(|x| matches!(x.as_str(), "was" | "were" | "had"));
        let used_to = used_to || was;
        // residence
        let residence = match (t, next(k)) {
            ("live" | "lives" | "living" | "reside" | "resides" | "based", Some("in")) => Some((k + 2, false, false)),
            ("lived" | "resided", Some("in")) => Some((k + 2, false, true)),
            ("moved" | "relocated" | "moving" | "relocating", Some("to")) => Some((k + 2, true, false)),
            ("moved" | "relocated", Some("back")) if w.get(k + 2).is_some_and(|x| x == "to") => Some((k + 3, true, false)),
            // "relocated from Vienna to Amsterdam"
            ("moved" | "relocated" | "moving" | "relocating", Some("from")) => find(&w[k..], &["to"]).map(|p| (k + p + 1, true, false)),
            // "cus_304's home is in Dublin"
            ("home", Some("is")) if w.get(k + 2).is_some_and(|x| x == "in") => Some((k + 3, false, false)),
            _ => None,
        };
        if let Some((from, change, past)) = residence {
            // "moved from the Basic plan to the Team plan" is a plan's move
            if let Some(v) = value_at(w, from).filter(|v| !v.ends_with(" plan") && !v.ends_with(" tier")) {
                return Some(("residence".into(), Some(v), !negated(k) && !no_longer, change || no_longer || now, past || used_to));
            }
        }
        // employer and job
        match (t, next(k)) {
            ("works" | "work" | "working", Some("at" | "for")) | ("employed", Some("by")) => {
                if let Some(v) = value_at(w, k + 2) {
                    let change = no_longer || now || has(w, "started") || find_seq(w, &["changed", "jobs"]).is_some();
                    return Some(("employer".into(), Some(v), !negated(k) && !no_longer, change, used_to));
                }
            }
            ("worked", Some("at" | "for")) => {
                if let Some(v) = value_at(w, k + 2) {
                    return Some(("employer".into(), Some(v), !negated(k), false, true));
                }
            }
            ("works" | "work", Some("as")) | ("employed", Some("as")) => {
                if let Some(v) = value_at(w, k + 2).filter(|v| !matches!(v.as_str(), "team" | "group" | "unit" | "volunteer")) {
                    return Some(("job".into(), Some(v), !negated(k) && !no_longer, no_longer || now, used_to));
                }
            }
            ("changed" | "switched", Some("jobs" | "job" | "employers")) => {
                let v = find(&w[k..], &["to", "at"]).and_then(|p| value_at(w, k + p + 1));
                return Some(("employer".into(), v, true, true, false));
            }
            // "left Blue Harbor Bank for Acme Corp"
            ("left", _) if find(&w[k..], &["for"]).is_some_and(|p| p > 1 && p <= 5) => {
                let p = find(&w[k..], &["for"]).unwrap_or(0);
                if let Some(v) = value_at(w, k + p + 1) {
                    return Some(("employer".into(), Some(v), true, true, false));
                }
            }
            ("employer", Some("is")) => {
                if let Some(v) = value_at(w, k + 2) {
                    let change = now || k > 0 && w[k - 1] == "new";
                    return Some(("employer".into(), Some(v), !negated(k), change, used_to));
                }
            }
            ("new", Some("employer")) if w.get(k + 2).is_some_and(|x| x == "is") => {
                if let Some(v) = value_at(w, k + 3) {
                    return Some(("employer".into(), Some(v), true, true, false));
                }
            }
            ("quit" | "left", _) if w[k..].iter().take(4).any(|x| matches!(x.as_str(), "job" | "position" | "company" | "employer")) => {
                let v = find(&w[k..], &["at", "with"]).and_then(|p| value_at(w, k + p + 1));
                return Some(("employer".into(), v, false, true, false));
            }
            _ => {}
        }
        // diet: "is vegan", "went vegan", "follows a vegan diet", "stopped eating meat"
        let diet_word = |i: usize| w.get(i).and_then(|x| DIETS.iter().find(|(s, _)| s == x)).map(|(_, d)| *d);
        if let Some(d) = diet_word(k).filter(|_| k > 0 && matches!(w[k - 1].as_str(), "is" | "am" | "are" | "'s" | "'m" | "'re" | "now" | "fully" | "strictly" | "still" | "not" | "longer" | "been" | "be" | "was")) {
            return Some(("diet".into(), Some(d.to_owned()), !negated(k) && !no_longer, no_longer || now, used_to));
        }
        if matches!(t, "went" | "became" | "become" | "turned" | "switched" | "gone") {
            if let Some(d) = diet_word(k + 1) {
                return Some(("diet".into(), Some(d.to_owned()), true, true, false));
            }
        }
        if matches!(t, "follows" | "follow" | "following" | "keeps" | "keep" | "eats" | "eat" | "on") {
            let at_diet = (k + 1..(k + 4).min(w.len())).find(|&i| w[i] == "diet");
            if let Some(d) = at_diet.and_then(|i| (k + 1..i).find_map(diet_word)) {
                return Some(("diet".into(), Some(d.to_owned()), !negated(k) && !no_longer, no_longer || now, used_to));
            }
        }
        if matches!(t, "eat" | "eats" | "eating" | "stopped") && w[k..].iter().take(3).any(|x| x == "meat") {
            let stopped = t == "stopped" || has(w, "quit");
            return Some(("diet".into(), Some("vegetarian".into()), negated(k) || no_longer || stopped, no_longer || stopped, false));
        }
        // "relationship status is single"
        if t == "relationship" && next(k) == Some("status") && w.get(k + 2).is_some_and(|x| x == "is") {
            if let Some((_, r)) = w.get(k + 3).and_then(|x| RELATIONSHIP.iter().find(|(s, _)| s == x)) {
                return Some(("relationship".into(), Some((*r).to_owned()), !no_longer, now, used_to));
            }
        }
        // "stopped following a pescatarian diet", "stopped being vegan": the diet no longer holds
        if t == "stopped" && matches!(next(k), Some("following" | "being" | "eating" | "keeping")) {
            if let Some(d) = w.get(k + 2..(k + 5).min(w.len())).and_then(|v| v.iter().find_map(|x| DIETS.iter().find(|(s, _)| s == x))) {
                return Some(("diet".into(), Some(d.1.to_owned()), false, true, false));
            }
        }
        // "has worked as a teacher since …", "has a new job at Acme Corp", "left Acme and joined
        // Wayne Foods"
        if t == "worked" && next(k) == Some("as") && k > 0 && matches!(w[k - 1].as_str(), "have" | "has" | "'ve") {
            if let Some(v) = value_at(w, k + 2) {
                return Some(("job".into(), Some(v), true, true, false));
            }
        }
        // "has a new job at Acme Corp"
        let new_at = (k..(k + 3).min(w.len())).find(|&i| w[i] == "new");
        if let Some(n) = new_at {
            if w.get(n + 1).is_some_and(|x| matches!(x.as_str(), "job" | "position")) && w.get(n + 2).is_some_and(|x| matches!(x.as_str(), "at" | "with")) {
                if let Some(v) = value_at(w, n + 3) {
                    return Some(("employer".into(), Some(v), true, true, false));
                }
            }
        }
        // "preferred contact channel is SMS", "preferred channel is email"
        if t == "preferred" {
            let is_at = if next(k) == Some("channel") { Some(k + 2) } else if next(k) == Some("contact") && w.get(k + 2).is_some_and(|x| matches!(x.as_str(), "channel" | "method")) { Some(k + 3) } else { None };
            if let Some(c) = is_at.filter(|&i| w.get(i).is_some_and(|x| x == "is")).and_then(|i| w.get(i + 1 + usize::from(w.get(i + 1).is_some_and(|x| x == "now")))).and_then(|x| channel(x)) {
                return Some(("contact_channel".into(), Some(c.to_owned()), !negated(k), now, used_to));
            }
        }
        // "left Fabrikam and joined Litware", "joined Wayne Foods in March 2024": a company (a name
        // WordNet does not hold, or after leaving another)
        if t == "joined" {
            if let Some(v) = value_at(w, k + 1) {
                let named = v.split_whitespace().any(|x| !lexicon::is_lemma(x));
                if named || w.iter().any(|x| x == "left" || x == "leaving") {
                    return Some(("employer".into(), Some(v), true, true, false));
                }
            }
        }
        // relationship status
        if let Some((_, r)) = RELATIONSHIP.iter().find(|(s, _)| s == &t) {
            let change = k > 0 && matches!(w[k - 1].as_str(), "got" | "get" | "getting") || no_longer || now;
            return Some(("relationship".into(), Some((*r).to_owned()), !negated(k) && !no_longer, change, k > 0 && w[k - 1] == "was"));
        }
        if matches!(t, "got" | "getting" | "became") {
            if let Some((_, r)) = next(k).and_then(|x| RELATIONSHIP.iter().find(|(s, _)| s == &x)) {
                return Some(("relationship".into(), Some((*r).to_owned()), true, true, false));
            }
        }
        // contact channel: "prefers email (for invoices)", "wants invoices by post", "would like
        // order updates via e-mail", "now prefers phone calls", "wants paper invoices"
        if matches!(t, "prefers" | "prefer" | "wants" | "want" | "wishes" | "wish" | "like" | "switched" | "asks" | "asked") {
            if let Some(found) = contact(w, k, no_longer || now, used_to, &negated) {
                return Some(found);
            }
        }
        // plan: "is on the Pro plan", "upgraded to the Team plan", "downgraded from Pro to Basic"
        if t == "on" {
            if let Some(p) = (k + 1..(k + 4).min(w.len())).find(|&i| matches!(w[i].as_str(), "plan" | "tier")) {
                if let Some(v) = (k + 1..p).rev().map(|i| w[i].as_str()).find(|x| !ARTICLES.contains(x)) {
                    return Some(("plan".into(), Some(v.to_owned()), !negated(k) && !no_longer, no_longer || now, used_to));
                }
            }
        }
        // "switched from a keto diet to a vegetarian diet", "switched their contact channel to SMS",
        // "changed their time zone to Asia/Tokyo", "changed my shipping address to …"
        if matches!(t, "switched" | "changed" | "switching" | "changing" | "moved" | "updated" | "updating") {
            if let Some(p) = find(&w[k..], &["to"]) {
                let to = k + p + 1;
                let about = &w[k..to];
                // "moved from the Basic plan to the Team plan"
                if let Some(pl) = (to..(to + 4).min(w.len())).find(|&i| matches!(w[i].as_str(), "plan" | "tier")) {
                    if let Some(v) = (to..pl).rev().map(|i| w[i].as_str()).find(|x| !ARTICLES.contains(x)) {
                        return Some(("plan".into(), Some(v.to_owned()), true, true, false));
                    }
                }
                if let Some(d) = w.get(to..(to + 3).min(w.len())).and_then(|v| v.iter().find_map(|x| DIETS.iter().find(|(s, _)| s == x))) {
                    return Some(("diet".into(), Some(d.1.to_owned()), true, true, false));
                }
                if about.iter().any(|x| matches!(x.as_str(), "timezone" | "time-zone")) || find_seq(about, &["time", "zone"]).is_some() {
                    if let Some(v) = value_at(w, to) {
                        return Some(("timezone".into(), Some(v), true, true, false));
                    }
                }
                if about.iter().any(|x| x == "address") {
                    if let Some(v) = address_at(w, to) {
                        let attr = if about.iter().any(|x| x == "billing") { "address:billing" } else { "address" };
                        return Some((attr.into(), Some(v), true, true, false));
                    }
                }
                if let Some(c) = w.get(to).and_then(|x| channel(x)) {
                    // "switched to email for order updates"
                    if let Some(topic) = w.get(to + 1).filter(|x| *x == "for").and_then(|_| phrase(w, to + 2)) {
                        let topic = topic_key(&topic);
                        if !topic.is_empty() && !GENERAL_TOPICS.contains(&topic.as_str()) {
                            return Some((format!("contact_channel:{topic}"), Some(c.to_owned()), true, true, false));
                        }
                    }
                    if about.iter().chain(w[to..].iter()).any(|x| matches!(x.as_str(), "contact" | "contacted" | "channel" | "communication" | "communications"))
                        || t.starts_with("switch") && about.iter().any(|x| channel(x).is_some())
                    {
                        return Some(("contact_channel".into(), Some(c.to_owned()), true, true, false));
                    }
                }
            }
        }
        // "subscribes to the Basic plan"
        if matches!(t, "subscribes" | "subscribed" | "subscribe") && next(k) == Some("to") {
            if let Some(p) = (k + 2..(k + 6).min(w.len())).find(|&i| matches!(w[i].as_str(), "plan" | "tier")) {
                if let Some(v) = (k + 2..p).rev().map(|i| w[i].as_str()).find(|x| !ARTICLES.contains(x)) {
                    return Some(("plan".into(), Some(v.to_owned()), !negated(k) && !no_longer, no_longer || now, used_to));
                }
            }
        }
        // "has a Team plan subscription", "has the Pro plan"
        if matches!(t, "has" | "have") || (k > 0 && matches!(w[k - 1].as_str(), "has" | "have") && ARTICLES.contains(&t)) {
            let from = if ARTICLES.contains(&t) { k } else { k + 1 };
            if let Some(p) = (from..(from + 4).min(w.len())).find(|&i| matches!(w[i].as_str(), "plan" | "tier")) {
                if let Some(v) = (from..p).rev().map(|i| w[i].as_str()).find(|x| !ARTICLES.contains(x)) {
                    return Some(("plan".into(), Some(v.to_owned()), !negated(k) && !no_longer, no_longer || now, used_to));
                }
            }
        }
        // a job: "is a project manager", "is now a nurse", "became a chef", "have become a data
        // analyst" (a noun of a trade: -er, -or, -ist, -ian, -ant, -ent, -eer, -ect, and a few more)
        if matches!(t, "a" | "an") && k > 0 && matches!(w[k - 1].as_str(), "is" | "am" | "'m" | "now" | "became" | "become" | "'s" | "still") {
            let became = w[..k].iter().rev().take(3).any(|x| matches!(x.as_str(), "became" | "become"));
            if let Some(v) = value_at(w, k + 1).filter(|v| is_trade(v)) {
                return Some(("job".into(), Some(v), !negated(k) && !no_longer, became || now || no_longer || has(w, "careers"), used_to));
            }
        }
        if matches!(t, "became" | "become") && w.get(k + 1).is_some_and(|x| matches!(x.as_str(), "a" | "an")) {
            if let Some(v) = value_at(w, k + 2).filter(|v| is_trade(v)) {
                return Some(("job".into(), Some(v), true, true, false));
            }
        }
        if matches!(t, "upgraded" | "downgraded" | "switched") {
            if let Some(p) = find(&w[k..], &["to"]) {
                if let Some(v) = value_at(w, k + p + 1) {
                    let v = v.trim_end_matches(" plan").trim_end_matches(" tier").to_owned();
                    return Some(("plan".into(), Some(v), true, true, false));
                }
            }
        }
        // preferred name
        let called = match (t, next(k)) {
            ("prefers" | "wants" | "likes" | "asks" | "asked" | "prefer" | "want" | "like", Some("to")) if at(w, k + 2, &["be", "called"]) => Some(k + 4),
            ("goes" | "go", Some("by")) => Some(k + 2),
            ("name", Some("is")) => Some(if w.get(k + 2).is_some_and(|x| x == "now") { k + 3 } else { k + 2 }),
            ("preferred", Some("name")) if w.get(k + 2).is_some_and(|x| x == "is") => {
                Some(if w.get(k + 3).is_some_and(|x| x == "now") { k + 4 } else { k + 3 })
            }
            _ => None,
        };
        if let Some(v) = called.and_then(|i| value_at(w, i)) {
            return Some(("name".into(), Some(v), !no_longer, now || no_longer, false));
        }
        // favourite things: "favourite colour is blue"
        if matches!(t, "favourite" | "favorite") {
            if let (Some(thing), Some("is")) = (w.get(k + 1), w.get(k + 2).map(String::as_str)) {
                if thing != "is" {
                    if let Some(v) = value_at(w, k + 3) {
                        return Some((format!("favourite:{}", lexicon::lemma(thing)), Some(v), true, now, false));
                    }
                }
            }
        }
        // address, time zone
        // "shipping address changed from … to …", "new shipping address is …"
        let kinds = |x: &str| matches!(x, "shipping" | "home" | "postal" | "delivery" | "billing");
        let at_addr = if t == "address" { Some(k) } else if kinds(t) && next(k) == Some("address") { Some(k + 1) } else if t == "new" && next(k).is_some_and(kinds) && w.get(k + 2).is_some_and(|x| x == "address") { Some(k + 2) } else { None };
        if let Some(a) = at_addr {
            let attr = if w[k..a].iter().any(|x| x == "billing") { "address:billing" } else { "address" };
            if w.get(a + 1).is_some_and(|x| matches!(x.as_str(), "changed" | "moved" | "updated")) {
                if let Some(p) = find(&w[a..], &["to"]) {
                    if let Some(v) = address_at(w, a + p + 1) {
                        return Some((attr.into(), Some(v), true, true, false));
                    }
                }
            }
            if t == "new" && w.get(a + 1).is_some_and(|x| x == "is") {
                if let Some(v) = address_at(w, a + 2) {
                    return Some((attr.into(), Some(v), true, true, false));
                }
            }
        }
        let parcels = w[k..].iter().take(3).any(|x| x == "parcels" || x == "packages");
        if parcels && (matches!(t, "has" | "have" | "gets" | "get") || (k > 0 && matches!(w[k - 1].as_str(), "has" | "have" | "gets" | "get" | "'ve"))) {
            if let Some(p) = find_seq(&w[k..], &["shipped", "to"]).or_else(|| find_seq(&w[k..], &["sent", "to"])).or_else(|| find_seq(&w[k..], &["delivered", "to"])) {
                if let Some(v) = address_at(w, k + p + 2) {
                    return Some(("address".into(), Some(v), !negated(k), now, used_to));
                }
            }
        }
        // "the best way to reach cus_311 is by email", "contact cus_303 by SMS"
        let best = (t == "best" || (t == "the" && next(k) == Some("best"))) && find_seq(&w[k..], &["way", "to", "reach"]).is_some();
        if best || (matches!(t, "contact" | "reach") && k == 0) {
            if let Some(b) = (k + 1..(k + 9).min(w.len())).find(|&i| matches!(w[i].as_str(), "by" | "via") && w.get(i + 1).is_some_and(|x| channel(x).is_some())) {
                let c = channel(&w[b + 1]).unwrap_or_default();
                return Some(("contact_channel".into(), Some(c.to_owned()), !negated(b), now || find_seq(w, &["from", "now", "on"]).is_some(), used_to));
            }
        }
        let address = match (t, next(k)) {
            ("address", Some("is")) => Some((k + 2, "address")),
            ("shipping" | "home" | "postal" | "delivery", Some("address")) if w.get(k + 2).is_some_and(|x| x == "is") => Some((k + 3, "address")),
            ("billing", Some("address")) if w.get(k + 2).is_some_and(|x| x == "is") => Some((k + 3, "address:billing")),
            _ => None,
        };
        if let Some((from, attr)) = address {
            let from = if w.get(from).is_some_and(|x| x == "now") { from + 1 } else { from };
            if let Some(v) = address_at(w, from) {
                return Some((attr.into(), Some(v), true, now, false));
            }
        }
        // "timezone is America/Chicago", "time zone is set to …", "is in the Europe/Lisbon time zone"
        let zone_is = match (t, next(k)) {
            ("timezone" | "time-zone", Some("is")) => Some(k + 2),
            ("time", Some("zone")) if w.get(k + 2).is_some_and(|x| x == "is") => Some(k + 3),
            // "time zone changed to Europe/Berlin"
            ("timezone" | "time-zone", Some("changed" | "switched" | "moved")) if w.get(k + 2).is_some_and(|x| x == "to") => {
                return value_at(w, k + 3).map(|v| ("timezone".into(), Some(v), true, true, false));
            }
            ("time", Some("zone"))
                if w.get(k + 2).is_some_and(|x| matches!(x.as_str(), "changed" | "switched" | "moved")) && w.get(k + 3).is_some_and(|x| x == "to") =>
            {
                return value_at(w, k + 4).map(|v| ("timezone".into(), Some(v), true, true, false));
            }
            _ => None,
        };
        if let Some(mut from) = zone_is {
            while w.get(from).is_some_and(|x| matches!(x.as_str(), "now" | "set" | "to")) {
                from += 1;
            }
            if let Some(v) = value_at(w, from) {
                return Some(("timezone".into(), Some(v), true, now, false));
            }
        }
        if t == "in" && w.get(k + 1).is_some_and(|x| x == "the") {
            let zone = (k + 2..(k + 6).min(w.len())).find(|&i| w[i] == "timezone" || (w[i] == "time" && w.get(i + 1).is_some_and(|x| x == "zone")));
            if let Some(z) = zone.filter(|&z| z > k + 2) {
                return Some(("timezone".into(), Some(w[k + 2..z].join(" ")), !negated(k), now, used_to));
            }
        }
    }
    None
}

/// A noun of a trade or profession, by its last word: "project manager", "nurse", "electrician".
fn is_trade(v: &str) -> bool {
    let Some(last) = v.split_whitespace().last() else { return false };
    const NOT: &[&str] = &["member", "customer", "user", "fan", "client", "subscriber", "patient", "other", "number", "order",
                           "mother", "father", "brother", "sister", "daughter", "partner", "winner", "owner", "lover", "beginner",
                           "parent", "resident", "citizen", "adult", "person", "friend", "neighbor", "neighbour", "regular",
                           "vegetarian", "pescatarian", "christian", "italian", "canadian", "australian", "elder"];
    const TRADES: &[&str] = &["nurse", "chef", "cook", "pilot", "surgeon", "dentist", "lawyer", "doctor", "architect", "student",
                              "barista", "plumber", "mechanic", "judge", "clerk", "cashier", "mason", "nanny", "tutor", "coach",
                              "officer", "analyst", "engineer", "scientist", "artist", "physician", "electrician", "accountant"];
    !NOT.contains(&last)
        && (TRADES.contains(&last)
            || ["er", "or", "ist", "ian", "ant", "ent", "eer"].iter().any(|s| last.ends_with(s) && last.len() > 4))
}

/// An address from `i` on: its words up to the sentence's end or a "since"/"from", commas kept
/// as spaces (a street number and a town are one value).
fn address_at(w: &[String], i: usize) -> Option<String> {
    let words: Vec<&str> = w.get(i..)?
        .iter()
        .map(String::as_str)
        .take_while(|x| !matches!(*x, "since" | "from" | "until" | "as" | "now" | "?"))
        .filter(|x| *x != ",")
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// A contact preference from the verb at `k`: the channel, and the topic it is for.
fn contact(w: &[String], k: usize, change: bool, past: bool, negated: &dyn Fn(usize) -> bool) -> Option<(String, Option<String>, bool, bool, bool)> {
    if w[k] == "like" && !(k > 0 && matches!(w[k - 1].as_str(), "would" | "'d")) {
        return None;
    }
    let mut chan: Option<(usize, &'static str)> = None;
    for j in k + 1..w.len().min(k + 9) {
        let Some(c) = channel(&w[j]) else { continue };
        let by = matches!(w[j - 1].as_str(), "by" | "via" | "through" | "over" | "per");
        let object = j == k + 1 || (j == k + 2 && matches!(w[k + 1].as_str(), "a" | "an"));
        let paper = matches!(w[j].as_str(), "paper" | "postal")
            && w.get(j + 1).is_some_and(|n| matches!(n.as_str(), "invoices" | "invoice" | "statements" | "bills" | "letters" | "mail" | "copies"));
        if by || object || paper {
            chan = Some((j, c));
            break;
        }
    }
    let (j, c) = chan?;
    // the topic: the noun after "for", or the object before "by"/"via", or what paper is for
    let topic = find(&w[j..], &["for", "about", "regarding"])
        .and_then(|p| phrase(w, j + p + 1))
        // "a call before delivery" and "an email after delivery" are for two moments
        .or_else(|| find(&w[j..], &["before", "after", "during"]).and_then(|p| phrase(w, j + p + 1).map(|v| format!("{} {v}", w[j + p]))))
        .or_else(|| {
            let obj: Vec<&str> = w[k + 1..j]
                .iter()
                .map(String::as_str)
                .filter(|t| !ARTICLES.contains(t) && !matches!(*t, "to" | "be" | "by" | "via" | "through" | "all" | "any" | "over" | "rather" | "than" | "sent" | "receive" | "get" | "contacted" | "have" | "its" | "their" | "in" | "now" | "per" | "like"))
                .collect();
            (!obj.is_empty()).then(|| obj.join(" "))
        })
        .or_else(|| matches!(w[j].as_str(), "paper" | "postal").then(|| w[j + 1].clone()))
        // "wants email invoices": what the channel is for, right after it
        .or_else(|| w.get(j + 1).filter(|n| TOPIC_NOUNS.contains(&n.as_str())).cloned())
        .map(|t| topic_key(&t));
    let attr = match topic {
        Some(t) if !t.is_empty() && !GENERAL_TOPICS.contains(&t.as_str()) => format!("contact_channel:{t}"),
        _ => "contact_channel".into(),
    };
    let change = change || w[k] == "switched";
    Some((attr, Some(c.to_owned()), !negated(j) && !negated(k) && !change_denies(w), change, past))
}

/// Topics that are no topic: what all contact is for.
const GENERAL_TOPICS: &[&str] = &["contact", "all contact", "communication", "all communication", "everything", "all", "contacting"];

/// What a contact channel may be for, named right after it ("email invoices", "SMS reminders").
const TOPIC_NOUNS: &[&str] = &[
    "invoices", "invoice", "statements", "bills", "letters", "updates", "receipts", "reminders", "notifications", "alerts",
    "newsletters", "confirmations", "offers",
];

/// Whether `a` says all that `b` says and more: its content words hold all of `b`'s and at least
/// two others ("wants paper invoices sent to the Lisbon office" / "wants paper invoices"). Such a
/// pair is an entailment, never one claim in other words.
pub fn extends(a: &str, b: &str) -> bool {
    const FUNCTION: &[&str] = &[
        "the", "a", "an", "and", "or", "of", "to", "for", "in", "on", "at", "by", "via", "with", "is", "are", "was", "be", "all",
        "any", "their", "his", "her", "its", "our", "my", "customer", "client", "user",
        // the words that say which attribute, not what value ("is vegan" / "follows a vegan
        // diet", "is a nurse" / "works as a nurse", "on the Team plan" / "has a Team plan
        // subscription")
        "follow", "diet", "work", "employ", "subscription", "plan", "live", "reside", "home", "have", "own", "prefer",
        "like", "want", "would", "rather", "get", "receive", "can", "currently", "now", "as", "status", "relationship",
        "preferred", "channel", "contact", "way", "reach", "best", "address", "shipping", "parcel", "ship",
    ];
    let words = |t: &str| -> std::collections::BTreeSet<String> {
        sentences(t)
            .into_iter()
            .flatten()
            .filter(|w| w.chars().any(|c| c.is_alphanumeric()))
            .map(|w| lexicon::lemma(&w))
            .filter(|w| !FUNCTION.contains(&w.as_str()))
            .collect()
    };
    // in one spelling of amounts and dates ("23 percent" / "23%")
    let (x, y) = (words(&crate::spelling::canonical(a)), words(&crate::spelling::canonical(b)));
    y.is_subset(&x) && x.len() >= y.len() + 2
}

/// Whether two texts name the same things: the same proper names (words capitalised inside a
/// sentence, or opening it where they are no common word), numbers and identifiers. One claim in other words names what the other names
/// ("Gil Silva resides in Lyon" / "Gil Silva's home is in Lyon"); "invoices by post to Leeds" and
/// "… to Porto" do not.
pub fn same_names(a: &str, b: &str) -> bool {
    // (the names, and the common words that open a sentence in capitals: "Stark" of "Stark
    // Analytics employs …" is a name where the other text names it inside a sentence)
    fn names(t: &str) -> (std::collections::BTreeSet<String>, std::collections::BTreeSet<String>) {
        let mut out = std::collections::BTreeSet::new();
        let mut opening = std::collections::BTreeSet::new();
        let mut first = true;
        for raw in t.split(|c: char| c.is_whitespace()) {
            let w: String = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_').to_owned();
            let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(&w).to_owned();
            // the plural of an acronym names what it names ("PDFs" / "a PDF")
            let w = match w.strip_suffix('s') {
                Some(acronym) if acronym.len() >= 2 && acronym.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) => acronym.to_owned(),
                _ => w,
            };
            if !w.is_empty() {
                let digit = w.chars().any(|c| c.is_ascii_digit());
                // capitalised inside a sentence, or at its start where no common word is
                // ("Amir Weber prefers …", not "Call Amir Weber …")
                let common = |x: &str| {
                    lexicon::is_lemma(x) || lexicon::is_lemma(&lexicon::lemma(x)) || [STOP, ARTICLES, PRONOUNS, FIRST_PERSON, QUESTION_OPENERS, NEGATIONS].iter().any(|l| l.contains(&x))
                };
                // an acronym is a name wherever it stands ("VAT for orders …" / "… 23% VAT")
                let acronym = w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase());
                let proper = w.chars().next().is_some_and(char::is_uppercase) && (!first || acronym || !common(&w.to_lowercase()));
                // a number in words is the number ("three items" / "3 items")
                let spelled = crate::assertion::spelled_number(&w.to_lowercase()).filter(|(_, unit)| unit.is_none());
                if let Some((x, _)) = spelled {
                    out.insert(crate::assertion::fmt_value(x));
                } else if digit || proper {
                    out.insert(w.to_lowercase());
                } else if first && w.chars().next().is_some_and(char::is_uppercase) {
                    opening.insert(w.to_lowercase());
                }
                first = false;
            }
            if raw.ends_with(['.', '!', '?', ':', ';']) {
                first = true;
            }
        }
        (out, opening)
    }
    // in one spelling of amounts and dates ("EUR 40" / "€40", "Feb. 14, 2026" / "14 February 2026")
    let ((mut x, x_opening), (mut y, y_opening)) = (names(&crate::spelling::canonical(a)), names(&crate::spelling::canonical(b)));
    let (x_more, y_more): (Vec<String>, Vec<String>) = (x_opening.into_iter().filter(|w| y.contains(w)).collect(), y_opening.into_iter().filter(|w| x.contains(w)).collect());
    x.extend(x_more);
    y.extend(y_more);
    x == y
}

/// "no longer prefers …", "does not want … anymore": the value does not hold.
fn change_denies(w: &[String]) -> bool {
    find_seq(w, &["no", "longer"]).is_some() || (has(w, "not") && has(w, "anymore"))
}

/// A contact topic's one spelling: "all order updates" and "order updates" alike.
fn topic_key(t: &str) -> String {
    t.split_whitespace()
        .filter(|w| !matches!(*w, "all" | "any" | "every" | "the" | "his" | "her" | "their" | "my" | "our" | "future" | "regular"))
        .map(lexicon::lemma)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Verbs of one value among several.
const MULTI_VERBS: &[&str] = &[
    "like", "likes", "love", "loves", "enjoy", "enjoys", "speak", "speaks", "visit", "visits", "visited", "own", "owns",
    "play", "plays", "read", "reads", "collect", "collects", "watch", "watches", "listen", "listens", "know", "knows",
    "adore", "adores", "drink", "drinks", "eat", "eats", "cook", "cooks", "paint", "paints", "draw", "draws", "write",
    "writes", "use", "uses", "support", "supports", "follow", "follows", "attend", "attends", "study", "studies",
    "dislike", "dislikes", "hate", "hates", "refuse", "refuses", "avoid", "avoids", "detest", "detests",
];

/// The numbered or identified things a predicate names besides its subject: "order 1001",
/// "#8122", "ord_2290".
fn instances(pred: &[String], subject: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, t) in pred.iter().enumerate() {
        let numbered = INSTANCE_NOUNS.contains(&t.as_str())
            && pred.get(i + 1).is_some_and(|n| n.starts_with('#') || n.chars().any(|c| c.is_ascii_digit()) && n.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_'));
        if numbered {
            out.push(format!("{} {}", lexicon::lemma(t), pred[i + 1].trim_start_matches('#')));
        } else if (is_id(t) || t.starts_with('#')) && Some(t.as_str()) != subject && !(i > 0 && INSTANCE_NOUNS.contains(&pred[i - 1].as_str()) && t.starts_with('#')) {
            out.push(t.trim_start_matches('#').to_owned());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn claim(w: &[String], speaker: Option<&str>) -> Claim {
    let other = |subject: Option<String>| Claim {
        kind: Kind::Other,
        subject,
        attribute: None,
        value: None,
        positive: true,
        change: false,
        past: false,
        instances: Vec::new(),
        clauses: 0,
        words: w.to_vec(),
    };
    if w.is_empty() {
        return other(None);
    }
    let (subj, from) = subject(w, speaker);
    let pred = &w[from.min(w.len())..];
    let mut c = other(subj.clone());
    c.clauses = heads(pred).len();
    c.instances = instances(pred, subj.as_deref());
    // a question claims nothing
    if w.last().is_some_and(|t| t == "?") || QUESTION_OPENERS.contains(&w[0].as_str()) && w.len() > 1 && !FIRST_PERSON.contains(&w[1].as_str()) && w[0] != "i" && w.iter().any(|t| t == "?") {
        return c;
    }
    // in a speaker's text a state without a subject ("living in the city, …") is not said of anyone
    let unowned = speaker.is_some() && subj.is_none();
    // "Contoso employs Ines Fischer": Ines Fischer's employer, said the other way round
    if let (Some(company), Some("employs")) = (subj.as_deref().and_then(|x| x.strip_prefix("name:")), pred.first().map(String::as_str)) {
        let person: Vec<&str> = pred[1..].iter().map(String::as_str).take_while(|t| t.chars().all(char::is_alphabetic)).collect();
        if (1..=3).contains(&person.len()) && person.len() + 1 + usize::from(pred.last().is_some_and(|t| t == ".")) == pred.len() {
            c.kind = Kind::State;
            c.subject = Some(format!("name:{}", person.join(" ")));
            c.attribute = Some("employer".into());
            c.value = Some(company.to_owned());
            return c;
        }
    }
    if let Some((attr, value, positive, change, past)) = keyed(pred).filter(|_| !unowned) {
        // a subject named after "for" ("the return window for customer cus_1 is 60 days")
        if c.subject.is_none() {
            c.subject = (0..pred.len()).filter(|&k| pred[k] == "for").find_map(|k| {
                let k = k + 1 + usize::from(pred.get(k + 1).is_some_and(|x| matches!(x.as_str(), "customer" | "user" | "client" | "account")));
                pred.get(k).filter(|x| is_id(x)).cloned()
            });
        }
        c.kind = Kind::State;
        c.attribute = Some(attr);
        c.value = value;
        c.positive = positive;
        // "Since 10 March 2024, I go by Nico": a state that started then is a change
        c.change = change
            || (lead_time(w) > 0 && matches!(w[0].as_str(), "since" | "from" | "starting" | "effective"))
            // "Now goes by Nico": the adverb before the subject (or before a subject-less verb)
            || w[..from.min(w.len())].iter().any(|x| x == "now")
            || find_seq(w, &["from", "now", "on"]).is_some();
        c.past = past;
        return c;
    }
    // chat: greetings, thanks, exclamations, agreement, advice to the listener
    // (in a speaker's words: a record is what it says)
    let opener = w[0].as_str();
    if speaker.is_some() && CHAT_OPENERS.contains(&opener) && subj.as_deref().is_none_or(|s| s.starts_with("speaker:")) {
        return c;
    }
    // an event: an action about a numbered thing (an order, a ticket), or placed at a time; in
    // a speaker's words also anything done (a past tense), planned or going on
    let verb_at = (0..pred.len()).find(|&p| past_tense(&pred[p]) && !(p > 0 && matches!(pred[p - 1].as_str(), "is" | "are" | "am" | "'s" | "'re" | "be" | "being" | "get" | "gets" | "stays" | "remains")));
    let anchored = (0..pred.len()).any(|i| {
        let t = pred[i].as_str();
        TIME_ANCHORS.contains(&t)
            || MONTHS.contains(&t)
            || (t.len() == 4 && t.chars().all(|c| c.is_ascii_digit()) && (t.starts_with("19") || t.starts_with("20")))
            || (matches!(t, "last" | "next" | "this" | "every") && pred.get(i + 1).is_some_and(|n| TIME_UNITS.contains(&n.as_str())))
            || (t == "day" && pred.get(i + 1).is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())))
            || (t == "on" && pred.get(i + 1).is_some_and(|n| n.chars().next().is_some_and(|c| c.is_ascii_digit())))
            || t.ends_with("-day")
    });
    let instance = pred.windows(2).any(|p| INSTANCE_NOUNS.contains(&p[0].as_str()) && (p[1].starts_with('#') || p[1].chars().any(|c| c.is_ascii_digit())))
        || pred.iter().any(|t| t.starts_with('#') && t.len() > 1);
    let planned = find_seq(pred, &["going", "to"]).is_some() || has(pred, "will") || find_seq(pred, &["planning", "to"]).is_some()
        || has(pred, "gonna");
    // a record's event is something done: a past tense (an order shipped, a refund asked for); a
    // present statement about a numbered thing or a date is a state of it ("Invoice inv_4410 is
    // paid", "acct_5590 renews on 14 February 2026")
    // a participle before the copula belongs to the subject ("the VAT rate for orders shipped to
    // Portugal is 23%"): the statement is of a state
    let copula_after = verb_at.is_some_and(|v| pred[v + 1..].iter().any(|t| matches!(t.as_str(), "is" | "are")));
    let verb_at = verb_at.filter(|_| speaker.is_some() || !copula_after);
    // a running count is a state of now ("has placed twelve orders in total", "has paid 3
    // invoices so far"), not an event
    let tally = find_seq(pred, &["in", "total"]).is_some() || has(pred, "altogether") || find_seq(pred, &["so", "far"]).is_some()
        || find_seq(pred, &["to", "date"]).is_some();
    let event = !tally && if speaker.is_some() { instance || anchored || verb_at.is_some() || planned } else { verb_at.is_some() };
    if event {
        c.kind = Kind::Event;
        return c;
    }
    // one value among several: a named subject's likes, languages, visits, things owned
    if subj.is_some()
        && (pred.iter().take(4).any(|t| MULTI_VERBS.contains(&t.as_str()))
            || find_seq(pred, &["fan", "of"]).is_some()
            || find_seq(pred, &["has", "been", "to"]).is_some()
            // one thing had among others ("has a dog", "has an office in Lisbon")
            || (at(pred, 0, &["has"]) || at(pred, 0, &["have"])) && pred.get(1).is_some_and(|t| t == "a" || t == "an")
            || find_seq(pred, &["have", "been", "to"]).is_some())
    {
        c.kind = Kind::Multi;
        return c;
    }
    // a generic statement: a plain statement of fact. In a speaker's words, what exclaims,
    // evaluates, speaks of a pronoun's referent or of an ongoing activity claims nothing review
    // could hold against their other words.
    let pronoun_subject = subj.is_none() && PRONOUNS.contains(&w[0].as_str());
    let exclaims = w.last().is_some_and(|t| t == "!");
    let evaluates = w.iter().any(|t| EVALUATIVE.contains(&t.as_str()));
    let ongoing = subj.as_deref().is_some_and(|s| s.starts_with("speaker:"))
        && (pred.iter().take(3).any(|t| t.ends_with("ing")) || at(pred, 0, &["have", "been"]) || at(pred, 0, &["am", "been"]));
    if speaker.is_some() && (pronoun_subject || exclaims || evaluates) {
        return c;
    }
    // in a speaker's text, only what the speaker says of themself as a plain state ("I am
    // allergic to peanuts", "I have two cats") can be held against their other words
    let of_self = subj.as_deref().is_some_and(|s| s.starts_with("speaker:"))
        && pred.first().is_some_and(|t| matches!(t.as_str(), "am" | "'m" | "have" | "has" | "do" | "don't" | "never" | "not" | "was"));
    if speaker.is_some() && !of_self {
        return c;
    }
    if ongoing {
        c.kind = Kind::Event;
        return c;
    }
    c.kind = Kind::Generic;
    c
}

/// Words of a judgement or a feeling: a sentence with one states no fact to hold another against.
const EVALUATIVE: &[&str] = &[
    "amazing", "awesome", "great", "nice", "cool", "fun", "happy", "sad", "proud", "excited", "exciting", "love",
    "hate", "beautiful", "fantastic", "wonderful", "hard", "tough", "easy", "lucky", "glad", "sorry", "inspiring",
    "interesting", "stunning", "cute", "delicious", "scary", "frustrating", "peaceful", "special", "important", "awful",
    "terrible", "perfect", "crazy", "incredible", "lovely", "gorgeous", "sweet", "boring", "difficult", "brave",
    "favourite", "favorite", "best", "worst", "so", "really", "totally", "super", "pretty", "truly", "such", "must",
    "should", "maybe", "probably", "hope", "think", "feel", "feels", "felt", "seems", "guess", "wish", "enjoy",
    "enjoyed", "enjoying", "appreciate", "thankful", "grateful", "blessed", "motivated", "motivation", "joy", "passion",
    "dream", "dreams", "powerful", "meaningful", "rewarding", "relaxing", "calming", "soothing", "comforting",
];

// ---------------------------------------------------------------------------------------------
// Relating two texts

fn same_subject(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y || x == "speaker:" || y == "speaker:",
        _ => true,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agreement {
    /// The same value, in the same or other words ("physician" / "doctor").
    Same,
    /// One may hold with the other: one is part of or more general than the other ("Lisbon,
    /// Portugal" / "Portugal"), or one is no value of its own ("a paid plan").
    Compatible,
    /// Two values.
    Other,
}

/// Plan words that name no plan of their own.
const NOT_A_PLAN: &[&str] = &["paid", "monthly", "annual", "yearly", "current", "same", "different", "other", "new", "old", "trial", "cheaper", "higher", "lower"];

/// How two values of one attribute agree (`wa`, `wb`: their sentences' words).
fn agreement(attribute: &str, a: &str, b: &str, wa: &[String], wb: &[String]) -> Agreement {
    if a == b {
        return Agreement::Same;
    }
    if attribute == "plan" && (NOT_A_PLAN.contains(&a) || NOT_A_PLAN.contains(&b)) {
        return Agreement::Compatible;
    }
    // one diet is not another ("vegan" / "vegetarian": a change of diet), one day another
    // a time of day named by the clock and one by its part of the day ("between 9 and 11 a.m." /
    // "in the morning") may be one
    if attribute == "call_time" && a.contains(|c: char| c.is_ascii_digit()) != b.contains(|c: char| c.is_ascii_digit()) {
        return Agreement::Compatible;
    }
    if matches!(attribute, "diet" | "birthday" | "delivery_time" | "call_time" | "return_window") {
        return Agreement::Other;
    }
    // one named in the other's sentence: a place within a place ("Lisbon, Portugal"), a name with
    // a title; not where a sentence says what it changed from
    let named_in = |v: &str, w: &[String]| {
        let left_behind = |i: usize| {
            (i.saturating_sub(2)..i).any(|k| matches!(w[k].as_str(), "not" | "left" | "from" | "of" | "leaving" | "longer"))
        };
        !w.iter().any(|t| t == "from")
            && v.split_whitespace().all(|x| w.iter().enumerate().any(|(i, t)| t == x && !left_behind(i)))
    };
    if matches!(attribute, "residence" | "address" | "name") && (named_in(a, wb) || named_in(b, wa)) {
        return Agreement::Compatible;
    }
    // the head words (the last ones) as WordNet relates them
    let (ha, hb) = (a.split_whitespace().last().unwrap_or(a), b.split_whitespace().last().unwrap_or(b));
    match lexicon::relation(ha, hb) {
        lexicon::Relation::Same | lexicon::Relation::Synonym => {
            // one trade, two kinds of it ("sales manager" / "project manager")
            let modifiers = |v: &str| v.split_whitespace().rev().skip(1).map(str::to_owned).collect::<Vec<_>>();
            let (ma, mb) = (modifiers(a), modifiers(b));
            let kin = |x: &String| mb.iter().any(|y| matches!(lexicon::relation(x, y), lexicon::Relation::Same | lexicon::Relation::Synonym));
            if attribute == "job" && !ma.is_empty() && !mb.is_empty() && !ma.iter().all(kin) {
                Agreement::Other
            } else {
                Agreement::Same
            }
        }
        lexicon::Relation::Hypernym | lexicon::Relation::Hyponym => Agreement::Compatible,
        _ => {
            // "medical doctor" / "physician": any word of one a synonym of the other's head
            if a.split_whitespace().chain(b.split_whitespace()).any(|x| {
                matches!(lexicon::relation(x, if a.contains(x) { hb } else { ha }), lexicon::Relation::Synonym)
            }) {
                Agreement::Same
            } else {
                Agreement::Other
            }
        }
    }
}

/// How a candidate's claims (`a`) relate to a memory's (`b`).
pub fn relate(a: &Analysis, b: &Analysis) -> Relation {
    // keyed states of the same subject and attribute, both current
    let mut same: Option<String> = None;
    let mut compared = false;
    for x in a.claims.iter().filter(|c| c.kind == Kind::State) {
        for y in b.claims.iter().filter(|c| c.kind == Kind::State) {
            let (Some(ax), Some(ay)) = (&x.attribute, &y.attribute) else { continue };
            if ax != ay || !same_subject(&x.subject, &y.subject) {
                continue;
            }
            compared = true;
            if x.past || y.past {
                continue; // a state that no longer holds does not meet a current one
            }
            let agree = match (&x.value, &y.value) {
                (Some(u), Some(v)) => agreement(ax, u, v, &x.words, &y.words),
                _ => Agreement::Other,
            };
            if agree == Agreement::Compatible {
                continue; // "Lisbon, Portugal" / "Portugal"; a paid plan / the Enterprise plan
            }
            let same_value = agree == Agreement::Same;
            if same_value && x.positive == y.positive {
                same.get_or_insert_with(|| ax.clone());
                continue;
            }
            // another value, the same value denied, or a change that ends the old value
            if !same_value && x.value.is_some() && y.value.is_some() && !x.positive && !y.positive {
                continue; // "does not live in X" / "does not live in Y"
            }
            if !same_value && (!x.positive || !y.positive) && x.value.is_some() && y.value.is_some() {
                continue; // "does not live in X" / "lives in Y": compatible
            }
            if x.value.is_none() && !(x.change && !x.positive) && !x.change {
                continue;
            }
            return Relation::Conflict { attribute: ax.clone(), change: x.change };
        }
    }
    if let Some(attribute) = same {
        let plain = |c: &Claim| c.kind == Kind::State && c.clauses <= 1;
        if a.single().is_some_and(plain) && b.single().is_some_and(plain) {
            return Relation::Same { attribute };
        }
    }
    if compared {
        return Relation::Compatible("state");
    }
    // the same speaker's or subject's claims only
    if let (Some(x), Some(y)) = (&a.speaker, &b.speaker) {
        if x != y {
            return Relation::Compatible("speaker");
        }
    }
    let (Some(x), Some(y)) = (a.single(), b.single()) else {
        return Relation::Compatible(if a.claims.iter().chain(&b.claims).all(|c| c.kind == Kind::Other) { "other" } else { "several" });
    };
    // two keyed states of other subjects or other attributes
    if x.kind == Kind::State && y.kind == Kind::State {
        return Relation::Compatible(if same_subject(&x.subject, &y.subject) { "attribute" } else { "subject" });
    }
    // a conversation's events, values and chat never clash; a record's meet by kind
    let spoken = a.speaker.is_some() || b.speaker.is_some();
    let kinds = (x.kind, y.kind);
    let has = |k: Kind| kinds.0 == k || kinds.1 == k;
    if has(Kind::Other) {
        return Relation::Compatible("other");
    }
    if has(Kind::Event) {
        if spoken {
            return Relation::Compatible("event");
        }
        // events of other numbered things are other events; of the same one, the same event. The
        // same things in other roles ("A referred B" / "B referred A") are the same; so is one
        // identified subject with no other thing named ("ord_5120 was shipped via UPS").
        let names = |c: &Claim, t: &str| c.subject.as_deref() == Some(t) || c.instances.iter().any(|i| i == t);
        let swapped = x.instances.iter().any(|i| names(y, i)) || y.instances.iter().any(|i| names(x, i));
        // things, not who acted: a customer's id named in both does not make one event
        let thing = |i: &String| i.contains(' ') || is_thing_id(i);
        let shared = x.instances.iter().filter(|i| thing(i)).any(|i| y.instances.contains(i));
        // two things of one kind ("parcel P-70199" / "parcel P-70127" of one order) are two
        let kind_of = |i: &String| i.split(' ').next().unwrap_or("").to_owned();
        let other_of_a_kind = x.instances.iter().filter(|i| i.contains(' ')).any(|i| {
            y.instances.iter().any(|j| j.contains(' ') && kind_of(i) == kind_of(j) && i != j)
        });
        if other_of_a_kind || (!x.instances.is_empty() && !y.instances.is_empty() && !shared && !swapped) {
            return Relation::Compatible("event");
        }
        // one step of a thing's life after another ("opened ticket T-5095" / "closed ticket
        // T-5095", "left the warehouse" / "arrived damaged")
        if let (Some(p), Some(q)) = (action(x), action(y)) {
            if lexicon::paired(LIFECYCLE, &p, &q) {
                return Relation::Compatible("lifecycle");
            }
        }
        // A customer acts many times; an order, a parcel, an invoice is one thing.
        let one_subject = x.instances.is_empty()
            && y.instances.is_empty()
            && x.subject.as_deref().is_some_and(|t| is_thing_id(t) && y.subject.as_deref() == Some(t));
        // one event: of one thing, and the same action where both name one ("order 1026 was paid"
        // and "order 1026 was rescheduled" are two events of it)
        // and an action that happens to a thing once (shipped, delivered, cancelled); a payment
        // received or a delivery rescheduled may happen again
        let same_action = match (action(x), action(y)) {
            (Some(p), Some(q)) => p == q && ONCE.contains(&p.as_str()),
            _ => true,
        };
        // and what a customer or a person does once in a life ("joined on 2025-07-04" / "joined
        // in August 2025")
        let once_in_a_life = x.subject.is_some()
            && x.subject == y.subject
            && matches!((action(x), action(y)), (Some(p), Some(q)) if p == q && ONCE_IN_A_LIFE.contains(&p.as_str()));
        // and an action each says was done once ("upgraded once, before the price change" /
        // "upgraded once, after …"): that one time
        let said_once = x.subject.is_some()
            && x.subject == y.subject
            && matches!((action(x), action(y)), (Some(p), Some(q)) if p == q)
            && [x, y].iter().all(|c| c.words.iter().any(|w| w == "once"));
        let one_thing = shared || swapped || one_subject;
        // (of the same object: "returned a blender" / "kept the toaster" of one order are two)
        let other_thing = |c: &Claim, o: &Claim| {
            c.words.iter().any(|t| {
                t.chars().all(char::is_alphabetic)
                    && !o.words.contains(t)
                    && !past_tense(t)
                    && !STOP.contains(&t.as_str())
                    && !ARTICLES.contains(&t.as_str())
                    && !PRONOUNS.contains(&t.as_str())
                    && lexicon::parts_of_speech(&lexicon::lemma(t)) == [lexicon::Pos::Noun]
            })
        };
        let opposed = one_thing
            && !(other_thing(x, y) && other_thing(y, x))
            && matches!((action(x), action(y)), (Some(p), Some(q)) if lexicon::paired(OPPOSED, &p, &q));
        return Relation::Events { same_instance: (one_thing && same_action) || once_in_a_life || said_once, opposed };
    }
    if has(Kind::Multi) {
        if spoken || !same_subject(&x.subject, &y.subject) {
            return Relation::Compatible("multi");
        }
        return Relation::Values;
    }
    // generic statements of two named subjects are about two things ("Samir is allergic to pollen"
    // / "Karl is allergic to pollen"), unless each names the other ("Acme pays Globex" / "Globex
    // pays Acme")
    if let (Some(sx), Some(sy)) = (&x.subject, &y.subject) {
        let names_in = |s: &str, c: &Claim| {
            let s = s.strip_prefix("name:").unwrap_or(s);
            s.split(' ').all(|t| c.words.iter().any(|w| w == t))
        };
        if sx != sy && !sx.starts_with("speaker:") && !sy.starts_with("speaker:") && !(names_in(sx, y) && names_in(sy, x)) {
            return Relation::Compatible("subject");
        }
    }
    // a keyed state beside a generic statement of the same subject meets it only to deny it
    // ("goes by Kate" / "has three kids")
    if (x.kind == Kind::State) != (y.kind == Kind::State) && x.subject.is_some() && x.subject == y.subject {
        return Relation::Values;
    }
    // generic statements: the comparison and the judge
    Relation::Generic
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(t: &str) -> Vec<Kind> {
        analyze(t).claims.iter().map(|c| c.kind).collect()
    }

    fn rel(a: &str, b: &str) -> Relation {
        relate(&analyze(a), &analyze(b))
    }

    #[test]
    fn speaker_and_date() {
        let a = analyze("Caroline (8 May 2023): I went to a LGBTQ support group yesterday.");
        assert_eq!(a.speaker.as_deref(), Some("caroline"));
        assert_eq!(a.date.as_deref(), Some("8 May 2023"));
        assert_eq!(a.claims[0].kind, Kind::Event);
        assert_eq!(a.claims[0].subject.as_deref(), Some("speaker:caroline"));
        assert_eq!(analyze("Note: the gate opens at 9.").speaker, None);
        assert_eq!(analyze("The west gate opens at 10 am.").speaker, None);
    }

    #[test]
    fn events_never_contradict() {
        for (a, b) in [
            ("Order 1 of customer u1 shipped on day 1.", "Order 2 of customer u1 shipped on day 2."),
            ("cus_1 asked for a refund on order 1001.", "cus_1 asked for a refund on order 2002."),
            ("cus_1 reported a damaged parcel on order #8122.", "cus_1 asked for a refund on order #2202."),
            ("cus_1 ordered a standing desk in January.", "cus_1 has a standing order every month."),
            ("Caroline: I went to a support group yesterday.", "Caroline: I went to a pride parade last week."),
            ("Caroline (8 May 2023): I painted a sunrise.", "Caroline (9 May 2023): I painted a lake."),
        ] {
            // a record's events meet only by what the comparison finds other than a number,
            // a conversation's never
            assert!(matches!(rel(a, b), Relation::Compatible(_) | Relation::Events { .. } | Relation::Values), "{a} / {b}: {:?}", rel(a, b));
        }
        assert!(matches!(rel("Caroline: I went to the party.", "Caroline: I did not go to the party."), Relation::Compatible(_)));
    }

    #[test]
    fn one_step_of_a_things_life_after_another() {
        for (a, b) in [
            ("Support closed ticket T-5095.", "Customer cus_106 opened ticket T-5095 about a missing item."),
            ("Ticket T-5171 was closed on May 21, 2024.", "Ticket T-5171 was opened about a missing item."),
            ("Parcel P-73134 of order 1815 arrived damaged.", "Order 1815 left the warehouse on 12 February 2024."),
        ] {
            assert_eq!(rel(a, b), Relation::Compatible("lifecycle"), "{a} / {b}");
        }
        // two outcomes of one step are not two steps
        assert!(matches!(rel("The refund request for ord_9090 was approved.", "The refund request for ord_9090 was declined."), Relation::Events { opposed: true, .. }));
        assert!(matches!(rel("cust_3142 kept the blender from ord_6230.", "cust_3142 returned the blender from ord_6230."), Relation::Events { opposed: true, .. }));
        // of two things, or one step after another: nothing opposed
        assert!(matches!(rel("cust_3142 returned a blender from ord_6230.", "cust_3142 kept the toaster from ord_6230."), Relation::Events { opposed: false, .. }));
        assert!(matches!(rel("The refund request for ord_9090 was approved.", "The refund request for ord_9091 was declined."), Relation::Compatible(_)));
        assert!(matches!(rel("ord_9090 was shipped.", "ord_9090 was returned."), Relation::Compatible("lifecycle")));
        // a running count is no event: another count of it is another value
        assert_eq!(rel("cust_2601 has placed twelve orders in total.", "cust_2601 has placed 21 orders in total."), Relation::Generic);
    }

    #[test]
    fn multi_valued_and_unrelated_facts_coexist() {
        for (a, b) in [
            ("cus_1 likes green tea.", "cus_1 likes espresso."),
            ("cust_7450 has a dog.", "cust_7450 has a cat."),
            ("cus_1 has an office in Lisbon.", "cus_1 has an office in Madrid."),
            ("cus_1 speaks Portuguese.", "cus_1 wants invoices sent by post to Lisbon."),
            ("Melanie: I love painting.", "Melanie: I love running."),
            ("cus_1 has visited Japan.", "cus_1 has visited Peru."),
        ] {
            assert!(matches!(rel(a, b), Relation::Compatible(_) | Relation::Events { .. } | Relation::Values), "{a} / {b}: {:?}", rel(a, b));
        }
    }

    #[test]
    fn state_changes_conflict_with_the_older_state() {
        for (a, b, attr) in [
            ("cus_1 moved to Porto.", "cus_1 lives in Lisbon.", "residence"),
            ("Moved to Porto.", "Lives in Lisbon.", "residence"),
            ("cus_1 no longer follows a vegan diet.", "cus_1 follows a vegan diet.", "diet"),
            ("cus_1 changed jobs and now works at Globex.", "cus_1 works at Acme.", "employer"),
            ("cus_1 now works at Globex.", "cus_1 works at Acme.", "employer"),
            ("cus_1 downgraded from the Pro plan to the Basic plan.", "cus_1 is on the Pro plan.", "plan"),
            ("Caroline: I moved to Seattle.", "Caroline: I live in Boston.", "residence"),
        ] {
            assert_eq!(rel(a, b), Relation::Conflict { attribute: attr.into(), change: true }, "{a} / {b}");
        }
        // another current value, said without a change
        assert_eq!(rel("cus_1 lives in Porto.", "cus_1 lives in Lisbon."), Relation::Conflict { attribute: "residence".into(), change: false });
        assert_eq!(rel("cus_1 prefers phone calls.", "cus_1 prefers email."),
                   Relation::Conflict { attribute: "contact_channel".into(), change: false });
        // two kinds of one trade are two jobs
        assert_eq!(rel("Samir Ortega is a sales manager.", "Samir Ortega is a project manager."),
                   Relation::Conflict { attribute: "job".into(), change: false });
    }

    #[test]
    fn birthdays_and_delivery_times_are_keyed() {
        for (a, b, attr) in [
            ("Bruno Keller was born on 21 August.", "Bruno Keller's birthday is on 21 August.", "birthday"),
            ("Bruno Keller celebrates their birthday on August 21.", "Bruno Keller's birthday is on 21 August.", "birthday"),
            ("Rosa Lindqvist would rather have deliveries in the morning.", "Rosa Lindqvist prefers morning deliveries.", "delivery_time"),
            ("Rosa Lindqvist likes deliveries to arrive in the morning.", "Rosa Lindqvist prefers morning deliveries.", "delivery_time"),
        ] {
            assert_eq!(rel(a, b), Relation::Same { attribute: attr.into() }, "{a} / {b}");
        }
        assert_eq!(rel("Bruno Keller was born on 22 August.", "Bruno Keller's birthday is on 21 August."),
                   Relation::Conflict { attribute: "birthday".into(), change: false });
        assert_eq!(rel("Rosa prefers evening deliveries.", "Rosa prefers morning deliveries."),
                   Relation::Conflict { attribute: "delivery_time".into(), change: false });
        assert!(matches!(rel("Rosa prefers evening deliveries.", "Ana prefers morning deliveries."), Relation::Compatible(_)));
    }

    #[test]
    fn call_times_return_windows_and_trades_are_keyed() {
        for (a, b, attr) in [
            ("Amir Weber would rather be called after 2 pm.", "Amir Weber prefers calls after 2 pm.", "call_time"),
            ("Call Amir Weber after 2 pm, as they prefer.", "Amir Weber prefers calls after 2 pm.", "call_time"),
            ("cus_199 has 60 days to return items.", "Customer cus_199 may return items within 60 days.", "return_window"),
            ("The return window for customer cus_199 is 60 days.", "Customer cus_199 may return items within 60 days.", "return_window"),
            ("Our return window is two weeks.", "Items may be returned within 14 days.", "return_window"),
            ("Jonas Petrov is employed as a lawyer.", "Jonas Petrov is a lawyer.", "job"),
            ("Contoso employs Ines Fischer.", "Ines Fischer works at Contoso.", "employer"),
        ] {
            assert_eq!(rel(a, b), Relation::Same { attribute: attr.into() }, "{a} / {b}");
        }
        for (a, b, attr) in [
            ("Amir Weber prefers calls before 2 pm.", "Amir Weber prefers calls after 2 pm.", "call_time"),
            ("Amir Weber prefers calls after 3 pm.", "Amir Weber prefers calls after 2 pm.", "call_time"),
            ("Customer cus_199 may return items within 45 days.", "Customer cus_199 may return items within 60 days.", "return_window"),
        ] {
            assert_eq!(rel(a, b), Relation::Conflict { attribute: attr.into(), change: false }, "{a} / {b}");
        }
        assert_eq!(rel("Our return window is 30 days.", "Our return window is two weeks."), Relation::Conflict { attribute: "return_window".into(), change: false });
        assert_eq!(rel("Globex employs Ines Fischer.", "Ines Fischer works at Contoso."), Relation::Conflict { attribute: "employer".into(), change: false });
        assert!(matches!(rel("Contoso employs Ana Silva.", "Ines Fischer works at Contoso."), Relation::Compatible(_)));
        assert!(matches!(rel("cust_7714 wants calls between 9 and 11 a.m.", "cust_7714 wants calls in the morning."), Relation::Compatible(_)));
        // another customer's window, a call not wanted, an order returned
        assert!(matches!(rel("The return window for customer cus_114 is 60 days.", "Customer cus_199 may return items within 45 days."), Relation::Compatible(_)));
        assert!(!matches!(rel("Amir Weber does not want calls after 2 pm.", "Amir Weber prefers calls after 2 pm."), Relation::Same { .. }));
        assert!(!matches!(rel("cus_199 returned 2 items within 30 days.", "Customer cus_199 may return items within 60 days."), Relation::Conflict { .. }));
    }

    #[test]
    fn not_a_conflict() {
        // another subject, another speaker, a past state, another attribute, another topic
        for (a, b) in [
            ("cus_2 lives in Porto.", "cus_1 lives in Lisbon."),
            ("Melanie: I live in Boston.", "Caroline: I live in Seattle."),
            ("cus_1 lived in Porto for years.", "cus_1 lives in Lisbon."),
            ("cus_1 works at Acme.", "cus_1 lives in Lisbon."),
            ("cus_1 prefers email for invoices.", "cus_1 prefers phone for urgent issues."),
            ("cus_1 does not live in Porto.", "cus_1 lives in Lisbon."),
        ] {
            assert!(matches!(rel(a, b), Relation::Compatible(_)), "{a} / {b}: {:?}", rel(a, b));
        }
    }

    #[test]
    fn the_same_claim_in_other_words() {
        assert_eq!(
            rel("cus_1 would like order updates by email.", "Customer cus_1 prefers email for all order updates."),
            Relation::Same { attribute: "contact_channel:order update".into() }
        );
        assert_eq!(
            rel("The customer cus_1 prefers to get all order updates via e-mail.", "Customer cus_1 prefers email for all order updates."),
            Relation::Same { attribute: "contact_channel:order update".into() }
        );
        assert_eq!(rel("cus_1 is vegan.", "cus_1 follows a vegan diet."), Relation::Same { attribute: "diet".into() });
    }

    #[test]
    fn generic_statements_go_to_the_comparison() {
        assert_eq!(rel("The west gate opens at 10 am.", "The west gate opens at 9 am."), Relation::Generic);
        assert_eq!(rel("Refunds over 500 EUR need a manager's approval.", "Refunds over 500 EUR need no approval."), Relation::Generic);
    }

    #[test]
    fn chat_claims_nothing() {
        assert_eq!(kinds("Caroline: Thanks, Mel! Glad you like it."), vec![Kind::Other, Kind::Other]);
        assert_eq!(kinds("What was the best part?"), vec![Kind::Other]);
        // a record is what it says
        assert_eq!(kinds("The kids love the blue couch."), vec![Kind::Generic]);
        assert!(matches!(rel("Caroline: Wow, that sounds amazing!", "Caroline: That is so cool!"), Relation::Compatible(_)));
    }

    fn state(text: &str) -> (Option<String>, Option<String>, Option<String>, bool, bool) {
        let a = analyze(text);
        let c = a.claims.iter().find(|c| c.kind == Kind::State).unwrap_or_else(|| panic!("{text}: no keyed state"));
        (c.subject.clone(), c.attribute.clone(), c.value.clone(), c.positive, c.change)
    }

    #[test]
    fn states_of_named_and_dated_subjects() {
        let s = |x: &str| Some(x.to_owned());
        // a name, a leading time, a possessive
        assert_eq!(state("Walter Santos lives in Munich."), (s("name:walter santos"), s("residence"), s("munich"), true, false));
        assert_eq!(state("As of 20 January 2024, I follow a pescatarian diet.").1, s("diet"));
        assert_eq!(state("On April 20, 2024, customer cus_304 switched their contact channel to SMS."),
                   (s("cus_304"), s("contact_channel"), s("sms"), true, true));
        assert_eq!(state("Customer cus_304's home is in Dublin.").1, s("residence"));
        // a start in time, or "now" before a subject-less verb, is a change
        assert!(state("Since 10 March 2024, I go by Nico.").4);
        assert!(state("Now goes by Nico").4);
        // what a switch is to decides the attribute
        assert_eq!(state("I switched from a pescatarian diet to a vegetarian diet.").1, s("diet"));
        assert_eq!(state("Customer cus_305 switched their timezone to America/New_York.").1, s("timezone"));
        assert_eq!(state("Switched to email for order updates").1, s("contact_channel:order update"));
        assert_eq!(state("Time zone changed to Europe/Berlin").1, s("timezone"));
        // trades, employers, plans
        assert_eq!(state("cus_303 changed careers and is now a nurse.").2, s("nurse"));
        assert_eq!(state("Diogo Horvat left Blue Harbor Bank for Acme Corp.").2, s("acme corp"));
        assert_eq!(state("Walter Santos has a Basic plan subscription.").2, s("basic"));
        assert_eq!(state("Subscribes to the Basic plan").2, s("basic"));
        assert_eq!(state("Karl Horvat's preferred name is Meg.").2, s("meg"));
        assert_eq!(state("Ana's preferred contact channel is phone.").1, s("contact_channel"));
        assert_eq!(state("Samir Bianchi has a new job at Acme Corp.").2, s("acme corp"));
        // generic statements of two named subjects are about two things, unless each names the other
        assert!(matches!(rel("Samir Moreau is allergic to pollen.", "Karl Santos is allergic to pollen."), Relation::Compatible(_)));
        assert!(!matches!(rel("Acme pays Globex every month.", "Globex pays Acme every month."), Relation::Compatible(_)));
        assert!(matches!(rel("Globex pays Vandelay Industries every month.", "Vandelay Industries pays Contoso every month."), Relation::Compatible(_)));
        // addresses however a change is told, contact by imperative, one diet for another
        assert_eq!(state("cus_311's shipping address changed from 86 Harbour Road, Porto to 114 Calle Mayor, Athens.").2,
                   s("114 calle mayor athens"));
        assert_eq!(state("Wanda Weber updated their shipping address to 95 Via Roma, Milan.").2, s("95 via roma milan"));
        assert_eq!(state("cus_311 has their parcels shipped to 96 Harbour Road, Prague.").1, s("address"));
        assert_eq!(state("The best way to reach cus_311 is by email.").2, s("email"));
        assert_eq!(state("From now on, contact cus_303 by SMS, not phone.").2, s("sms"));
        assert_eq!(state("Nadia moved from the Basic plan to the Team plan.").1, s("plan"));
        assert_eq!(state("cus_330 left Fabrikam and joined Litware.").2, s("litware"));
        assert!(matches!(rel("Carlos is vegetarian now.", "Carlos eats a vegan diet."), Relation::Conflict { .. }));
        // a value the text says it left is not one it names
        assert!(matches!(rel("Nuno Silva left Valencia and now lives in Rotterdam.", "Nuno Silva lives in Valencia."), Relation::Conflict { .. }));
        assert!(matches!(rel("My preferred name is now Katherine, not Kathy.", "I now go by Kathy."), Relation::Conflict { .. }));
        // common words are no name, and a bronze member has no trade
        assert_eq!(kinds("Time zone is America/Chicago"), vec![Kind::State]);
        assert!(analyze("cus_303 is a bronze member of the loyalty programme.").claims.iter().all(|c| c.kind != Kind::State));
    }

    #[test]
    fn one_event_is_one_thing_and_one_action() {
        let same = |a: &str, b: &str| matches!(rel(a, b), Relation::Events { same_instance: true, .. });
        // one order delivered on two dates: one event told two ways
        assert!(same("ord_7002 was delivered on 2026-03-01.", "ord_7002 was delivered on March 2nd, 2026."));
        // what each says was done once, by one and the same
        assert!(same("cust_8123 upgraded once, before the price change.", "cust_8123 upgraded once, after the price change."));
        assert!(!same("cust_8123 upgraded once, before the price change.", "cust_8123 upgraded after the price change."));
        assert!(!same("cust_8123 upgraded once.", "cust_8124 upgraded once."));
        // roles swapped between the same two: events that meet (the comparison finds the swap)
        assert!(matches!(rel("cust_4022 referred cust_5150.", "cust_5150 referred cust_4022."), Relation::Events { .. }));
        // two payments of one order, two reschedulings, two parcels, two orders of one customer
        assert!(!same("Payment of 59 EUR for order 1026 was received on 16 March 2024.",
                      "Payment of 25 EUR for order 1026 was received on 25 February 2024."));
        assert!(matches!(rel("Parcel P-70199 of order 1026 arrived damaged.", "Parcel P-70127 of order 1026 arrived damaged."),
                         Relation::Compatible(_)));
        assert!(matches!(rel("Order 1399 of cus_101 shipped on 16 June 2024.", "Order 1096 of cus_101 shipped on 26 February 2024."),
                         Relation::Compatible(_)));
        // a customer acts many times
        assert!(!same("cus_101 paid 40 EUR on 2 April 2024.", "cus_101 paid 120 EUR on 2024-01-30."));
    }

    #[test]
    fn one_text_extending_another_is_no_paraphrase() {
        assert!(extends("Customer cus_77 wants paper invoices sent to the Lisbon office.", "Customer cus_77 wants paper invoices."));
        assert!(!extends("cus_1 would like order updates by email.", "Customer cus_1 prefers email for all order updates."));
        assert!(!extends("Customer cus_77 wants paper invoices.", "Customer cus_77 wants paper invoices sent to the Lisbon office."));
        assert!(same_names("Gil Silva resides in Lyon.", "Gil Silva's home is in Lyon."));
        assert!(same_names("Prefers SMS for order updates", "Would like order updates by SMS"));
        assert!(same_names("Lives in Berlin", "Home is in Berlin"));
        // a name opening one sentence and inside the other is the same name
        assert!(same_names("Call Karl Moreau after 5 pm, as they prefer.", "Karl Moreau prefers calls after 5 pm."));
        assert!(!same_names("Call Karl Moreau after 5 pm.", "Rosa Moreau prefers calls after 5 pm."));
        // a common word opening a sentence is a name where the other text names it
        assert!(same_names("Stark Analytics employs Teresa Ribeiro.", "Teresa Ribeiro works at Stark Analytics."));
        assert!(!same_names("Stark Analytics employs Teresa Ribeiro.", "Teresa Ribeiro works at Stark Labs."));
        assert!(!same_names("Ana Nieminen wants invoices sent by post to Leeds.", "Ana Nieminen wants invoices sent by post to Porto."));
        assert!(same_names("The monthly fee is EUR 40.", "Pays a monthly fee of €40."));
        assert!(same_names("Renews on Feb. 14, 2026.", "Renews on 14 February 2026."));
        assert!(same_names("Wants invoices as PDF attachments.", "Wants invoices as attached PDFs."));
        assert!(!same_names("The monthly fee is EUR 40.", "Pays a monthly fee of €45."));
        assert!(same_names("Order ord_8891 contains three items.", "There are 3 items in order ord_8891."));
        assert!(same_names("VAT for orders shipped to Portugal is 23%.", "Orders shipped to Portugal are charged 23 percent VAT."));
        assert!(!same_names("Order ord_8891 contains three items.", "There are 4 items in order ord_8891."));
    }
}
