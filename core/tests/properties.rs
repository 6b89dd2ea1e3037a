//! Property tests (a fuzzer over the pure parts): arbitrary and hostile input to redaction, the
//! embedder, capture's parsers and validation, and policy parsing. None may panic; each must
//! give a result or an error, and the invariants below must hold for every input tried.
//! `PROPTEST_CASES=100000 cargo test -p memory_fabric_core --test properties` runs it longer.

use memory_fabric_core::capture::{check_embedding, prepare_capture, CaptureInput};
use memory_fabric_core::embed::{embed, DIMENSIONS};
use memory_fabric_core::policy::{merge, Policy};
use memory_fabric_core::redact::{luhn_valid, Outcome, Redactor};
use proptest::prelude::*;
use serde_json::Value;

fn policy() -> Policy {
    Policy::from_json(&Policy::default_json()).unwrap()
}

fn redactor() -> Redactor {
    Redactor::new(true, &[]).unwrap()
}

/// Arbitrary JSON values, nested a few levels, with hostile strings and numbers.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::from(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| Value::from(f)),
        any::<String>().prop_map(Value::String),
        "[0-9 -]{12,24}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A Luhn-valid card number of 13 to 19 digits.
fn card() -> impl Strategy<Value = String> {
    prop::collection::vec(b'0'..=b'9', 12..19).prop_map(|mut d| {
        for check in b'0'..=b'9' {
            d.push(check);
            if luhn_valid(&d) {
                break;
            }
            d.pop();
        }
        d.iter().map(|x| char::from(*x)).collect()
    })
}

/// A JSON text or something that is not quite one.
fn json_text() -> impl Strategy<Value = String> {
    prop_oneof![json().prop_map(|v| v.to_string()), any::<String>(), "[\\[\\]{}\":,0-9a-z ]{0,64}"]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn redaction_never_panics_and_is_idempotent(s in any::<String>()) {
        let r = redactor();
        let once = r.redact_str(&s, &mut Outcome::default());
        let twice = r.redact_str(&once, &mut Outcome::default());
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn a_card_number_never_survives_redaction(
        before in "[a-zA-Z ,.:;()]{0,40}", after in "[a-zA-Z ,.:;()]{0,40}", number in card(), sep in "[ -]?",
    ) {
        // grouped in fours with the separator, as people write them
        let grouped: String = number.chars().collect::<Vec<_>>().chunks(4)
            .map(|c| c.iter().collect::<String>()).collect::<Vec<_>>().join(&sep);
        let text = format!("{before} {grouped} {after}");
        let mut outcome = Outcome::default();
        let out = Redactor::redact_str(&redactor(), &text, &mut outcome);
        let digits: String = out.chars().filter(|c| c.is_ascii_digit()).collect();
        prop_assert!(!digits.contains(&number), "{text:?} became {out:?}");
        prop_assert!(outcome.count >= 1);
    }

    #[test]
    fn redaction_of_json_keeps_its_shape(v in json()) {
        let out = redactor().redact_json(&v, &mut Outcome::default());
        fn shape(v: &Value) -> String {
            match v {
                Value::Array(a) => format!("[{}]", a.iter().map(shape).collect::<Vec<_>>().join(",")),
                Value::Object(o) => format!("{{{}}}", o.values().map(shape).collect::<Vec<_>>().join(",")),
                _ => "x".into(),
            }
        }
        prop_assert_eq!(shape(&v), shape(&out));
    }

    #[test]
    fn the_embedder_gives_a_unit_or_zero_vector(s in any::<String>()) {
        let v = embed(&s);
        prop_assert_eq!(v.len(), DIMENSIONS);
        prop_assert!(v.iter().all(|x| x.is_finite()));
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        prop_assert!(norm == 0.0 || (norm - 1.0).abs() < 1e-3, "norm {norm}");
        prop_assert_eq!(v, embed(&s));
    }

    #[test]
    fn capture_parsing_never_panics(
        tenant in prop::option::of(any::<String>()), text in prop::option::of(any::<String>()),
        source in prop::option::of(prop_oneof![Just("agent".to_string()), any::<String>()]),
        classification in prop::option::of(prop_oneof![Just("INTERNAL".to_string()), any::<String>()]),
        user in prop::option::of(any::<String>()), evidence in prop::option::of(json_text()),
        entity in prop::option::of(any::<String>()), predicate in prop::option::of(any::<String>()),
        value in prop::option::of(json_text()), metadata in prop::option::of(json_text()),
        confidence in prop::option::of(any::<f64>()),
    ) {
        let input = CaptureInput {
            tenant_id: tenant.as_deref(), text: text.as_deref(), source: source.as_deref(),
            classification: classification.as_deref(), user_id: user.as_deref(), evidence_refs: evidence.as_deref(),
            entity: entity.as_deref(), predicate: predicate.as_deref(), value: value.as_deref(),
            metadata: metadata.as_deref(), confidence, ..Default::default()
        };
        if let Ok(p) = prepare_capture(&input, &policy(), &redactor()) {
            prop_assert_eq!(p.content_hash.len(), 64);
            prop_assert!(p.content_hash.chars().all(|c| c.is_ascii_hexdigit()));
            prop_assert!(serde_json::from_str::<Value>(&p.evidence_refs).is_ok());
            prop_assert!(serde_json::from_str::<Value>(&p.metadata).is_ok());
        }
    }

    #[test]
    fn embeddings_are_checked_not_trusted(v in prop::collection::vec(any::<f32>(), 0..600)) {
        let ok = check_embedding(&v, None, 512).is_ok();
        // finite entries whose squares sum to a normal number in single precision, as pgvector
        // sums them: neither zero, subnormal nor infinite
        let squares: f32 = v.iter().fold(0.0f32, |a, x| a + x * x);
        let valid = !v.is_empty() && v.len() <= 512 && v.iter().all(|x| x.is_finite()) && squares.is_normal();
        prop_assert_eq!(ok, valid);
    }

    #[test]
    fn policy_patches_never_panic(patch in json()) {
        let mut body = Policy::default_json();
        merge(&mut body, &patch);
        let _ = Policy::from_json(&body);
    }
}

/// Nesting far beyond any limit is an error, not a stack overflow.
#[test]
fn deep_json_is_refused() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let input = CaptureInput {
        tenant_id: Some("t"), text: Some("x"), source: Some("agent"), classification: Some("INTERNAL"),
        evidence_refs: Some(&deep), ..Default::default()
    };
    assert!(prepare_capture(&input, &policy(), &redactor()).is_err());
    let input = CaptureInput { value: Some(&deep), predicate: Some("p"), entity: Some("e"), evidence_refs: None, ..input };
    assert!(prepare_capture(&input, &policy(), &redactor()).is_err());
}

/// Huge, incompressible text is refused by the size limit before any work on it.
#[test]
fn huge_text_is_refused() {
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let text: String = (0..4_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'!' + (x % 90) as u8)
        })
        .collect();
    let input = CaptureInput {
        tenant_id: Some("t"), text: Some(&text), source: Some("agent"), classification: Some("INTERNAL"), ..Default::default()
    };
    assert!(prepare_capture(&input, &policy(), &redactor()).is_err());
}
