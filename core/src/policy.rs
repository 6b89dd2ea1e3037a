//! The parts of a tenant policy the core needs, parsed once from the policy's JSON body.
//!
//! The default policy (`Policy::default_json`) is the single source of the defaults: the
//! extension inserts it as the `'*'` policy at install time.

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactionRule {
    pub name: String,
    pub pattern: String,
    pub replacement: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub classifications: Vec<String>,
    pub write_classes: Vec<String>,
    pub limits: Limits,
    /// Whether the built-in rules (payment cards, secrets) run before the tenant's own.
    pub default_redaction: bool,
    pub redaction_rules: Vec<RedactionRule>,
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
            "redaction": { "defaults": true, "rules": [] }
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
                for (i, r) in rules.iter().enumerate() {
                    let field = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
                    let name = field("name").filter(|s| !s.is_empty()).ok_or_else(|| {
                        Error::invalid(format!("redaction rule {i} needs a non-empty \"name\""))
                    })?;
                    let pattern = field("pattern").filter(|s| !s.is_empty()).ok_or_else(|| {
                        Error::invalid(format!("redaction rule \"{name}\" needs a non-empty \"pattern\""))
                    })?;
                    let replacement =
                        field("replacement").unwrap_or_else(|| format!("[REDACTED:{name}]"));
                    redaction_rules.push(RedactionRule { name, pattern, replacement });
                }
            }
            Some(_) => return Err(Error::invalid("policy key \"redaction.rules\" must be a JSON array")),
        }

        Ok(Policy { classifications, write_classes, limits, default_redaction, redaction_rules })
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
        ] {
            let e = Policy::from_json(&bad).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::InvalidParameter, "{bad}");
        }
    }
}
