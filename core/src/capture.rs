//! Validation and preparation of one capture (memory_fabric.capture_memory), before anything is
//! written: every check, then redaction, then the content hash. Knows nothing of Postgres;
//! the extension supplies the policy and does the lookups that need the database.

use crate::error::{Error, Kind, Result};
use crate::policy::{Policy, SOURCES};
use crate::redact::{Outcome, Redactor};
use crate::text::content_hash;
use serde_json::Value;

/// The caller's arguments, as they arrived (JSON arguments as their text form).
#[derive(Debug, Default, Clone)]
pub struct CaptureInput<'a> {
    pub tenant_id: Option<&'a str>,
    pub text: Option<&'a str>,
    pub source: Option<&'a str>,
    pub classification: Option<&'a str>,
    pub user_id: Option<&'a str>,
    pub intent_id: Option<&'a str>,
    pub evidence_refs: Option<&'a str>,
    pub entity: Option<&'a str>,
    pub predicate: Option<&'a str>,
    pub value: Option<&'a str>,
    pub write_class: Option<&'a str>,
    pub confidence: Option<f64>,
    pub actor: Option<&'a str>,
    pub embedding_model: Option<&'a str>,
    pub has_embedding: bool,
    pub supersedes: Option<&'a str>,
    pub metadata: Option<&'a str>,
}

/// What will be written, every free-text part already redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedCapture {
    pub text: String,
    pub value: Option<String>,
    pub evidence_refs: String,
    pub metadata: String,
    pub content_hash: String,
    pub redaction: Outcome,
}

/// Identifiers: required or optional, never blank, bounded, no control characters.
pub fn check_identifier(name: &str, v: Option<&str>, required: bool, max: usize) -> Result<()> {
    let Some(v) = v else {
        return if required {
            Err(Error::invalid(format!("{name} must not be null")))
        } else {
            Ok(())
        };
    };
    if v.trim().is_empty() {
        return Err(Error::invalid(format!("{name} must not be empty")));
    }
    if v.len() > max {
        return Err(Error::limit(format!("{name} is too long"))
            .detail(format!("The value has {} bytes; the policy allows at most {max}.", v.len())));
    }
    if v.chars().any(char::is_control) {
        return Err(Error::invalid(format!("{name} must not contain control characters")));
    }
    crate::args::visible(name, v)
}

fn too_long(what: &str, len: usize, max: usize) -> Error {
    Error::limit(format!("{what} is too long"))
        .detail(format!("It has {len} bytes; the policy allows at most {max}."))
        .hint("Capture a shorter fact, or raise the limit in the tenant's policy.")
}

fn parse_json(what: &str, s: &str) -> Result<Value> {
    serde_json::from_str(s).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            Error::limit(format!("{what} is nested too deeply"))
                .detail("JSON nested more than 127 levels deep is not accepted.")
        } else {
            Error::invalid(format!("{what} is not valid JSON")).detail(format!("{e}."))
        }
    })
}

fn list(items: &[String]) -> String {
    items.join(", ")
}

pub fn prepare_capture(input: &CaptureInput<'_>, policy: &Policy, redactor: &Redactor) -> Result<PreparedCapture> {
    let lim = &policy.limits;
    let idmax = lim.identifier_max_bytes;

    check_identifier("tenant_id", input.tenant_id, true, idmax)?;
    crate::args::tenant_id(input.tenant_id)?;
    if input.tenant_id == Some("*") {
        return Err(Error::invalid("tenant_id \"*\" is reserved")
            .detail("\"*\" names the default policy, not a tenant."));
    }

    let text = input.text.ok_or_else(|| Error::invalid("text must not be null"))?;
    if text.trim().is_empty() {
        return Err(Error::invalid("text must not be empty"));
    }
    if text.len() > lim.text_max_bytes {
        return Err(too_long("text", text.len(), lim.text_max_bytes));
    }

    let source = input.source.ok_or_else(|| Error::invalid("source must not be null"))?;
    if !SOURCES.contains(&source) {
        return Err(Error::invalid(format!("invalid source \"{source}\""))
            .detail(format!("Source must be one of {}.", SOURCES.join(", "))));
    }

    let classification =
        input.classification.ok_or_else(|| Error::invalid("classification must not be null"))?;
    if !policy.classifications.iter().any(|c| c == classification) {
        return Err(Error::invalid(format!("classification \"{classification}\" is not allowed"))
            .detail(format!("The tenant's policy allows {}.", list(&policy.classifications)))
            .hint("Classifications are case-sensitive."));
    }

    for (name, v) in [
        ("user_id", input.user_id),
        ("intent_id", input.intent_id),
        ("entity", input.entity),
        ("predicate", input.predicate),
        ("actor", input.actor),
        ("embedding_model", input.embedding_model),
        ("supersedes", input.supersedes),
    ] {
        check_identifier(name, v, false, idmax)?;
    }

    if let Some(wc) = input.write_class {
        if !policy.write_classes.iter().any(|c| c == wc) {
            return Err(Error::invalid(format!("write class \"{wc}\" is not allowed"))
                .detail(format!("The tenant's policy allows {}.", list(&policy.write_classes))));
        }
    }

    if let Some(c) = input.confidence {
        if !c.is_finite() || !(0.0..=1.0).contains(&c) {
            let shown = if c.is_nan() {
                "NaN".to_owned()
            } else if c.is_infinite() {
                (if c > 0.0 { "Infinity" } else { "-Infinity" }).to_owned()
            } else {
                c.to_string()
            };
            return Err(Error::invalid(format!("confidence {shown} is out of range"))
                .detail("Confidence must be a number between 0 and 1."));
        }
    }

    if input.entity.is_some() != input.predicate.is_some() {
        return Err(Error::invalid("entity and predicate must be given together")
            .detail("A structured fact names both the entity and the predicate it states."));
    }
    if input.value.is_some() && input.predicate.is_none() {
        return Err(Error::invalid("value requires entity and predicate")
            .detail("A value is the object of a structured fact (entity, predicate, value)."));
    }

    if let Some(s) = input.supersedes {
        if !(s.starts_with("mc_") || s.starts_with("pm_")) {
            return Err(Error::invalid(format!("supersedes \"{s}\" is not a candidate or memory id"))
                .hint("Pass the id of a candidate (mc_…) or a promoted memory (pm_…)."));
        }
    }

    match (input.has_embedding, input.embedding_model) {
        (true, None) => {
            return Err(Error::invalid("embedding requires embedding_model")
                .detail("Vectors are only compared with vectors of the same model, so the model must be named."))
        }
        (false, Some(_)) => {
            return Err(Error::invalid("embedding_model given without embedding")
                .hint("Pass the vector too, or leave both out to use the configured embedder."))
        }
        (true, Some(m)) if m == crate::embed::MODEL || m == crate::minilm::MODEL => {
            return Err(Error::invalid(format!("embedding model name \"{m}\" is reserved"))
                .detail("That name belongs to a built-in embedder; vectors from elsewhere need their own model name."))
        }
        _ => {}
    }

    // JSON arguments: shape and size, then redaction.
    let mut redaction = Outcome::default();

    let refs_text = input.evidence_refs.unwrap_or("[]");
    let refs = parse_json("evidence_refs", refs_text)?;
    let Value::Array(items) = &refs else {
        return Err(Error::invalid("evidence_refs must be a JSON array of strings"));
    };
    if items.len() > lim.evidence_refs_max {
        return Err(Error::limit("too many evidence_refs")
            .detail(format!("{} references were given; the policy allows at most {}.", items.len(), lim.evidence_refs_max)));
    }
    let mut clean_refs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::String(s) = item else {
            return Err(Error::invalid("evidence_refs must be a JSON array of strings")
                .detail(format!("The element at index {i} is not a string.")));
        };
        if s.trim().is_empty() {
            return Err(Error::invalid("evidence_refs must not contain empty strings")
                .detail(format!("The element at index {i} is empty.")));
        }
        if s.len() > lim.evidence_ref_max_bytes {
            return Err(too_long(&format!("evidence_refs element at index {i}"), s.len(), lim.evidence_ref_max_bytes));
        }
        clean_refs.push(Value::String(redactor.redact_str(s, &mut redaction)));
    }

    let metadata_text = input.metadata.unwrap_or("{}");
    if metadata_text.len() > lim.metadata_max_bytes {
        return Err(too_long("metadata", metadata_text.len(), lim.metadata_max_bytes));
    }
    let metadata = parse_json("metadata", metadata_text)?;
    if !metadata.is_object() {
        return Err(Error::invalid("metadata must be a JSON object"));
    }

    let value = match input.value {
        None => None,
        Some(v) => {
            if v.len() > lim.value_max_bytes {
                return Err(too_long("value", v.len(), lim.value_max_bytes));
            }
            Some(parse_json("value", v)?)
        }
    };

    let text = redactor.redact_str(text, &mut redaction);
    let value = value.map(|v| redactor.redact_json(&v, &mut redaction).to_string());
    let metadata = redactor.redact_json(&metadata, &mut redaction).to_string();
    let hash = content_hash(&text);

    Ok(PreparedCapture {
        text,
        value,
        evidence_refs: Value::Array(clean_refs).to_string(),
        metadata,
        content_hash: hash,
        redaction,
    })
}

/// The sum of the squares of `v` as pgvector's cosine distance computes it (in single precision),
/// when it is zero, subnormal, infinite or not a number: the similarity of such a vector to any
/// other is then not a number, or 1 whatever the other (its entries underflow). None for a vector
/// whose norm is usable.
pub fn degenerate_norm(v: &[f32]) -> Option<f32> {
    let sq: f32 = v.iter().fold(0.0f32, |a, x| a + x * x);
    (!sq.is_normal()).then_some(sq)
}

/// Checks a vector: a non-empty, bounded number of finite entries that are not all zero, whose
/// norm is neither zero, subnormal nor infinite in single precision (degenerate_norm).
pub fn check_embedding(v: &[f32], expected_dims: Option<usize>, max_dims: usize) -> Result<()> {
    if v.is_empty() {
        return Err(Error::invalid("embedding must not be empty"));
    }
    if v.len() > max_dims {
        return Err(Error::limit("embedding has too many dimensions")
            .detail(format!("It has {} dimensions; the policy allows at most {max_dims}.", v.len())));
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(Error::invalid("embedding must not contain NaN or infinity")
            .detail(format!("Element {} is {}.", i + 1, v[i])));
    }
    if v.iter().all(|x| *x == 0.0) {
        return Err(Error::invalid("embedding must not be the zero vector")
            .detail("Cosine similarity is undefined for a vector of zeros."));
    }
    if let Some(sq) = degenerate_norm(v) {
        return Err(Error::invalid("embedding has no usable norm")
            .detail(format!("The sum of its squares is {sq:e} in single precision; cosine similarity needs a positive normal number."))
            .hint("Scale the vector, or normalise it to length 1 before passing it."));
    }
    if let Some(d) = expected_dims {
        if d != v.len() {
            return Err(Error::new(Kind::InvalidParameter, format!("embedding has {} dimensions, expected {d}", v.len()))
                .detail("Every vector of one embedding model has the same number of dimensions."));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;
    use crate::policy::Policy;

    fn policy() -> Policy {
        Policy::from_json(&Policy::default_json()).unwrap()
    }

    fn good<'a>() -> CaptureInput<'a> {
        CaptureInput {
            tenant_id: Some("tenant_acme_prod"),
            text: Some("Customer cust_8861 has a verbal NDA limiting PAN exposure to last-4 only."),
            source: Some("operator"),
            classification: Some("PII"),
            user_id: Some("cust_8861"),
            intent_id: Some("support.refund.execute"),
            evidence_refs: Some(r#"["operator:override:fb_2026_05_09_x9"]"#),
            ..Default::default()
        }
    }

    fn run(i: &CaptureInput<'_>) -> Result<PreparedCapture> {
        let p = policy();
        let r = Redactor::new(true, &[]).unwrap();
        prepare_capture(i, &p, &r)
    }

    fn kind_of(i: CaptureInput<'_>) -> Kind {
        run(&i).unwrap_err().kind
    }

    #[test]
    fn the_seed_example_passes_untouched() {
        let p = run(&good()).unwrap();
        assert_eq!(p.text, good().text.unwrap());
        assert_eq!(p.redaction.count, 0);
        assert_eq!(p.evidence_refs, r#"["operator:override:fb_2026_05_09_x9"]"#);
        assert_eq!(p.metadata, "{}");
        assert_eq!(p.value, None);
        assert_eq!(p.content_hash.len(), 64);
    }

    #[test]
    fn card_numbers_are_redacted_before_write() {
        let p = run(&CaptureInput { text: Some("Card on file: 4111 1111 1111 1111."), ..good() }).unwrap();
        assert_eq!(p.text, "Card on file: [REDACTED:payment_card].");
        assert_eq!(p.redaction.count, 1);
        assert_eq!(p.content_hash, content_hash("card on file: [REDACTED:payment_card]."));
        let p = run(&CaptureInput {
            entity: Some("customer:c1"),
            predicate: Some("card"),
            value: Some(r#"{"pan": "4111111111111111", "n": 4111111111111111}"#),
            metadata: Some(r#"{"raw": "password=hunter2"}"#),
            evidence_refs: Some(r#"["https://u:pw1234@x.example/a"]"#),
            ..good()
        })
        .unwrap();
        assert!(!p.value.as_ref().unwrap().contains("4111"));
        assert!(!p.metadata.contains("hunter2"));
        assert!(!p.evidence_refs.contains("pw1234"));
        assert_eq!(p.redaction.count, 4);
    }

    #[test]
    fn required_arguments() {
        assert_eq!(kind_of(CaptureInput { tenant_id: None, ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { tenant_id: Some("  "), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { tenant_id: Some("*"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { text: None, ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { text: Some(" \n\t"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { source: None, ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { classification: None, ..good() }), Kind::InvalidParameter);
    }

    #[test]
    fn enumerations() {
        assert_eq!(kind_of(CaptureInput { source: Some("user"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { source: Some("Agent"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { classification: Some("pii"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { classification: Some("SECRET"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { write_class: Some("gossip"), ..good() }), Kind::InvalidParameter);
        assert!(run(&CaptureInput { write_class: Some("preference"), ..good() }).is_ok());
        let mut p = policy();
        p.write_classes.retain(|w| w != "preference");
        let r = Redactor::new(true, &[]).unwrap();
        let e = prepare_capture(&CaptureInput { write_class: Some("preference"), ..good() }, &p, &r).unwrap_err();
        assert_eq!(e.kind, Kind::InvalidParameter);
        assert!(e.detail.unwrap().contains("evidence_link"));
    }

    #[test]
    fn confidence_range() {
        for c in [f64::NAN, f64::INFINITY, -0.01, 1.01] {
            assert_eq!(kind_of(CaptureInput { confidence: Some(c), ..good() }), Kind::InvalidParameter);
        }
        for c in [0.0, 0.5, 1.0] {
            assert!(run(&CaptureInput { confidence: Some(c), ..good() }).is_ok());
        }
    }

    #[test]
    fn evidence_refs_shape() {
        for bad in [r#"{}"#, r#""x""#, r#"[1]"#, r#"[""]"#, r#"["  "]"#, r#"[null]"#, r#"[["a"]]"#] {
            assert_eq!(kind_of(CaptureInput { evidence_refs: Some(bad), ..good() }), Kind::InvalidParameter, "{bad}");
        }
        assert!(run(&CaptureInput { evidence_refs: None, ..good() }).is_ok());
        assert!(run(&CaptureInput { evidence_refs: Some("[]"), ..good() }).is_ok());
        let many = format!("[{}]", vec!["\"r\""; 65].join(","));
        assert_eq!(kind_of(CaptureInput { evidence_refs: Some(&many), ..good() }), Kind::LimitExceeded);
        let long = format!("[\"{}\"]", "r".repeat(1025));
        assert_eq!(kind_of(CaptureInput { evidence_refs: Some(&long), ..good() }), Kind::LimitExceeded);
    }

    #[test]
    fn structured_fact_consistency() {
        assert_eq!(kind_of(CaptureInput { entity: Some("customer:c1"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { predicate: Some("prefers"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { value: Some("\"email\""), ..good() }), Kind::InvalidParameter);
        let ok = run(&CaptureInput {
            entity: Some("customer:c1"),
            predicate: Some("prefers_channel"),
            value: Some("\"email\""),
            ..good()
        })
        .unwrap();
        assert_eq!(ok.value.as_deref(), Some("\"email\""));
    }

    #[test]
    fn sizes() {
        let big = "x".repeat(16385);
        assert_eq!(kind_of(CaptureInput { text: Some(&big), ..good() }), Kind::LimitExceeded);
        let ok = "x".repeat(16384);
        assert!(run(&CaptureInput { text: Some(&ok), ..good() }).is_ok());
        let long_id = "t".repeat(257);
        assert_eq!(kind_of(CaptureInput { tenant_id: Some(&long_id), ..good() }), Kind::LimitExceeded);
        let bigmeta = format!("{{\"k\": \"{}\"}}", "m".repeat(70000));
        assert_eq!(kind_of(CaptureInput { metadata: Some(&bigmeta), ..good() }), Kind::LimitExceeded);
        let bigval = format!("\"{}\"", "v".repeat(70000));
        let i = CaptureInput { entity: Some("e"), predicate: Some("p"), value: Some(&bigval), ..good() };
        assert_eq!(kind_of(i), Kind::LimitExceeded);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let i = CaptureInput { entity: Some("e"), predicate: Some("p"), value: Some(&deep), ..good() };
        assert_eq!(kind_of(i), Kind::LimitExceeded);
    }

    #[test]
    fn identifiers_reject_control_characters() {
        assert_eq!(kind_of(CaptureInput { user_id: Some("a\u{1}b"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { actor: Some(""), ..good() }), Kind::InvalidParameter);
        assert!(run(&CaptureInput { user_id: Some("o'brien \"$$\" \\x"), ..good() }).is_ok());
    }

    #[test]
    fn metadata_and_supersedes() {
        assert_eq!(kind_of(CaptureInput { metadata: Some("[]"), ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { supersedes: Some("x_1"), ..good() }), Kind::InvalidParameter);
        assert!(run(&CaptureInput { supersedes: Some("pm_1"), ..good() }).is_ok());
    }

    #[test]
    fn embedding_arguments() {
        assert_eq!(kind_of(CaptureInput { has_embedding: true, ..good() }), Kind::InvalidParameter);
        assert_eq!(kind_of(CaptureInput { embedding_model: Some("m"), ..good() }), Kind::InvalidParameter);
        let reserved = CaptureInput { has_embedding: true, embedding_model: Some(crate::embed::MODEL), ..good() };
        assert_eq!(kind_of(reserved), Kind::InvalidParameter);
        assert!(run(&CaptureInput { has_embedding: true, embedding_model: Some("m"), ..good() }).is_ok());
        assert!(check_embedding(&[0.1, 0.2], Some(2), 2000).is_ok());
        assert_eq!(check_embedding(&[0.1, 0.2], Some(3), 2000).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(check_embedding(&[], None, 2000).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(check_embedding(&[0.0, 0.0], None, 2000).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(check_embedding(&[f32::NAN], None, 2000).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(check_embedding(&[f32::INFINITY], None, 2000).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(check_embedding(&[1.0; 3], None, 2).unwrap_err().kind, Kind::LimitExceeded);
    }

    #[test]
    fn degenerate_norms_are_refused() {
        // the squares underflow to zero, or to a subnormal; or overflow
        for v in [[1e-38f32; 3], [1e-20; 3], [1e-45, 0.0, 0.0], [1e20, 1.0, 1.0], [f32::MAX, 0.0, 0.0]] {
            let e = check_embedding(&v, None, 2000).unwrap_err();
            assert_eq!(e.kind, Kind::InvalidParameter, "{v:?}");
            assert_eq!(e.message, "embedding has no usable norm", "{v:?}");
            assert!(degenerate_norm(&v).is_some(), "{v:?}");
        }
        // the smallest and largest usable ones: the sum of squares is a normal number
        for v in [[1e-19f32; 3], [1e19, 0.0, 0.0], [1.0, 0.0, 0.0], [-3.0, 4.0, 0.0]] {
            assert!(check_embedding(&v, None, 2000).is_ok(), "{v:?}");
            assert_eq!(degenerate_norm(&v), None, "{v:?}");
        }
    }

    #[test]
    fn big_numbers_survive_the_round_trip() {
        let i = CaptureInput {
            entity: Some("e"),
            predicate: Some("p"),
            value: Some("{\"n\": 123456789012345678901234567890, \"f\": 0.1}"),
            ..good()
        };
        let v = run(&i).unwrap().value.unwrap();
        assert!(v.contains("123456789012345678901234567890"), "{v}");
        assert!(v.contains("0.1"), "{v}");
    }
}
