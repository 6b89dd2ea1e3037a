//! The audit trail's hash chain (sql/schema.sql, audit_chain): what a link's digest is made of.
//!
//! Every event and decision is a link of its tenant's chain. A link's digest is the SHA-256 of the
//! link before it, the link's place, the row's fields that never change (its ids, kind or action,
//! who and when, and what erasure leaves of its free text) and a salted commitment to its free text
//! (an event's payload, a decision's notes). Each part is length-prefixed (keys::digest), so no
//! two different lists of fields give the same bytes. The salt is kept in the row and erasure
//! removes it with the text: the commitment then stays in the chain, and nobody can test a guess at
//! what was erased against it.

use crate::keys::digest;
use serde_json::{Map, Value};

/// The keys of an event's payload that erasure keeps as they are (ids and names the pipeline
/// writes); other strings, arrays and objects become "[erased]", numbers, booleans and nulls stay.
pub const KEPT_KEYS: &[&str] = &[
    "candidate_id", "review_id", "decision_id", "consent_id", "memory_id", "supersedes", "superseded_by",
    "coexists_with", "contradicts", "tier", "resolution", "promoted_by", "event", "version", "model",
];

/// An event payload as erasure leaves it: the free text of every other key replaced by
/// "[erased]", and `"erased": true`. Applied to its own result it changes nothing.
pub fn erased_payload(payload: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in payload {
        let keep = KEPT_KEYS.contains(&k.as_str()) || matches!(v, Value::Number(_) | Value::Bool(_) | Value::Null);
        out.insert(k.clone(), if keep { v.clone() } else { Value::String("[erased]".into()) });
    }
    out.insert("erased".into(), Value::Bool(true));
    out
}

/// A JSON value written one way only: object keys in byte order, no whitespace, numbers as
/// stored. What the digests read of a JSON value.
pub fn canonical(v: &Value) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn hex(d: [u8; 32]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The commitment to a row's free text under its salt (hex SHA-256); None without a salt (erased).
pub fn content_digest(salt: Option<&str>, free_text: Option<&str>) -> Option<String> {
    salt.map(|s| hex(digest("memory_fabric.audit_content", &[Some(s), free_text])))
}

/// An event's commitment: its payload, canonical.
pub fn event_content(salt: Option<&str>, payload: &Value) -> Option<String> {
    content_digest(salt, Some(&canonical(payload)))
}

/// A link's digest: the previous link's digest, the place, the fields, the commitment.
pub fn link_digest(prev: &str, seq: i64, fields: &[Option<&str>], content: Option<&str>) -> String {
    let seq = seq.to_string();
    let mut parts: Vec<Option<&str>> = Vec::with_capacity(fields.len() + 3);
    parts.push(Some(prev));
    parts.push(Some(&seq));
    parts.extend_from_slice(fields);
    parts.push(content);
    hex(digest("memory_fabric.audit_link", &parts))
}

/// An event's fields that never change, erasure included.
pub struct Event<'a> {
    pub id: &'a str,
    pub tenant_id: &'a str,
    pub kind: &'a str,
    pub subject_id: Option<&'a str>,
    pub actor: Option<&'a str>,
    pub actor_role: Option<&'a str>,
    /// Microseconds since PostgreSQL's epoch (2000-01-01 UTC): the stored value, whatever the
    /// session's time zone.
    pub created_at: i64,
    pub payload: &'a Map<String, Value>,
}

/// An event's link digest.
pub fn event_link(prev: &str, seq: i64, e: &Event<'_>, content: Option<&str>) -> String {
    let at = e.created_at.to_string();
    let erased = canonical(&Value::Object(erased_payload(e.payload)));
    link_digest(
        prev,
        seq,
        &[Some("events"), Some(e.id), Some(e.tenant_id), Some(e.kind), e.subject_id, e.actor, e.actor_role, Some(&at), Some(&erased)],
        content,
    )
}

/// A decision's fields that never change, erasure included.
pub struct Decision<'a> {
    pub id: &'a str,
    pub tenant_id: &'a str,
    pub candidate_id: &'a str,
    pub review_id: Option<&'a str>,
    pub action: &'a str,
    pub decided_by: &'a str,
    pub new_candidate_id: Option<&'a str>,
    /// Microseconds since PostgreSQL's epoch.
    pub decided_at: i64,
    pub decided_by_role: Option<&'a str>,
    /// Whether it has notes (erasure replaces them, it does not remove them).
    pub has_notes: bool,
}

/// A decision's link digest.
pub fn decision_link(prev: &str, seq: i64, d: &Decision<'_>, content: Option<&str>) -> String {
    let at = d.decided_at.to_string();
    link_digest(
        prev,
        seq,
        &[
            Some("decisions"), Some(d.id), Some(d.tenant_id), Some(d.candidate_id), d.review_id, Some(d.action),
            Some(d.decided_by), d.new_candidate_id, Some(&at), d.decided_by_role, Some(if d.has_notes { "t" } else { "f" }),
        ],
        content,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn erasure_keeps_ids_and_numbers_and_is_idempotent() {
        let p = obj(json!({"memory_id": "pm_1", "reason": "customer asked", "count": 3, "ok": true, "none": null,
                           "nested": {"a": 1}, "list": [1]}));
        let e = erased_payload(&p);
        assert_eq!(Value::Object(e.clone()), json!({"memory_id": "pm_1", "reason": "[erased]", "count": 3, "ok": true,
                                                   "none": null, "nested": "[erased]", "list": "[erased]", "erased": true}));
        assert_eq!(erased_payload(&e), e);
        assert_eq!(Value::Object(erased_payload(&Map::new())), json!({"erased": true}));
    }

    #[test]
    fn canonical_sorts_keys_and_keeps_numbers_as_written() {
        let v: Value = serde_json::from_str(r#"{"b": 1.50, "a": {"y": [2, "x\"y"], "x": null}, "ab": 1e3}"#).unwrap();
        assert_eq!(canonical(&v), r#"{"a":{"x":null,"y":[2,"x\"y"]},"ab":1e+3,"b":1.50}"#);
    }

    fn event<'a>(payload: &'a Map<String, Value>) -> Event<'a> {
        Event { id: "ev_1", tenant_id: "acme", kind: "memory.promoted", subject_id: Some("pm_1"), actor: Some("op:ana"),
                actor_role: Some("agent"), created_at: 817_000_000_000_000, payload }
    }

    #[test]
    fn every_fixed_field_and_the_place_count() {
        let p = obj(json!({"memory_id": "pm_1", "reason": "asked"}));
        let base = event_link("0", 1, &event(&p), Some("c"));
        assert_eq!(base.len(), 64);
        assert_ne!(base, event_link("1", 1, &event(&p), Some("c")), "the previous link");
        assert_ne!(base, event_link("0", 2, &event(&p), Some("c")), "the place");
        assert_ne!(base, event_link("0", 1, &event(&p), None), "the commitment");
        let changes: Vec<Event> = vec![
            Event { id: "ev_2", ..event(&p) },
            Event { tenant_id: "acm", ..event(&p) },
            Event { kind: "memory.queued", ..event(&p) },
            Event { subject_id: None, ..event(&p) },
            Event { subject_id: Some(""), ..event(&p) },
            Event { actor: Some("op:ben"), ..event(&p) },
            Event { actor_role: None, ..event(&p) },
            Event { created_at: 817_000_000_000_001, ..event(&p) },
        ];
        for e in &changes {
            assert_ne!(base, event_link("0", 1, e, Some("c")));
        }
        // an id in the payload is fixed; its free text is not (the commitment covers it)
        let other_id = obj(json!({"memory_id": "pm_2", "reason": "asked"}));
        assert_ne!(base, event_link("0", 1, &event(&other_id), Some("c")));
        let other_text = obj(json!({"memory_id": "pm_1", "reason": "told"}));
        assert_eq!(base, event_link("0", 1, &event(&other_text), Some("c")));
        // erasure leaves the link as it was
        let erased = erased_payload(&p);
        assert_eq!(base, event_link("0", 1, &event(&erased), Some("c")));
    }

    #[test]
    fn parts_cannot_run_into_each_other() {
        let p = Map::new();
        let a = Event { actor: Some("op:a"), actor_role: Some("b"), ..event(&p) };
        let b = Event { actor: Some("op:"), actor_role: Some("ab"), ..event(&p) };
        assert_ne!(event_link("0", 1, &a, None), event_link("0", 1, &b, None));
    }

    #[test]
    fn commitments_need_the_salt() {
        let p = json!({"reason": "asked"});
        let c = event_content(Some("5f0e"), &p).unwrap();
        assert_ne!(c, event_content(Some("5f0f"), &p).unwrap());
        assert_ne!(c, event_content(Some("5f0e"), &json!({"reason": "told"})).unwrap());
        assert_eq!(event_content(None, &p), None);
        assert_ne!(content_digest(Some("s"), None), content_digest(Some("s"), Some("")));
    }

    #[test]
    fn decisions() {
        let d = Decision { id: "dc_1", tenant_id: "acme", candidate_id: "mc_1", review_id: Some("rv_1"), action: "approve",
                           decided_by: "op:ana", new_candidate_id: None, decided_at: 1, decided_by_role: Some("rev"), has_notes: true };
        let base = decision_link("0", 1, &d, Some("c"));
        assert_ne!(base, decision_link("0", 1, &Decision { action: "reject", ..d }, Some("c")));
        assert_ne!(base, decision_link("0", 1, &Decision { decided_by_role: Some("rew"), ..d }, Some("c")));
        assert_ne!(base, decision_link("0", 1, &Decision { has_notes: false, ..d }, Some("c")));
        // the same fields as an event's never give an event's digest
        assert_eq!(base.len(), 64);
    }
}
