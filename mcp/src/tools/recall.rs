//! `recall`: memory_fabric.recall(), the scoped read of promoted memories.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio_postgres::Transaction;

use super::{intent_for_call, nullable, object, rfc3339, text, user_for_call, NamedArgs, Output, ToolError};
use crate::config::Settings;

pub const DESCRIPTION: &str = "\
Recall what is remembered: reviewed, promoted memories of this tenant in scope (the user's and \
user-less ones, the intent's and cross-intent ones, not retracted or expired, of the allowed \
classifications). Use it before answering anything that may depend on earlier conversations, \
preferences or decisions; pass the question as `query` to rank by relevance, or leave it out for \
the most important and newest memories. Returns `memories`, best first, each with memory_id, \
text, tier, score (with relevance, recency and importance), low_confidence, in_contradiction and \
the ids it contradicts (both sides of a conflict are shown: do not trust either blindly), \
classification, the structured entity/predicate/value when there is one, promoted_at, \
expires_at, and provenance (candidate_id, evidence_refs, source, captured_at, consent_id). \
`as_of` replays what was believed at a past instant. An empty list means nothing in scope is \
remembered, not that the opposite is true.";

/// The arguments of `recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What you want to know, in words; memories are ranked by relevance to it. Leave it out to
    /// get the most important, newest memories.
    pub query: Option<String>,
    /// How many memories at most (1 to 50; default 8).
    #[schemars(range(min = 1, max = 50))]
    pub max_recalls: Option<i64>,
    /// The classifications you may see; default PUBLIC and INTERNAL.
    pub classification_allowed: Option<Vec<String>>,
    /// An RFC 3339 timestamp (e.g. 2026-11-26T09:31:00Z): recall what was believed then.
    pub as_of: Option<String>,
    /// The intent (e.g. support.billing) whose memories to recall, besides the cross-intent ones
    /// (always included). When the server is pinned to an intent (--intent), leave it out: that
    /// intent is recalled, and another is refused.
    #[serde(default, deserialize_with = "super::present")]
    #[schemars(with = "Option<String>")]
    pub intent_id: Option<Option<String>>,
    /// The user (subject) to recall for. Leave it out when the server was started with a fixed
    /// user; without any user only user-less memories are recalled.
    pub user_id: Option<String>,
}

pub struct Call {
    args: Args,
    user_id: Option<String>,
    intent_id: Option<String>,
}

pub fn parse(settings: &Settings, mut args: Args) -> Result<Call, ToolError> {
    if let Some(n) = args.max_recalls {
        if !(1..=50).contains(&n) {
            return Err(ToolError::Arguments(format!("max_recalls must be between 1 and 50, not {n}")));
        }
    }
    if let Some(t) = &args.as_of {
        rfc3339("as_of", t)?;
    }
    let user_id = user_for_call(settings, args.user_id.take())?;
    let intent_id = intent_for_call(settings, args.intent_id.take(), false)?;
    Ok(Call { args, user_id, intent_id })
}

/// The provenance columns of a recalled row, gathered under `provenance`.
const PROVENANCE: [&str; 5] = ["candidate_id", "evidence_refs", "source", "captured_at", "consent_id"];

pub async fn run(tx: &Transaction<'_>, settings: &Settings, c: Call) -> Result<Output, ToolError> {
    let a = c.args;
    let mut call = NamedArgs::default();
    call.add("tenant_id", "text", settings.tenant.clone())
        .add("intent_id", "text", c.intent_id)
        .opt("user_id", "text", c.user_id)
        .opt("max_recalls", "int4", a.max_recalls.map(|n| n as i32))
        .opt("classification_allowed", "text[]", a.classification_allowed)
        .opt("query_text", "text", a.query)
        .opt("as_of", "text::timestamptz", a.as_of);
    let rows = call.rows(tx, "to_jsonb(r)", "recall").await?;
    let memories: Vec<Value> = rows
        .into_iter()
        .map(|row| {
            let Value::Object(mut m) = row else { return row };
            let mut provenance = Map::new();
            for k in PROVENANCE {
                if let Some(v) = m.remove(k) {
                    provenance.insert(k.into(), v);
                }
            }
            m.insert("provenance".into(), Value::Object(provenance));
            Value::Object(m)
        })
        .collect();
    let mut summary = match memories.len() {
        0 => "no memory in scope".to_string(),
        1 => "1 memory:".to_string(),
        n => format!("{n} memories, best first:"),
    };
    for m in &memories {
        let mut flags = String::new();
        if m["in_contradiction"] == json!(true) {
            flags.push_str(", in contradiction");
        }
        if m["low_confidence"] == json!(true) {
            flags.push_str(", low confidence");
        }
        summary.push_str(&format!("\n- {} ({}, {}{flags})", text(m, "text"), text(m, "memory_id"), text(m, "tier")));
    }
    Ok(Output { summary, value: json!({ "count": memories.len(), "memories": memories }) })
}

pub fn output_schema() -> Value {
    let s = || nullable("string");
    let n = || nullable("number");
    object(
        json!({
            "count": {"type": "integer"},
            "memories": {
                "type": "array",
                "items": object(json!({
                    "memory_id": {"type": "string"},
                    "text": {"type": "string"},
                    "tier": {"type": "string"},
                    "priority": n(),
                    "score": n(),
                    "relevance": n(),
                    "recency": n(),
                    "importance": n(),
                    "low_confidence": nullable("boolean"),
                    "in_contradiction": nullable("boolean"),
                    "contradicts": {"type": ["array", "null"], "items": {"type": "string"}},
                    "classification": {"type": "string"},
                    "user_scope": s(),
                    "intent_scope": s(),
                    "entity": s(),
                    "predicate": s(),
                    "value": {},
                    "write_class": s(),
                    "confidence": n(),
                    "promoted_at": {"type": "string"},
                    "expires_at": s(),
                    "embedding_model": s(),
                    "provenance": object(json!({
                        "candidate_id": {"type": "string"},
                        "evidence_refs": {"type": ["array", "null"], "items": {"type": "string"}},
                        "source": {"type": "string"},
                        "captured_at": {"type": "string"},
                        "consent_id": s()
                    }), &["candidate_id"])
                }), &["memory_id", "text", "provenance"])
            }
        }),
        &["count", "memories"],
    )
}
