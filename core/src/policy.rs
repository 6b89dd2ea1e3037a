//! The parts of a tenant policy the core needs, parsed once from the policy's JSON body.
//!
//! The default policy (`Policy::default_json`) is the single source of the defaults: the
//! extension inserts it as the `'*'` policy at install time.

use crate::assertion::Difference;
use crate::error::{Error, Result};
use serde_json::{json, Value};

pub const SOURCES: [&str; 3] = ["agent", "operator", "system"];
pub const WRITE_CLASSES: [&str; 4] = ["evidence_link", "preference", "decision_outcome", "correction"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub text_max_bytes: usize,
    pub value_max_bytes: usize,
    pub metadata_max_bytes: usize,
    pub evidence_refs_max: usize,
    pub evidence_ref_max_bytes: usize,
    pub identifier_max_bytes: usize,
    pub embedding_max_dimensions: usize,
}

/// The most redaction rules of its own a policy may hold ("redaction.rules"); each is a regex
/// compiled in every backend that captures for the tenant.
pub const REDACTION_RULES_MAX: usize = 32;
/// The longest pattern of a redaction rule, in bytes.
pub const REDACTION_PATTERN_MAX_BYTES: usize = 1024;
/// The longest name of a redaction rule, in bytes.
pub const REDACTION_NAME_MAX_BYTES: usize = 64;
/// The longest replacement of a redaction rule, in bytes.
pub const REDACTION_REPLACEMENT_MAX_BYTES: usize = 256;

fn too_many_rules(n: usize) -> Error {
    Error::limit("too many redaction rules")
        .detail(format!("redaction.rules has {n} rules. At most {REDACTION_RULES_MAX} are allowed."))
}

fn rule_too_long(rule: &str, field: &str, len: usize, max: usize) -> Error {
    Error::limit(format!("redaction rule {rule} has too long a {field}"))
        .detail(format!("The {field} has {len} bytes. At most {max} are allowed."))
}

/// The fixed bounds of a policy's own redaction rules: at most `REDACTION_RULES_MAX` rules, and
/// names, patterns and replacements within their byte limits. 54000 otherwise. Checked when a
/// policy is parsed (`Policy::from_json`) and again by `Redactor::new`.
pub fn check_redaction_rules(rules: &[RedactionRule]) -> Result<()> {
    if rules.len() > REDACTION_RULES_MAX {
        return Err(too_many_rules(rules.len()));
    }
    for (i, r) in rules.iter().enumerate() {
        check_rule_fields(i, &r.name, &r.pattern, &r.replacement)?;
    }
    Ok(())
}

fn check_rule_fields(i: usize, name: &str, pattern: &str, replacement: &str) -> Result<()> {
    if name.len() > REDACTION_NAME_MAX_BYTES {
        return Err(rule_too_long(&i.to_string(), "name", name.len(), REDACTION_NAME_MAX_BYTES));
    }
    let rule = format!("\"{name}\"");
    if pattern.len() > REDACTION_PATTERN_MAX_BYTES {
        return Err(rule_too_long(&rule, "pattern", pattern.len(), REDACTION_PATTERN_MAX_BYTES));
    }
    if replacement.len() > REDACTION_REPLACEMENT_MAX_BYTES {
        return Err(rule_too_long(&rule, "replacement", replacement.len(), REDACTION_REPLACEMENT_MAX_BYTES));
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactionRule {
    pub name: String,
    pub pattern: String,
    pub replacement: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Working,
    Episodic,
    Semantic,
    Durable,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::Working, Tier::Episodic, Tier::Semantic, Tier::Durable];
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Working => "working",
            Tier::Episodic => "episodic",
            Tier::Semantic => "semantic",
            Tier::Durable => "durable",
        }
    }
    pub fn parse(s: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// One tier rule: every condition given must hold; the first matching rule decides.
#[derive(Debug, Clone, PartialEq)]
pub struct TierRule {
    pub source: Option<String>,
    pub intent_prefix: Option<String>,
    pub classification: Option<String>,
    pub write_class: Option<String>,
    pub tier: Tier,
}

/// The default policy's `judge` section: the thresholds `examples/judge_calibrate.rs` chose for
/// core/data/judge.safetensors (SHA-256 in core/data/judge.sha256) on held-out public pairs
/// (MultiNLI dev matched and SNLI test, 19,639 pairs), behind all-MiniLM-L6-v2's same-topic
/// gate. core/data/JUDGE.md gives the figures there and on the evaluation corpus.
pub const JUDGE_THRESHOLDS: JudgeThresholds = JudgeThresholds {
    contradiction: 0.86,
    // negation, number, antonym, preposition, roles, value
    with_rules: [0.86, 0.86, 0.05, 0.86, 0.86, 0.86],
    merge: 0.66,
};

/// How review reads the learned judge's probabilities (review::decide_with). The judge is asked
/// about the neighbours past the embedder's same-topic gate (the policy's contradiction
/// threshold for the model).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgeThresholds {
    /// A free-text contradiction on the judge's word alone: its contradiction probability, in
    /// either direction, at least this.
    pub contradiction: f64,
    /// A free-text contradiction the assertion comparison also finds: the judge's probability at
    /// least this, by the comparison's finding (`Difference::ALL`'s order; at most
    /// `contradiction`, 0 when the finding alone is enough).
    pub with_rules: [f64; 6],
    /// A merge as a duplicate: besides the comparison's "nothing differs, nothing added",
    /// entailment at least this in both directions.
    pub merge: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub duplicate: f64,
    pub contradiction: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub classifications: Vec<String>,
    pub write_classes: Vec<String>,
    pub limits: Limits,
    /// Whether the built-in rules (payment cards, secrets) run before the tenant's own.
    pub default_redaction: bool,
    pub redaction_rules: Vec<RedactionRule>,
    /// Minimum confidence a candidate needs (review step 1); NULL confidence passes.
    pub min_confidence: f64,
    /// Trust of each source, and the minimum a candidate's source needs (review step 1).
    pub source_trust: Vec<(String, f64)>,
    pub min_source_trust: f64,
    /// Similarity thresholds per embedding model; "*" applies to models not listed.
    pub thresholds: Vec<(String, Thresholds)>,
    pub tier_rules: Vec<TierRule>,
    pub default_tier: Tier,
    pub priority_base: Vec<(String, f64)>,
    pub priority_evidence_step: f64,
    pub priority_evidence_max: f64,
    /// Seconds each tier lives after promotion; None never expires.
    pub ttl_seconds: [Option<i64>; 4],
    /// Which promotable candidates wait for a human approver.
    pub human_tiers: Vec<Tier>,
    pub human_classifications: Vec<String>,
    pub human_write_classes: Vec<String>,
    pub recall: RecallPolicy,
    /// Review step 2: candidates of these classifications and write classes need a live consent.
    pub consent_classifications: Vec<String>,
    pub consent_write_classes: Vec<String>,
    /// The purpose a consent must name when the capture names none (metadata.purpose).
    pub consent_default_purpose: String,
    /// Whether a candidate of a consent classification that names no write class needs one.
    pub consent_without_write_class: bool,
    /// The provenance gate: which evidence origins are untrusted, and what happens to a
    /// candidate whose evidence comes from them alone.
    pub provenance: Provenance,
    /// purge_expired: how long after expiry a memory's content is kept, per write class
    /// ("default" for the rest).
    pub retention_seconds: Vec<(String, i64)>,
    /// How review reads the learned judge, when it is loaded; None: the policy turns it off
    /// (review decides by its rules, as without the judge's file).
    pub judge: Option<JudgeThresholds>,
    /// What review does with a contradiction no rule resolves (resolution block): queue it for a
    /// person (the default) or reject it.
    pub on_block: OnBlock,
}

/// The policy's `contradiction.on_block`: what happens to a contradiction that no rule resolves
/// (it does not supersede and may not coexist). It is never promoted on review's word either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnBlock {
    /// It waits for a person in the review queue (reviewer human), who supersedes the memory it
    /// contradicts, keeps both, or rejects it.
    Queue,
    /// Review rejects it (status rejected, its reason naming the contradiction).
    Reject,
}

impl OnBlock {
    pub fn as_str(self) -> &'static str {
        match self {
            OnBlock::Queue => "queue",
            OnBlock::Reject => "reject",
        }
    }
}

/// What review does with a candidate that cites any evidence from an untrusted origin (content the
/// agent only read: a web page, a URL, a file, a document, what a content-fetching tool returned),
/// whatever else it cites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UntrustedEvidence {
    /// Queue it for a human, with reason untrusted_evidence.
    Human,
    /// Reject it, with reason untrusted_evidence.
    Reject,
    /// No gate: source trust alone decides.
    Allow,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// Evidence refs matching one of these (normalised, see `matches`) are untrusted origins.
    pub untrusted_prefixes: Vec<String>,
    /// A ref that is a URL (`scheme://…`, `http:`, `https:`, `www.`) is web content, untrusted.
    pub urls_untrusted: bool,
    pub untrusted_evidence: UntrustedEvidence,
}

/// Most prefixes in provenance.untrusted, and the longest, in bytes.
pub const PROVENANCE_PREFIXES_MAX: usize = 64;
pub const PROVENANCE_PREFIX_MAX_BYTES: usize = 64;

/// The origin a URL ref is reported under.
pub const URL_ORIGIN: &str = "url";

/// An evidence ref (or a provenance pattern) as it is classified: compatibility-normalised (NFKC:
/// full-width letters and colons become ASCII ones), without invisible characters (zero-width,
/// bidirectional controls, crate::args::is_invisible), without whitespace at either end or
/// before its first colon, and in lower case. "WEB :x", " web:x" and "web\u{200B}:x" are
/// "web:x".
pub fn normalise_ref(r: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let visible: String = r.nfkc().filter(|c| !crate::args::is_invisible(*c)).collect::<String>().to_lowercase();
    let trimmed = visible.trim();
    match trimmed.find(':') {
        Some(i) => {
            let scheme: String = trimmed[..i].chars().filter(|c| !c.is_whitespace()).collect();
            format!("{scheme}{}", &trimmed[i..])
        }
        None => trimmed.to_owned(),
    }
}

/// Whether a normalised ref is a URL: `scheme://…` (a letter, then letters, digits, `+`, `-`,
/// `.`), `http:` or `https:` without the slashes, or `www.`.
fn is_url(r: &str) -> bool {
    if r.starts_with("www.") || r.starts_with("http:") || r.starts_with("https:") {
        return true;
    }
    match r.find("://") {
        Some(i) if i > 0 => {
            let scheme = &r[..i];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        _ => false,
    }
}

/// Whether normalised ref `r` matches normalised pattern `p`: a pattern ending in `:` or `/`
/// matches every ref that starts with it ("web:" matches "web:https://…"); another matches the
/// ref that is the pattern, or starts with it followed by something other than a letter, digit
/// or underscore ("tool:fetch" matches "tool:fetch", "tool:fetch:https://…" and
/// "tool:fetch#3", not "tool:fetcher").
pub fn matches(r: &str, p: &str) -> bool {
    if p.ends_with(':') || p.ends_with('/') {
        return r.starts_with(p);
    }
    r.strip_prefix(p).is_some_and(|rest| rest.chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '_')))
}

impl Provenance {
    /// The untrusted origin of one ref (its pattern, or "url"), or None when it is trusted.
    pub fn origin(&self, r: &str) -> Option<String> {
        let r = normalise_ref(r);
        self.untrusted_prefixes
            .iter()
            .find(|p| matches(&r, p))
            .cloned()
            .or_else(|| (self.urls_untrusted && is_url(&r)).then(|| URL_ORIGIN.to_owned()))
    }

    /// The untrusted origin of every ref that has one (its pattern, or "url"), in order and once
    /// each, when at least one ref is untrusted.
    pub fn untrusted<S: AsRef<str>>(&self, refs: &[S]) -> Option<Vec<String>> {
        let mut origins: Vec<String> = Vec::new();
        for r in refs {
            if let Some(o) = self.origin(r.as_ref()) {
                if !origins.contains(&o) {
                    origins.push(o);
                }
            }
        }
        (!origins.is_empty()).then_some(origins)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecallPolicy {
    pub w_relevance: f64,
    pub w_recency: f64,
    pub w_importance: f64,
    pub half_life_days: f64,
    pub min_score: f64,
    /// Rows scoring below this (with a query), or with a stored confidence below it, are
    /// flagged low_confidence.
    pub low_confidence: f64,
}

/// The built-in embedders' thresholds, calibrated on the evaluation corpus (core/tests/data/corpus,
/// `cargo run --release -p memory_fabric_core --example calibrate`; the figures are in README.md,
/// Embedders). Duplicate: the lowest threshold whose false merges stay under 0.4 % of the
/// pairs that are not paraphrases, so under the 0.5 % target with a margin. Contradiction: the
/// same-topic gate with the best F1 of contradiction verdicts.
pub const BUILTIN_DUPLICATE: f64 = 0.30;
pub const BUILTIN_CONTRADICTION: f64 = 0.30;
pub const SEMANTIC_DUPLICATE: f64 = 0.53;
pub const SEMANTIC_CONTRADICTION: f64 = 0.53;

/// The calibrated thresholds of a built-in model, if `model` is one.
pub fn builtin_thresholds(model: &str) -> Option<Thresholds> {
    if model == crate::embed::MODEL {
        Some(Thresholds { duplicate: BUILTIN_DUPLICATE, contradiction: BUILTIN_CONTRADICTION })
    } else if model == crate::minilm::MODEL {
        Some(Thresholds { duplicate: SEMANTIC_DUPLICATE, contradiction: SEMANTIC_CONTRADICTION })
    } else {
        None
    }
}

impl Policy {
    pub fn thresholds_for(&self, model: &str) -> Thresholds {
        self.thresholds
            .iter()
            .find(|(m, _)| m == model)
            .map(|(_, t)| *t)
            // a policy written before a built-in model existed still gets its calibrated values
            .or_else(|| builtin_thresholds(model))
            .or_else(|| self.thresholds.iter().find(|(m, _)| m == "*").map(|(_, t)| *t))
            .unwrap_or(Thresholds { duplicate: 0.94, contradiction: 0.85 })
    }

    pub fn trust_of(&self, source: &str) -> f64 {
        self.source_trust.iter().find(|(s, _)| s == source).map(|(_, t)| *t).unwrap_or(0.0)
    }

    pub fn ttl_of(&self, tier: Tier) -> Option<i64> {
        self.ttl_seconds[tier as usize]
    }

    /// Whether a candidate of this classification and write class needs a live consent. One
    /// that names no write class needs one when consent.without_write_class is set.
    pub fn needs_consent(&self, classification: &str, write_class: Option<&str>) -> bool {
        self.consent_classifications.iter().any(|c| c == classification)
            && match write_class {
                Some(w) => self.consent_write_classes.iter().any(|c| c == w),
                None => self.consent_without_write_class,
            }
    }

    /// Seconds after expiry that a memory of this write class keeps its content.
    pub fn retention_of(&self, write_class: Option<&str>) -> i64 {
        let find = |k: &str| self.retention_seconds.iter().find(|(w, _)| w == k).map(|(_, s)| *s);
        write_class.and_then(find).or_else(|| find("default")).unwrap_or(2_592_000)
    }
}

impl Policy {
    pub fn default_json() -> Value {
        json!({
            "classifications": ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "PII"],
            "write_classes": WRITE_CLASSES,
            "limits": {
                "text_max_bytes": 16384,
                "value_max_bytes": 65536,
                "metadata_max_bytes": 65536,
                "evidence_refs_max": 64,
                "evidence_ref_max_bytes": 1024,
                "identifier_max_bytes": 256,
                "embedding_max_dimensions": 2000
            },
            "redaction": { "defaults": true, "rules": [] },
            "trust": {
                "min_confidence": 0.0,
                "source_trust": { "operator": 1.0, "system": 0.8, "agent": 0.6 },
                "min_source_trust": 0.0
            },
            "thresholds": {
                "*": { "duplicate": 0.94, "contradiction": 0.85 },
                crate::embed::MODEL: { "duplicate": BUILTIN_DUPLICATE, "contradiction": BUILTIN_CONTRADICTION },
                crate::minilm::MODEL: { "duplicate": SEMANTIC_DUPLICATE, "contradiction": SEMANTIC_CONTRADICTION }
            },
            "tiers": {
                "rules": [
                    { "source": "operator", "tier": "durable" },
                    { "intent_prefix": "support.", "tier": "episodic" },
                    { "classification": "PII", "tier": "working" }
                ],
                "default": "semantic"
            },
            "priority": {
                "base": { "operator": 0.9, "system": 0.7, "agent": 0.5 },
                "evidence_step": 0.05,
                "evidence_max": 0.3
            },
            "ttl_seconds": { "working": 3600, "episodic": 2592000, "semantic": 31536000, "durable": null },
            "human_review": { "tiers": ["durable"], "classifications": [], "write_classes": [] },
            "consent": {
                "classifications": ["PII"],
                "write_classes": ["preference", "decision_outcome", "correction"],
                "default_purpose": "support_personalization",
                "without_write_class": false
            },
            "provenance": {
                "untrusted": ["web:", "url:", "file:", "doc:", "email:",
                              "tool:web_search", "tool:web.search", "tool:search", "tool:fetch", "tool:browse",
                              "tool:browser", "tool:read_file", "tool:read_url", "tool:http", "tool:scrape",
                              "tool:crawl", "tool:download", "tool:retrieve"],
                "urls_untrusted": true,
                "untrusted_evidence": "human"
            },
            "retention_seconds": { "default": 2592000 },
            "contradiction": { "on_block": "queue" },
            "judge": {
                "enabled": true,
                "contradiction": JUDGE_THRESHOLDS.contradiction,
                "with_rules": Difference::ALL.iter().map(|d| (d.as_str().to_owned(), json!(JUDGE_THRESHOLDS.with_rules[d.index()]))).collect::<serde_json::Map<String, Value>>(),
                "merge": JUDGE_THRESHOLDS.merge
            },
            "recall": {
                "weights": { "relevance": 0.6, "recency": 0.25, "importance": 0.15 },
                "half_life_days": 30,
                "min_score": 0.35,
                "low_confidence": 0.5
            }
        })
    }

    /// Parses a policy body. Missing keys take the default; keys of the wrong type are errors,
    /// so a typo in a policy is reported rather than silently ignored.
    pub fn from_json(body: &Value) -> Result<Policy> {
        let defaults = Self::default_json();
        let obj = body
            .as_object()
            .ok_or_else(|| Error::invalid("policy body must be a JSON object"))?;
        let get = |key: &str| obj.get(key).unwrap_or(&defaults[key]);

        let classifications = string_list(get("classifications"), "classifications")?;
        let write_classes = string_list(get("write_classes"), "write_classes")?;
        for wc in &write_classes {
            if !WRITE_CLASSES.contains(&wc.as_str()) {
                return Err(Error::invalid(format!("policy names unknown write class \"{wc}\""))
                    .detail(format!("Known write classes are {}.", WRITE_CLASSES.join(", "))));
            }
        }

        let limits_v = get("limits");
        let limits_obj = limits_v
            .as_object()
            .ok_or_else(|| Error::invalid("policy key \"limits\" must be a JSON object"))?;
        let limit = |key: &str| -> Result<usize> {
            let v = limits_obj.get(key).unwrap_or(&defaults["limits"][key]);
            v.as_u64()
                .filter(|n| *n > 0 && *n <= 1 << 30)
                .map(|n| n as usize)
                .ok_or_else(|| {
                    Error::invalid(format!("policy limit \"{key}\" must be a positive integer"))
                })
        };
        let limits = Limits {
            text_max_bytes: limit("text_max_bytes")?,
            value_max_bytes: limit("value_max_bytes")?,
            metadata_max_bytes: limit("metadata_max_bytes")?,
            evidence_refs_max: limit("evidence_refs_max")?,
            evidence_ref_max_bytes: limit("evidence_ref_max_bytes")?,
            identifier_max_bytes: limit("identifier_max_bytes")?,
            embedding_max_dimensions: limit("embedding_max_dimensions")?,
        };

        let red = get("redaction");
        let red_obj = red
            .as_object()
            .ok_or_else(|| Error::invalid("policy key \"redaction\" must be a JSON object"))?;
        let default_redaction = match red_obj.get("defaults") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::invalid("policy key \"redaction.defaults\" must be a boolean")),
        };
        let mut redaction_rules = Vec::new();
        match red_obj.get("rules") {
            None => {}
            Some(Value::Array(rules)) => {
                if rules.len() > REDACTION_RULES_MAX {
                    return Err(too_many_rules(rules.len()));
                }
                for (i, r) in rules.iter().enumerate() {
                    let field = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
                    let name = field("name").filter(|s| !s.is_empty()).ok_or_else(|| {
                        Error::invalid(format!("redaction rule {i} needs a non-empty \"name\""))
                    })?;
                    if name.len() > REDACTION_NAME_MAX_BYTES {
                        return Err(rule_too_long(&i.to_string(), "name", name.len(), REDACTION_NAME_MAX_BYTES));
                    }
                    let pattern = field("pattern").filter(|s| !s.is_empty()).ok_or_else(|| {
                        Error::invalid(format!("redaction rule \"{name}\" needs a non-empty \"pattern\""))
                    })?;
                    let replacement =
                        field("replacement").unwrap_or_else(|| format!("[REDACTED:{name}]"));
                    check_rule_fields(i, &name, &pattern, &replacement)?;
                    redaction_rules.push(RedactionRule { name, pattern, replacement });
                }
            }
            Some(_) => return Err(Error::invalid("policy key \"redaction.rules\" must be a JSON array")),
        }

        let section = |key: &str| -> Result<&serde_json::Map<String, Value>> {
            get(key).as_object().ok_or_else(|| Error::invalid(format!("policy key \"{key}\" must be a JSON object")))
        };
        let num_in = |v: Option<&Value>, default: &Value, key: &str, lo: f64, hi: f64| -> Result<f64> {
            v.unwrap_or(default)
                .as_f64()
                .filter(|x| x.is_finite() && *x >= lo && *x <= hi)
                .ok_or_else(|| Error::invalid(format!("policy value \"{key}\" must be a number between {lo} and {hi}")))
        };
        let num_map = |v: &Value, key: &str, lo: f64, hi: f64| -> Result<Vec<(String, f64)>> {
            let obj = v.as_object().ok_or_else(|| Error::invalid(format!("policy key \"{key}\" must be a JSON object")))?;
            obj.iter()
                .map(|(k, x)| Ok((k.clone(), num_in(Some(x), &Value::Null, &format!("{key}.{k}"), lo, hi)?)))
                .collect()
        };

        let trust = section("trust")?;
        let dtrust = &defaults["trust"];
        let min_confidence = num_in(trust.get("min_confidence"), &dtrust["min_confidence"], "trust.min_confidence", 0.0, 1.0)?;
        let source_trust = num_map(trust.get("source_trust").unwrap_or(&dtrust["source_trust"]), "trust.source_trust", 0.0, 1.0)?;
        let min_source_trust =
            num_in(trust.get("min_source_trust"), &dtrust["min_source_trust"], "trust.min_source_trust", 0.0, 1.0)?;

        let mut thresholds = Vec::new();
        for (model, t) in section("thresholds")? {
            let o = t.as_object().ok_or_else(|| Error::invalid(format!("policy thresholds for \"{model}\" must be a JSON object")))?;
            let key = |k: &str| format!("thresholds.{model}.{k}");
            let duplicate = num_in(o.get("duplicate"), &Value::Null, &key("duplicate"), 0.0, 1.0)?;
            let contradiction = num_in(o.get("contradiction"), &Value::Null, &key("contradiction"), 0.0, 1.0)?;
            if contradiction > duplicate {
                return Err(Error::invalid(format!("policy thresholds for \"{model}\" are out of order"))
                    .detail("The contradiction threshold must not exceed the duplicate threshold."));
            }
            thresholds.push((model.clone(), Thresholds { duplicate, contradiction }));
        }
        if !thresholds.iter().any(|(m, _)| m == "*") {
            thresholds.push(("*".into(), Thresholds { duplicate: 0.94, contradiction: 0.85 }));
        }

        let tiers = section("tiers")?;
        let parse_tier = |v: &Value, key: &str| -> Result<Tier> {
            v.as_str().and_then(Tier::parse).ok_or_else(|| {
                Error::invalid(format!("policy value \"{key}\" must be one of working, episodic, semantic, durable"))
            })
        };
        let mut tier_rules = Vec::new();
        let rules_v = tiers.get("rules").unwrap_or(&defaults["tiers"]["rules"]);
        for (i, r) in rules_v.as_array().ok_or_else(|| Error::invalid("policy key \"tiers.rules\" must be a JSON array"))?.iter().enumerate() {
            let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
            tier_rules.push(TierRule {
                source: s("source"),
                intent_prefix: s("intent_prefix"),
                classification: s("classification"),
                write_class: s("write_class"),
                tier: parse_tier(r.get("tier").unwrap_or(&Value::Null), &format!("tiers.rules[{i}].tier"))?,
            });
        }
        let default_tier = parse_tier(tiers.get("default").unwrap_or(&defaults["tiers"]["default"]), "tiers.default")?;

        let prio = section("priority")?;
        let dprio = &defaults["priority"];
        let priority_base = num_map(prio.get("base").unwrap_or(&dprio["base"]), "priority.base", 0.0, 1.0)?;
        let priority_evidence_step = num_in(prio.get("evidence_step"), &dprio["evidence_step"], "priority.evidence_step", 0.0, 1.0)?;
        let priority_evidence_max = num_in(prio.get("evidence_max"), &dprio["evidence_max"], "priority.evidence_max", 0.0, 1.0)?;

        let ttl = section("ttl_seconds")?;
        let mut ttl_seconds = [None; 4];
        for t in Tier::ALL {
            let v = ttl.get(t.as_str()).unwrap_or(&defaults["ttl_seconds"][t.as_str()]);
            ttl_seconds[t as usize] = match v {
                Value::Null => None,
                v => Some(v.as_i64().filter(|n| *n > 0).ok_or_else(|| {
                    Error::invalid(format!("policy value \"ttl_seconds.{}\" must be a positive integer or null", t.as_str()))
                })?),
            };
        }

        let hr = section("human_review")?;
        let dhr = &defaults["human_review"];
        let human_tiers = string_list(hr.get("tiers").unwrap_or(&dhr["tiers"]), "human_review.tiers")?
            .iter()
            .map(|t| parse_tier(&Value::String(t.clone()), "human_review.tiers"))
            .collect::<Result<Vec<_>>>()?;
        let human_classifications = string_list_or_empty(hr.get("classifications").unwrap_or(&dhr["classifications"]), "human_review.classifications")?;
        let human_write_classes = string_list_or_empty(hr.get("write_classes").unwrap_or(&dhr["write_classes"]), "human_review.write_classes")?;

        let rc = section("recall")?;
        let drc = &defaults["recall"];
        let w = rc.get("weights").unwrap_or(&drc["weights"]);
        let recall = RecallPolicy {
            w_relevance: num_in(w.get("relevance"), &drc["weights"]["relevance"], "recall.weights.relevance", 0.0, 1.0)?,
            w_recency: num_in(w.get("recency"), &drc["weights"]["recency"], "recall.weights.recency", 0.0, 1.0)?,
            w_importance: num_in(w.get("importance"), &drc["weights"]["importance"], "recall.weights.importance", 0.0, 1.0)?,
            half_life_days: num_in(rc.get("half_life_days"), &drc["half_life_days"], "recall.half_life_days", 0.001, 36500.0)?,
            min_score: num_in(rc.get("min_score"), &drc["min_score"], "recall.min_score", -1.0, 1.0)?,
            low_confidence: num_in(rc.get("low_confidence"), &drc["low_confidence"], "recall.low_confidence", 0.0, 1.0)?,
        };

        let consent = section("consent")?;
        let dconsent = &defaults["consent"];
        let consent_classifications =
            string_list_or_empty(consent.get("classifications").unwrap_or(&dconsent["classifications"]), "consent.classifications")?;
        let consent_write_classes =
            string_list_or_empty(consent.get("write_classes").unwrap_or(&dconsent["write_classes"]), "consent.write_classes")?;
        let consent_default_purpose = consent
            .get("default_purpose")
            .unwrap_or(&dconsent["default_purpose"])
            .as_str()
            .filter(|s| !s.trim().is_empty() && s.len() <= crate::args::NAME_MAX)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "policy value \"consent.default_purpose\" must be a non-empty string of at most {} bytes",
                    crate::args::NAME_MAX
                ))
            })?
            .to_owned();

        let consent_without_write_class = consent
            .get("without_write_class")
            .unwrap_or(&dconsent["without_write_class"])
            .as_bool()
            .ok_or_else(|| Error::invalid("policy value \"consent.without_write_class\" must be a boolean"))?;

        let prov = section("provenance")?;
        let dprov = &defaults["provenance"];
        let untrusted_prefixes: Vec<String> =
            string_list_or_empty(prov.get("untrusted").unwrap_or(&dprov["untrusted"]), "provenance.untrusted")?
                .iter()
                .map(|p| normalise_ref(p))
                .collect();
        if untrusted_prefixes.len() > PROVENANCE_PREFIXES_MAX
            || untrusted_prefixes.iter().any(|p| p.len() > PROVENANCE_PREFIX_MAX_BYTES)
        {
            return Err(Error::limit("provenance.untrusted is too large").detail(format!(
                "At most {PROVENANCE_PREFIXES_MAX} prefixes of at most {PROVENANCE_PREFIX_MAX_BYTES} bytes each are allowed."
            )));
        }
        if untrusted_prefixes.iter().any(|p| p.is_empty()) {
            return Err(Error::invalid("policy key \"provenance.untrusted\" must not hold a pattern that is empty once normalised"));
        }
        let urls_untrusted = prov
            .get("urls_untrusted")
            .unwrap_or(&dprov["urls_untrusted"])
            .as_bool()
            .ok_or_else(|| Error::invalid("policy value \"provenance.urls_untrusted\" must be a boolean"))?;
        // "untrusted_only", its name before 0.16.0 (when the gate closed only on evidence that
        // was all untrusted), is read where the new name is absent
        let gate = prov.get("untrusted_evidence").or_else(|| prov.get("untrusted_only")).unwrap_or(&dprov["untrusted_evidence"]);
        let untrusted_evidence = match gate.as_str() {
            Some("human") => UntrustedEvidence::Human,
            Some("reject") => UntrustedEvidence::Reject,
            Some("allow") => UntrustedEvidence::Allow,
            _ => return Err(Error::invalid("policy value \"provenance.untrusted_evidence\" must be \"human\", \"reject\" or \"allow\"")),
        };
        let provenance = Provenance { untrusted_prefixes, urls_untrusted, untrusted_evidence };
        let mut retention_seconds = Vec::new();
        for (k, v) in section("retention_seconds")? {
            let secs = v.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                Error::invalid(format!("policy value \"retention_seconds.{k}\" must be a non-negative integer"))
            })?;
            if k != "default" && !WRITE_CLASSES.contains(&k.as_str()) {
                return Err(Error::invalid(format!("policy key \"retention_seconds.{k}\" names no write class")));
            }
            retention_seconds.push((k.clone(), secs));
        }

        let judge_s = section("judge")?;
        let djudge = &defaults["judge"];
        let enabled = judge_s
            .get("enabled")
            .unwrap_or(&djudge["enabled"])
            .as_bool()
            .ok_or_else(|| Error::invalid("policy value \"judge.enabled\" must be a boolean"))?;
        let contradiction = num_in(judge_s.get("contradiction"), &djudge["contradiction"], "judge.contradiction", 0.0, 1.0)?;
        let merge = num_in(judge_s.get("merge"), &djudge["merge"], "judge.merge", 0.0, 1.0)?;
        let wr = match judge_s.get("with_rules") {
            None => djudge["with_rules"].as_object().unwrap(),
            Some(v) => v.as_object().ok_or_else(|| Error::invalid("policy key \"judge.with_rules\" must be a JSON object"))?,
        };
        if let Some(k) = wr.keys().find(|k| !Difference::ALL.iter().any(|d| d.as_str() == k.as_str())) {
            return Err(Error::invalid(format!("policy key \"judge.with_rules.{k}\" names no finding")).detail(format!(
                "The assertion comparison's findings are {}.",
                Difference::ALL.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
        let mut with_rules = [contradiction; 6];
        for d in Difference::ALL {
            let key = format!("judge.with_rules.{}", d.as_str());
            let x = num_in(wr.get(d.as_str()), &djudge["with_rules"][d.as_str()], &key, 0.0, 1.0)?;
            // a finding lowers the judge's bar; it never raises it
            with_rules[d.index()] = x.min(contradiction);
        }
        let judge = enabled.then_some(JudgeThresholds { contradiction, with_rules, merge });

        let contra = section("contradiction")?;
        if let Some(k) = contra.keys().find(|k| k.as_str() != "on_block") {
            return Err(Error::invalid(format!("policy key \"contradiction.{k}\" is not known"))
                .detail("The contradiction section has one key, on_block."));
        }
        let on_block = match contra.get("on_block").unwrap_or(&defaults["contradiction"]["on_block"]).as_str() {
            Some("queue") => OnBlock::Queue,
            Some("reject") => OnBlock::Reject,
            _ => return Err(Error::invalid("policy value \"contradiction.on_block\" must be \"queue\" or \"reject\"")),
        };

        Ok(Policy {
            judge,
            on_block,
            classifications,
            write_classes,
            limits,
            default_redaction,
            redaction_rules,
            min_confidence,
            source_trust,
            min_source_trust,
            thresholds,
            tier_rules,
            default_tier,
            priority_base,
            priority_evidence_step,
            priority_evidence_max,
            ttl_seconds,
            human_tiers,
            human_classifications,
            human_write_classes,
            recall,
            consent_classifications,
            consent_write_classes,
            consent_default_purpose,
            consent_without_write_class,
            provenance,
            retention_seconds,
        })
    }
}

/// Applies a policy patch: objects merge key by key (recursively), anything else replaces.
/// Writes a policy body's keys under their names of today: provenance.untrusted_only (before
/// 0.16.0) becomes provenance.untrusted_evidence, unless that is set too. set_policy() applies it
/// to the body in force and to the patch before merging them, so that a patch naming either key
/// decides.
pub fn rename_legacy_keys(body: &mut Value) {
    if let Some(prov) = body.get_mut("provenance").and_then(Value::as_object_mut) {
        if let Some(old) = prov.remove("untrusted_only") {
            prov.entry("untrusted_evidence").or_insert(old);
        }
    }
}

pub fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                match b.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

fn string_list_or_empty(v: &Value, key: &str) -> Result<Vec<String>> {
    match v {
        Value::Array(a) if a.is_empty() => Ok(Vec::new()),
        _ => string_list(v, key),
    }
}

fn string_list(v: &Value, key: &str) -> Result<Vec<String>> {
    let bad = || Error::invalid(format!("policy key \"{key}\" must be an array of non-empty strings"));
    let arr = v.as_array().ok_or_else(bad)?;
    arr.iter()
        .map(|x| x.as_str().filter(|s| !s.is_empty()).map(str::to_owned).ok_or_else(bad))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy_parses() {
        let p = Policy::from_json(&Policy::default_json()).unwrap();
        assert_eq!(p.classifications, ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "PII"]);
        assert_eq!(p.write_classes.len(), 4);
        assert_eq!(p.limits.text_max_bytes, 16384);
        assert!(p.default_redaction);
        assert!(p.redaction_rules.is_empty());
        assert_eq!(p.default_tier, Tier::Semantic);
        assert_eq!(p.tier_rules.len(), 3);
        assert_eq!(p.ttl_of(Tier::Working), Some(3600));
        assert_eq!(p.ttl_of(Tier::Durable), None);
        assert_eq!(p.thresholds_for("text-embedding-3-small"), Thresholds { duplicate: 0.94, contradiction: 0.85 });
        assert_eq!(p.thresholds_for(crate::embed::MODEL).duplicate, BUILTIN_DUPLICATE);
        assert_eq!(p.trust_of("operator"), 1.0);
        assert_eq!(p.human_tiers, [Tier::Durable]);
        assert_eq!(p.recall.w_relevance, 0.6);
        assert!(p.needs_consent("PII", Some("preference")));
        assert!(!p.needs_consent("PII", Some("evidence_link")));
        assert!(!p.needs_consent("PII", None));
        let strict = Policy::from_json(&json!({"consent": {"without_write_class": true}})).unwrap();
        assert!(strict.needs_consent("PII", None));
        assert!(!strict.needs_consent("PII", Some("evidence_link")));
        assert_eq!(p.consent_default_purpose, "support_personalization");
        assert_eq!(p.provenance.untrusted_evidence, UntrustedEvidence::Human);
        assert_eq!(p.provenance.untrusted(&["web:https://example.org/a", "tool:search#3"]), Some(vec!["web:".to_owned(), "tool:search".to_owned()]));
        assert_eq!(p.provenance.untrusted::<&str>(&[]), None);
        assert!(!p.needs_consent("INTERNAL", Some("preference")));
        assert_eq!(p.retention_of(Some("preference")), 2_592_000);
    }

    #[test]
    fn provenance_is_classified_after_normalising() {
        let p = Policy::from_json(&Policy::default_json()).unwrap().provenance;
        let origins = |refs: &[&str]| p.untrusted(refs);
        // every spelling of web content, and one untrusted ref beside trusted ones
        for r in ["web:https://evil.example/page", "Web:https://evil.example/page", "WEB:x", " web:x", "web\u{200B}:x",
                  "web :x", "\u{FF57}\u{FF45}\u{FF42}\u{FF1A}x", "\u{202E}web:x", "web:x\u{2060}"] {
            assert_eq!(origins(&[r]), Some(vec!["web:".to_owned()]), "{r:?}");
            assert_eq!(origins(&[r, "kb:made-up-by-agent", "ticket:42"]), Some(vec!["web:".to_owned()]), "{r:?}");
        }
        // a bare URL is web content
        for r in ["https://evil.example/page", "http://x.example", "HTTPS://X", "ftp://files.example/a", "www.example.org/a",
                  "https:evil.example", " https://evil.example"] {
            assert_eq!(origins(&[r]), Some(vec![URL_ORIGIN.to_owned()]), "{r:?}");
        }
        // content-fetching tools are untrusted; a system-of-record lookup, a session, a ticket are not
        for r in ["tool:web_search:q=refund", "tool:fetch", "tool:fetch#3", "TOOL:Browse(https://x)", "tool:read_file:/tmp/a"] {
            assert!(origins(&[r]).is_some(), "{r:?}");
        }
        for r in ["tool:crm.lookup:cus_42", "session:abc", "ticket:42", "kb:refunds", "operator:override:x", "tool:fetcher",
                  "call:2026-05-09", "mailto:someone@example.org", "urn:isbn:0451450523"] {
            assert_eq!(origins(&[r]), None, "{r:?}");
        }
        assert_eq!(origins(&["web:a", "https://b", "tool:fetch:c", "web:d"]),
                   Some(vec!["web:".to_owned(), URL_ORIGIN.to_owned(), "tool:fetch".to_owned()]));
        // patterns are normalised as refs are; the old key is still read
        let q = Policy::from_json(&json!({"provenance": {"untrusted": [" CRM:"], "urls_untrusted": false,
                                                          "untrusted_only": "reject"}})).unwrap().provenance;
        assert_eq!(q.untrusted(&["crm:1"]), Some(vec!["crm:".to_owned()]));
        assert_eq!(q.untrusted(&["https://x"]), None);
        assert_eq!(q.untrusted_evidence, UntrustedEvidence::Reject);
        let r = Policy::from_json(&json!({"provenance": {"untrusted_only": "reject", "untrusted_evidence": "allow"}})).unwrap();
        assert_eq!(r.provenance.untrusted_evidence, UntrustedEvidence::Allow);
        assert!(Policy::from_json(&json!({"provenance": {"untrusted": ["\u{200B}"]}})).is_err());
        assert!(Policy::from_json(&json!({"provenance": {"urls_untrusted": "yes"}})).is_err());
    }

    #[test]
    fn the_judge_section() {
        let d = Policy::from_json(&Policy::default_json()).unwrap();
        assert_eq!(d.judge, Some(JUDGE_THRESHOLDS));
        assert_eq!(Policy::from_json(&json!({"judge": {"enabled": false}})).unwrap().judge, None);
        let p = Policy::from_json(&json!({"judge": {"contradiction": 0.5, "with_rules": {"number": 0.2, "negation": 0.9}}})).unwrap();
        let j = p.judge.unwrap();
        // a finding lowers the bar and never raises it; unnamed findings keep their default
        // (here above the new bar, so the bar)
        assert_eq!((j.contradiction, j.merge), (0.5, JUDGE_THRESHOLDS.merge));
        assert_eq!(j.with_rules[Difference::Number.index()], 0.2);
        assert_eq!(j.with_rules[Difference::Negation.index()], 0.5);
        assert_eq!(j.with_rules[Difference::Antonym.index()], 0.05);
        assert_eq!(j.with_rules[Difference::Roles.index()], 0.5);
        for bad in [json!({"judge": {"enabled": "yes"}}), json!({"judge": {"merge": 1.5}}), json!({"judge": {"with_rules": {"sarcasm": 0.1}}}),
                    json!({"judge": {"with_rules": [0.1]}}), json!({"judge": {"contradiction": "high"}}), json!({"judge": 1})] {
            assert!(Policy::from_json(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_contradiction_section() {
        assert_eq!(Policy::from_json(&Policy::default_json()).unwrap().on_block, OnBlock::Queue);
        // a policy written before 0.21.0 has no such section: a person decides
        assert_eq!(Policy::from_json(&json!({})).unwrap().on_block, OnBlock::Queue);
        assert_eq!(Policy::from_json(&json!({"contradiction": {}})).unwrap().on_block, OnBlock::Queue);
        assert_eq!(Policy::from_json(&json!({"contradiction": {"on_block": "reject"}})).unwrap().on_block, OnBlock::Reject);
        for bad in [json!({"contradiction": {"on_block": "block"}}), json!({"contradiction": {"on_block": true}}),
                    json!({"contradiction": {"on_blocked": "reject"}}), json!({"contradiction": "reject"})] {
            let e = Policy::from_json(&bad).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::InvalidParameter, "{bad}");
        }
    }

    #[test]
    fn legacy_keys_are_renamed() {
        let mut body = json!({"provenance": {"untrusted_only": "reject", "untrusted": ["web:"]}});
        rename_legacy_keys(&mut body);
        assert_eq!(body, json!({"provenance": {"untrusted_evidence": "reject", "untrusted": ["web:"]}}));
        let mut both = json!({"provenance": {"untrusted_only": "reject", "untrusted_evidence": "human"}});
        rename_legacy_keys(&mut both);
        assert_eq!(both, json!({"provenance": {"untrusted_evidence": "human"}}));
        let mut none = json!({"limits": {}});
        rename_legacy_keys(&mut none);
        assert_eq!(none, json!({"limits": {}}));
    }

    /// Deep-merges a patch into a policy body: objects merge key by key, anything else replaces.
    #[test]
    fn merge_patches() {
        let mut body = Policy::default_json();
        merge(&mut body, &json!({"limits": {"text_max_bytes": 100}, "classifications": ["PUBLIC"]}));
        let p = Policy::from_json(&body).unwrap();
        assert_eq!(p.limits.text_max_bytes, 100);
        assert_eq!(p.limits.value_max_bytes, 65536);
        assert_eq!(p.classifications, ["PUBLIC"]);
    }

    #[test]
    fn missing_keys_take_defaults_and_overrides_apply() {
        let p = Policy::from_json(&json!({"limits": {"text_max_bytes": 10},
            "redaction": {"rules": [{"name": "ticket", "pattern": "TCK-[0-9]+"}]}}))
        .unwrap();
        assert_eq!(p.limits.text_max_bytes, 10);
        assert_eq!(p.limits.value_max_bytes, 65536);
        assert_eq!(p.classifications.len(), 4);
        assert_eq!(p.redaction_rules[0].replacement, "[REDACTED:ticket]");
    }

    #[test]
    fn wrong_types_are_errors() {
        for bad in [
            json!([]),
            json!({"classifications": "PII"}),
            json!({"classifications": [""]}),
            json!({"write_classes": ["gossip"]}),
            json!({"limits": {"text_max_bytes": -1}}),
            json!({"limits": {"text_max_bytes": 0}}),
            json!({"limits": []}),
            json!({"redaction": {"defaults": "yes"}}),
            json!({"redaction": {"rules": [{"name": "x"}]}}),
            json!({"redaction": {"rules": {}}}),
            json!({"thresholds": {"m": {"duplicate": 0.5, "contradiction": 0.9}}}),
            json!({"thresholds": {"m": {"duplicate": 1.5, "contradiction": 0.9}}}),
            json!({"tiers": {"default": "forever"}}),
            json!({"tiers": {"rules": [{"source": "agent"}]}}),
            json!({"ttl_seconds": {"working": 0}}),
            json!({"ttl_seconds": {"working": "1h"}}),
            json!({"priority": {"base": {"agent": 2}}}),
            json!({"human_review": {"tiers": ["eternal"]}}),
            json!({"recall": {"weights": {"relevance": "high"}}}),
            json!({"consent": {"classifications": "PII"}}),
            json!({"retention_seconds": {"preference": -1}}),
            json!({"retention_seconds": {"gossip": 10}}),
        ] {
            let e = Policy::from_json(&bad).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::InvalidParameter, "{bad}");
        }
    }

    #[test]
    fn redaction_rules_are_capped() {
        use crate::error::Kind;
        let rules = |n: usize| -> Vec<Value> {
            (0..n).map(|i| json!({"name": format!("r{i}"), "pattern": format!("x{i}")})).collect()
        };
        let e = Policy::from_json(&json!({"redaction": {"rules": rules(300)}})).unwrap_err();
        assert_eq!(e.kind, Kind::LimitExceeded);
        assert_eq!(e.kind.sqlstate(), "54000");
        assert_eq!(e.message, "too many redaction rules");
        assert_eq!(e.detail.as_deref(), Some("redaction.rules has 300 rules. At most 32 are allowed."));
        assert_eq!(Policy::from_json(&json!({"redaction": {"rules": rules(33)}})).unwrap_err().kind, Kind::LimitExceeded);
        assert_eq!(Policy::from_json(&json!({"redaction": {"rules": rules(32)}})).unwrap().redaction_rules.len(), 32);

        let one = |name: &str, pattern: &str, replacement: Option<&str>| {
            let mut r = json!({"name": name, "pattern": pattern});
            if let Some(x) = replacement {
                r["replacement"] = json!(x);
            }
            Policy::from_json(&json!({"redaction": {"rules": [r]}}))
        };
        let e = one("p", &"a".repeat(1025), None).unwrap_err();
        assert_eq!((e.kind, e.message.as_str()), (Kind::LimitExceeded, "redaction rule \"p\" has too long a pattern"));
        assert_eq!(e.detail.as_deref(), Some("The pattern has 1025 bytes. At most 1024 are allowed."));
        assert!(one("p", &"a".repeat(1024), None).is_ok());
        let e = one(&"n".repeat(65), "x", None).unwrap_err();
        assert_eq!((e.kind, e.message.as_str()), (Kind::LimitExceeded, "redaction rule 0 has too long a name"));
        assert_eq!(e.detail.as_deref(), Some("The name has 65 bytes. At most 64 are allowed."));
        assert!(one(&"n".repeat(64), "x", None).is_ok());
        let e = one("r", "x", Some(&"r".repeat(257))).unwrap_err();
        assert_eq!((e.kind, e.message.as_str()), (Kind::LimitExceeded, "redaction rule \"r\" has too long a replacement"));
        assert_eq!(e.detail.as_deref(), Some("The replacement has 257 bytes. At most 256 are allowed."));
        assert!(one("r", "x", Some(&"r".repeat(256))).is_ok());
    }
}
