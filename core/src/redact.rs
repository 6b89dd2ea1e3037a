//! Redaction before write: the built-in rules (payment-card numbers with a Luhn check, common
//! secret and API-key shapes) and a tenant's own regex rules. Uses the `regex` crate, whose
//! matching is linear in the input, so no pattern can make a capture hang.

use crate::error::{Error, Result};
use crate::interrupt::{self, Every};
use crate::policy::RedactionRule;
use regex::{Regex, RegexBuilder};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

pub const CARD_REPLACEMENT: &str = "[REDACTED:payment_card]";

/// The most a rule's pattern may compile to, in bytes (the regex crate's `size_limit`, which
/// bounds each of the rule's compiled automata). A pattern over it is refused with 54000. The
/// regex crate does not report what a compiled regex uses, so a policy's own rules are bounded by
/// this times `policy::REDACTION_RULES_MAX`, not by a measured total.
pub const RULE_COMPILED_MAX_BYTES: usize = 256 * 1024;

/// The capacity of a rule's lazy-DFA transition cache, in bytes (the regex crate's
/// `dfa_size_limit`). Filling it makes searches slower (the cache is reset, or the search
/// falls back to a slower engine), never wrong and never an error.
pub const RULE_DFA_CACHE_MAX_BYTES: usize = 1024 * 1024;


/// Redaction checks for interrupts once per this many matches of one rule, and once per this
/// many bytes of a walk over the text.
const CHECK_EVERY_MATCHES: usize = 256;
const CHECK_EVERY_BYTES: usize = 64 * 1024;
/// ... and once per this many digit groups or card candidates, and JSON elements.
const CHECK_EVERY_ITEMS: usize = 4096;

#[derive(Clone)]
struct Rule {
    name: String,
    re: Regex,
    replacement: String,
    /// The replacement has no `$` group reference: it is inserted as it is.
    literal: bool,
}

impl Rule {
    /// Replaces every match, as `Regex::replace_all` does, counting them and checking for
    /// interrupts every `CHECK_EVERY_MATCHES` matches. None when nothing matched.
    fn apply(&self, text: &str) -> Option<(String, usize)> {
        let mut out = String::new();
        let mut last = 0;
        let mut n = 0;
        let mut every = Every::new(CHECK_EVERY_MATCHES);
        if self.literal {
            for m in self.re.find_iter(text) {
                every.tick(1);
                out.push_str(&text[last..m.start()]);
                out.push_str(&self.replacement);
                last = m.end();
                n += 1;
            }
        } else {
            for caps in self.re.captures_iter(text) {
                every.tick(1);
                let m = caps.get(0).expect("group 0 is the whole match");
                out.push_str(&text[last..m.start()]);
                caps.expand(&self.replacement, &mut out);
                last = m.end();
                n += 1;
            }
        }
        if n == 0 {
            return None;
        }
        out.push_str(&text[last..]);
        Some((out, n))
    }
}

/// A compiled set of rules. Build once per policy version and reuse.
pub struct Redactor {
    cards: bool,
    rules: Vec<Rule>,
}

/// What redaction did to one input.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub count: usize,
    /// Rule names, in the order they first fired (for the audit trail, never the matches).
    pub rules: Vec<String>,
}

impl Outcome {
    fn add(&mut self, name: &str, n: usize) {
        if n > 0 {
            self.count += n;
            if !self.rules.iter().any(|r| r == name) {
                self.rules.push(name.to_owned());
            }
        }
    }
}

fn builtin_rules() -> &'static [(&'static str, &'static str, &'static str)] {
    // (name, pattern, replacement). Order matters: multi-line blocks first.
    &[
        (
            "private_key",
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
            "[REDACTED:private_key]",
        ),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "[REDACTED:jwt]"),
        (
            "aws_access_key",
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
            "[REDACTED:aws_access_key]",
        ),
        ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", "[REDACTED:github_token]"),
        ("slack_token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}", "[REDACTED:slack_token]"),
        ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b", "[REDACTED:stripe_key]"),
        ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", "[REDACTED:google_api_key]"),
        ("api_key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", "[REDACTED:api_key]"),
        ("bearer_token", r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/-]{16,}=*", "${1}[REDACTED:bearer_token]"),
        (
            "url_password",
            r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@",
            "${1}[REDACTED:password]@",
        ),
        (
            "secret_assignment",
            r#"(?i)\b((?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)["']?\s*[:=]\s*)(?:"[^"\n]*"|'[^'\n]*'|[^\s,;]+)"#,
            "${1}[REDACTED:secret]",
        ),
    ]
}

fn compile(name: &str, pattern: &str, replacement: &str) -> Result<Rule> {
    let re = RegexBuilder::new(pattern)
        .size_limit(RULE_COMPILED_MAX_BYTES)
        .dfa_size_limit(RULE_DFA_CACHE_MAX_BYTES)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => {
                Error::limit(format!("redaction rule \"{name}\" compiles to too large a program"))
                    .detail(format!("The compiled pattern would exceed {limit} bytes, the most one rule may use."))
                    .hint("Use fewer or smaller counted repetitions and narrower character classes (e.g. [A-Za-z0-9_] instead of \\w).")
            }
            e => Error::invalid(format!("redaction rule \"{name}\" has an invalid pattern"))
                .detail(first_line(&e.to_string())),
        })?;
    Ok(Rule { name: name.to_owned(), re, replacement: replacement.to_owned(), literal: !replacement.contains('$') })
}

/// The regex crate's message is several lines ending in "error: <reason>"; keep the reason.
fn first_line(s: &str) -> String {
    let line = s.lines().last().unwrap_or(s).trim();
    let reason = line.strip_prefix("error: ").unwrap_or(line).trim_end_matches('.');
    format!("The pattern does not compile: {reason}.")
}

impl Redactor {
    /// Compiles the built-in rules (when `defaults` is set) followed by the tenant's rules.
    /// Refuses (54000) more rules, or longer ones, than a policy may hold (see
    /// `policy::check_redaction_rules`), and a pattern over `RULE_COMPILED_MAX_BYTES`.
    pub fn new(defaults: bool, tenant_rules: &[RedactionRule]) -> Result<Redactor> {
        crate::policy::check_redaction_rules(tenant_rules)?;
        let mut rules = Vec::with_capacity(tenant_rules.len() + if defaults { builtin_rules().len() } else { 0 });
        if defaults {
            static BUILTIN: OnceLock<Vec<Rule>> = OnceLock::new();
            let builtin = BUILTIN.get_or_init(|| {
                builtin_rules()
                    .iter()
                    .map(|(n, p, r)| compile(n, p, r).expect("built-in redaction pattern compiles"))
                    .collect()
            });
            rules.extend(builtin.iter().cloned());
        }
        for r in tenant_rules {
            interrupt::check();
            rules.push(compile(&r.name, &r.pattern, &r.replacement)?);
        }
        Ok(Redactor { cards: defaults, rules })
    }

    /// Redacts one string.
    pub fn redact_str(&self, input: &str, outcome: &mut Outcome) -> String {
        let mut text = Cow::Borrowed(input);
        for rule in &self.rules {
            interrupt::check();
            if let Some((replaced, n)) = rule.apply(&text) {
                text = Cow::Owned(replaced);
                outcome.add(&rule.name, n);
            }
        }
        if self.cards {
            interrupt::check();
            let (s, n) = redact_cards(&text);
            if n > 0 {
                outcome.add("payment_card", n);
                return s;
            }
        }
        text.into_owned()
    }

    /// Redacts every string (keys included) and every card-shaped integer of a JSON value.
    pub fn redact_json(&self, value: &Value, outcome: &mut Outcome) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact_str(s, outcome)),
            Value::Number(n) if self.cards => {
                let digits = n.to_string();
                if digits.bytes().all(|b| b.is_ascii_digit())
                    && (13..=19).contains(&digits.len())
                    && luhn_valid(digits.as_bytes())
                {
                    outcome.add("payment_card", 1);
                    Value::String(CARD_REPLACEMENT.to_owned())
                } else {
                    value.clone()
                }
            }
            Value::Array(items) => {
                let mut every = Every::new(CHECK_EVERY_ITEMS);
                Value::Array(
                    items
                        .iter()
                        .map(|v| {
                            every.tick(1);
                            self.redact_json(v, outcome)
                        })
                        .collect(),
                )
            }
            Value::Object(map) => {
                let mut out = serde_json::Map::with_capacity(map.len());
                let mut every = Every::new(CHECK_EVERY_ITEMS);
                for (k, v) in map {
                    every.tick(1);
                    let k = self.redact_str(k, outcome);
                    let v = self.redact_json(v, outcome);
                    out.insert(k, v);
                }
                Value::Object(out)
            }
            _ => value.clone(),
        }
    }
}

/// Luhn checksum over ASCII digits (anything else is not a valid number).
pub fn luhn_valid(digits: &[u8]) -> bool {
    if !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut v = u32::from(d - b'0');
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    !digits.is_empty() && sum.is_multiple_of(10)
}

/// A maximal run of ASCII digits in the text.
#[derive(Clone, Copy)]
struct Group {
    start: usize,
    end: usize,
}

/// Finds payment-card numbers: 13 to 19 digits, written together or in groups separated by
/// single spaces or dashes, passing the Luhn check and not glued to other letters or digits.
/// Digit groups are chained, and every window of consecutive groups is tried (longest first),
/// so a card followed by an expiry date or preceded by an order number is still found.
fn redact_cards(text: &str) -> (String, usize) {
    let bytes = text.as_bytes();
    let mut groups: Vec<Group> = Vec::new();
    let mut i = 0;
    let mut every = Every::new(CHECK_EVERY_BYTES);
    while i < bytes.len() {
        let from = i;
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            groups.push(Group { start, end: i });
        } else {
            i += 1;
        }
        every.tick(i - from);
    }
    if groups.is_empty() {
        return (text.to_owned(), 0);
    }
    // Split the groups into chains joined by exactly one space or dash.
    let mut spans: Vec<(usize, usize)> = Vec::new(); // byte ranges to redact
    let mut chain_start = 0;
    let mut every = Every::new(CHECK_EVERY_ITEMS);
    for g in 1..=groups.len() {
        every.tick(1);
        let joined = g < groups.len()
            && groups[g].start == groups[g - 1].end + 1
            && matches!(bytes[groups[g - 1].end], b' ' | b'-');
        if !joined {
            find_in_chain(bytes, &groups[chain_start..g], &mut spans);
            chain_start = g;
        }
    }
    if spans.is_empty() {
        return (text.to_owned(), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut every = Every::new(CHECK_EVERY_ITEMS);
    for &(s, e) in &spans {
        every.tick(1);
        out.push_str(&text[last..s]);
        out.push_str(CARD_REPLACEMENT);
        last = e;
    }
    out.push_str(&text[last..]);
    (out, spans.len())
}

fn find_in_chain(bytes: &[u8], chain: &[Group], spans: &mut Vec<(usize, usize)>) {
    let glued = |pos: Option<usize>| pos.is_some_and(|p| bytes[p].is_ascii_alphanumeric() || bytes[p] == b'_');
    let mut a = 0;
    let mut every = Every::new(CHECK_EVERY_ITEMS);
    while a < chain.len() {
        every.tick(1);
        let mut found = None;
        // Longest window starting at group a first.
        let mut total = 0;
        let mut ends = Vec::new();
        for (b, g) in chain.iter().enumerate().skip(a) {
            total += g.end - g.start;
            if total > 19 {
                break;
            }
            ends.push((b, total));
        }
        for &(b, total) in ends.iter().rev() {
            if total < 13 {
                break;
            }
            let (s, e) = (chain[a].start, chain[b].end);
            let before = s.checked_sub(1);
            let after = (e < bytes.len()).then_some(e);
            if glued(before) || glued(after) {
                continue;
            }
            let digits: Vec<u8> = bytes[s..e].iter().copied().filter(u8::is_ascii_digit).collect();
            if luhn_valid(&digits) {
                found = Some((b, s, e));
                break;
            }
        }
        match found {
            Some((b, s, e)) => {
                spans.push((s, e));
                a = b + 1;
            }
            None => a += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn red(s: &str) -> (String, usize) {
        let r = Redactor::new(true, &[]).unwrap();
        let mut o = Outcome::default();
        let out = r.redact_str(s, &mut o);
        (out, o.count)
    }

    #[test]
    fn luhn() {
        assert!(luhn_valid(b"4111111111111111"));
        assert!(luhn_valid(b"79927398713"));
        assert!(!luhn_valid(b"4111111111111112"));
        assert!(!luhn_valid(b""));
        // not digits: false, never an arithmetic overflow (found by tests/properties.rs)
        assert!(!luhn_valid(&[4, 1, 1, 1]));
        assert!(!luhn_valid(b"41x1"));
    }

    #[test]
    fn cards_in_every_common_shape() {
        for card in [
            "4111111111111111",
            "4111 1111 1111 1111",
            "4111-1111-1111-1111",
            "5500 0000 0000 0004",
            "3782 822463 10005", // amex 15
            "6011000990139424",
            "4222222222222", // 13-digit visa
        ] {
            let (out, n) = red(&format!("card {card}, thanks"));
            assert_eq!(out, "card [REDACTED:payment_card], thanks", "{card}");
            assert_eq!(n, 1);
        }
    }

    #[test]
    fn card_next_to_other_numbers_is_still_found() {
        let (out, n) = red("pay 4111 1111 1111 1111 12 2029 now");
        assert_eq!(out, "pay [REDACTED:payment_card] 12 2029 now");
        assert_eq!(n, 1);
        let (out, _) = red("order 77 4111111111111111");
        assert_eq!(out, "order 77 [REDACTED:payment_card]");
        let (out, n) = red("two: 4111111111111111 and 5500-0000-0000-0004.");
        assert_eq!(out, "two: [REDACTED:payment_card] and [REDACTED:payment_card].");
        assert_eq!(n, 2);
    }

    #[test]
    fn numbers_that_are_not_cards_stay() {
        for s in [
            "order 4111111111111112 failed", // Luhn fails
            "call 555 0100",
            "id 123456789012",             // 12 digits
            "x 41111111111111111111111",   // 23 contiguous digits
            "ref ABC4111111111111111",      // glued to letters
            "Customer cust_8861 has a verbal NDA limiting PAN exposure to last-4 only.",
            "2026-05-09 12:00",
        ] {
            let (out, n) = red(s);
            assert_eq!((out.as_str(), n), (s, 0), "{s}");
        }
    }

    #[test]
    fn secrets() {
        let cases = [
            ("key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED:aws_access_key] here"),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "[REDACTED:github_token]"),
            ("token xoxb-123456789012-abcdefghij", "token [REDACTED:slack_token]"),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe_key]"),
            ("use sk-proj-abcdefghijklmnopqrstuvwxyz123456", "use [REDACTED:api_key]"),
            ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED:google_api_key]"),
            ("Authorization: Bearer abcdef0123456789abcdef.xyz", "Authorization: Bearer [REDACTED:bearer_token]"),
            ("postgres://app:hunter2@db:5432/x", "postgres://app:[REDACTED:password]@db:5432/x"),
            ("password=hunter2 ok", "password=[REDACTED:secret] ok"),
            ("api_key: \"abc def\"", "api_key: [REDACTED:secret]"),
            ("{\"client_secret\": \"zz\"}", "{\"client_secret\": [REDACTED:secret]}"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "[REDACTED:jwt]",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY----- after",
                "[REDACTED:private_key] after",
            ),
            ("-----BEGIN PRIVATE KEY-----\nMIIE truncated", "[REDACTED:private_key]"),
        ];
        for (input, expected) in cases {
            let (out, n) = red(input);
            assert_eq!(out, expected, "{input}");
            assert!(n >= 1);
        }
    }

    #[test]
    fn ordinary_prose_is_untouched() {
        for s in [
            "The customer prefers email over phone.",
            "Returns are accepted within 30 days of delivery.",
            "Password resets go through the help centre.",
            "skip-level meeting on 2026-05-09",
        ] {
            assert_eq!(red(s), (s.to_owned(), 0), "{s}");
        }
    }

    #[test]
    fn tenant_rules_and_disabled_defaults() {
        let rules = vec![RedactionRule {
            name: "ticket".into(),
            pattern: r"TCK-\d+".into(),
            replacement: "[REDACTED:ticket]".into(),
        }];
        let r = Redactor::new(false, &rules).unwrap();
        let mut o = Outcome::default();
        let out = r.redact_str("TCK-42 card 4111111111111111", &mut o);
        assert_eq!(out, "[REDACTED:ticket] card 4111111111111111");
        assert_eq!(o, Outcome { count: 1, rules: vec!["ticket".into()] });
    }

    #[test]
    fn invalid_tenant_pattern_is_an_error() {
        let rules = vec![RedactionRule { name: "bad".into(), pattern: "(".into(), replacement: "x".into() }];
        let e = Redactor::new(true, &rules).err().unwrap();
        assert_eq!(e.kind, crate::error::Kind::InvalidParameter);
        assert!(e.message.contains("\"bad\""));
        assert_eq!(e.detail.as_deref(), Some("The pattern does not compile: unclosed group."));
        // A pattern that would compile to an enormous automaton is refused, not built.
        let rules = vec![RedactionRule { name: "huge".into(), pattern: r"\w{1000}{1000}".into(), replacement: "x".into() }];
        assert!(Redactor::new(true, &rules).is_err());
    }

    #[test]
    fn json_strings_keys_and_card_numbers() {
        let r = Redactor::new(true, &[]).unwrap();
        let mut o = Outcome::default();
        let v = json!({"card": 4111111111111111u64, "note": "pan 4111-1111-1111-1111",
                       "password=abc": 1, "n": 42, "list": ["AKIAIOSFODNN7EXAMPLE", null, true]});
        let out = r.redact_json(&v, &mut o);
        assert_eq!(out["card"], json!(CARD_REPLACEMENT));
        assert_eq!(out["note"], json!("pan [REDACTED:payment_card]"));
        assert_eq!(out["password=[REDACTED:secret]"], json!(1));
        assert_eq!(out["n"], json!(42));
        assert_eq!(out["list"], json!(["[REDACTED:aws_access_key]", null, true]));
        assert_eq!(o.count, 4);
    }

    #[test]
    fn multibyte_text_around_matches() {
        let (out, n) = red("café 4111111111111111 ünïcode");
        assert_eq!(out, "café [REDACTED:payment_card] ünïcode");
        assert_eq!(n, 1);
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;
    use crate::error::Kind;
    use crate::policy::{Policy, REDACTION_RULES_MAX};
    use serde_json::json;

    fn rule(name: &str, pattern: &str, replacement: &str) -> RedactionRule {
        RedactionRule { name: name.into(), pattern: pattern.into(), replacement: replacement.into() }
    }

    #[test]
    fn a_pattern_over_the_compiled_size_limit_is_54000() {
        for p in [r"\w{1000}{1000}", r"\w{5000}", r"(?:\pL|\pN){2000}"] {
            let e = Redactor::new(true, &[rule("huge", p, "x")]).err().unwrap();
            assert_eq!(e.kind, Kind::LimitExceeded, "{p}");
            assert_eq!(e.message, "redaction rule \"huge\" compiles to too large a program");
            assert_eq!(
                e.detail.as_deref(),
                Some(format!("The compiled pattern would exceed {RULE_COMPILED_MAX_BYTES} bytes, the most one rule may use.").as_str())
            );
        }
        // Other invalid patterns stay 22023.
        for p in ["(", "[z-a]", r"\p{NoSuchClass}", "a{5,2}"] {
            let e = Redactor::new(true, &[rule("bad", p, "x")]).err().unwrap();
            assert_eq!(e.kind, Kind::InvalidParameter, "{p}");
        }
    }

    #[test]
    fn the_rule_cap_is_enforced_by_the_redactor_too() {
        let rules: Vec<_> = (0..=REDACTION_RULES_MAX).map(|i| rule(&format!("r{i}"), "x", "y")).collect();
        let e = Redactor::new(false, &rules).err().unwrap();
        assert_eq!(e.kind, Kind::LimitExceeded);
        assert!(Redactor::new(false, &rules[..REDACTION_RULES_MAX]).is_ok());
        let long = rule("long", &"a".repeat(1025), "y");
        assert_eq!(Redactor::new(false, &[long]).err().unwrap().kind, Kind::LimitExceeded);
    }

    /// A policy at every limit (32 rules, 64-byte names, 1024-byte patterns, 256-byte
    /// replacements) is accepted, and compiles and runs.
    #[test]
    fn a_policy_at_the_limits_compiles() {
        let pattern = |i: usize| {
            let mut alts = Vec::new();
            let mut j = 0;
            loop {
                let next = format!("acct{i}x{j}");
                let len = alts.iter().map(|a: &String| a.len() + 1).sum::<usize>() + next.len();
                if len + r"(?i)\b(?:)-[A-Za-z0-9_]{8,32}\b".len() > 1024 {
                    break;
                }
                alts.push(next);
                j += 1;
            }
            format!(r"(?i)\b(?:{})-[A-Za-z0-9_]{{8,32}}\b", alts.join("|"))
        };
        let rules: Vec<_> = (0..REDACTION_RULES_MAX)
            .map(|i| json!({"name": format!("{i:0>64}"), "pattern": pattern(i), "replacement": "r".repeat(256)}))
            .collect();
        assert!(rules.iter().all(|r| (1000..=1024).contains(&r["pattern"].as_str().unwrap().len())));
        let p = Policy::from_json(&json!({"redaction": {"rules": rules}})).unwrap();
        let r = Redactor::new(true, &p.redaction_rules).unwrap();
        let mut o = Outcome::default();
        let out = r.redact_str("see ACCT3X17-abcdefgh12 and acct31x0-ZZZZZZZZ", &mut o);
        assert_eq!(out, format!("see {} and {}", "r".repeat(256), "r".repeat(256)));
        assert_eq!(o.count, 2);
    }

    /// `Rule::apply` (which checks for interrupts) replaces exactly as `Regex::replace_all`.
    #[test]
    fn apply_matches_replace_all() {
        let cases = [
            (r"TCK-(\d+)", "[T:$1]"),
            (r"TCK-(?<n>\d+)", "${n}x$n"),
            (r"\d*", "<$0>"),
            (r"", "-"),
            (r"(?m)^", "> "),
            (r"a|b", "$$"),
            (r"é", "e"),
        ];
        let inputs = ["", "TCK-1 TCK-22 x TCK-", "abc\nbca\n", "café éé", "no match here"];
        for (p, rep) in cases {
            let r = compile("t", p, rep).unwrap();
            for input in inputs {
                let want = r.re.replace_all(input, rep);
                let got = r.apply(input);
                let n = r.re.find_iter(input).count();
                match got {
                    None => assert!(n == 0 && matches!(want, Cow::Borrowed(_)), "{p} {input:?}"),
                    Some((s, k)) => assert_eq!((s.as_str(), k), (want.as_ref(), n), "{p} {input:?}"),
                }
            }
        }
        let many = "TCK-1 ".repeat(10_000);
        let r = compile("t", r"TCK-(\d)", "[$1]").unwrap();
        assert_eq!(r.apply(&many).unwrap(), (r.re.replace_all(&many, "[$1]").into_owned(), 10_000));
    }
}
