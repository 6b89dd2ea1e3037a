//! `remember`: capture_memory, review_candidate and, when no human is needed, promote, in one
//! transaction.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio_postgres::Transaction;

use super::{intent_for_call, nullable, object, text, user_for_call, NamedArgs, Output, ToolError};
use crate::config::Settings;

pub const DESCRIPTION: &str = "\
Store a fact in the governed long-term memory. Use it when you learn something durable and worth \
recalling in later conversations: a customer's preference, a decision, a correction of something \
remembered earlier. Write one self-contained sentence that names its subject (\"Customer c1 wants \
paper invoices.\"), not a transcript. Cite where it came from in evidence_refs (a ticket, a \
session, a system of record); a fact read from a web page, URL, file or document is never \
promoted without a human. \
The fact is captured, reviewed at once (duplicates, contradictions with what is already \
remembered, consent, tier) and promoted when no human is needed, all in one step. The result's \
`outcome` says what happened: `promoted` (recallable now; memory_id, tier, expires_at, and \
superseded_memory_id when it replaced an older memory), `duplicate` (already remembered: \
duplicate_of), `contradiction` (conflicts with memory `contradicts` and was not promoted: \
resolution `block`, or `coexist` for a fact of an intent against a cross-intent memory, and a \
person decides), `queued_for_human` (waits for a human reviewer; \
`reason` says why; ask review_status later) or `rejected` (`reason`). It always carries \
candidate_id and the review (id, status, reason, tier). Nothing is ever stored unreviewed or \
overwritten.";

/// The arguments of `remember`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The fact, one self-contained sentence naming its subject. Secrets and card numbers are
    /// redacted before anything is stored.
    pub text: String,
    /// Data classification: PUBLIC, INTERNAL (the default), CONFIDENTIAL or PII, as the tenant's
    /// policy allows. Recall shows PUBLIC and INTERNAL unless asked for more.
    pub classification: Option<String>,
    /// The user (subject) the fact is about. Leave it out when the server was started with a fixed
    /// user; a fact without a user is shared by every user of the tenant.
    pub user_id: Option<String>,
    /// The intent (task or workflow, e.g. support.billing) the fact belongs to: it is then
    /// recalled only for that intent. Leave it out for a fact that holds across intents. When the
    /// server is pinned to an intent (--intent), leave it out: the fact is stored under that
    /// intent, and another (or none) is refused.
    #[serde(default, deserialize_with = "super::present")]
    #[schemars(with = "Option<String>")]
    pub intent_id: Option<Option<String>>,
    /// Where the fact came from, e.g. ["ticket:8812", "session:42", "tool:crm.lookup:cus_42"].
    /// Refs to content you only read (web:, url:, file:, doc:, email:, a URL) send the fact to a
    /// human reviewer.
    pub evidence_refs: Option<Vec<String>>,
    /// For a structured fact: the entity it is about (e.g. customer:cus_42); needs predicate.
    pub entity: Option<String>,
    /// For a structured fact: the attribute (e.g. invoice_channel); needs entity.
    pub predicate: Option<String>,
    /// For a structured fact: its value, any JSON (e.g. "email"); needs entity and predicate. The
    /// same entity and predicate with another value is a contradiction.
    pub value: Option<Value>,
    /// What kind of write this is, as the policy allows: evidence_link, preference,
    /// decision_outcome or correction (a correction of an earlier memory can supersede it).
    pub write_class: Option<String>,
    /// How sure you are, from 0 to 1. Low-confidence facts are marked as such in recall.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: Option<f64>,
    /// Free-form JSON object stored with the capture (not searched).
    pub metadata: Option<Map<String, Value>>,
    /// The id of an earlier candidate (mc_...) or memory (pm_...) this fact replaces.
    pub supersedes: Option<String>,
}

pub struct Call {
    args: Args,
    user_id: Option<String>,
    intent_id: Option<String>,
}

pub fn parse(settings: &Settings, mut args: Args) -> Result<Call, ToolError> {
    if let Some(c) = args.confidence {
        if !(0.0..=1.0).contains(&c) {
            return Err(ToolError::Arguments(format!("confidence must be between 0 and 1, not {c}")));
        }
    }
    let user_id = user_for_call(settings, args.user_id.take())?;
    let intent_id = intent_for_call(settings, args.intent_id.take(), true)?;
    Ok(Call { args, user_id, intent_id })
}

pub async fn run(tx: &Transaction<'_>, settings: &Settings, actor: &str, c: Call) -> Result<Output, ToolError> {
    let a = c.args;
    let mut capture = NamedArgs::default();
    capture
        .add("tenant_id", "text", settings.tenant.clone())
        .add("text", "text", a.text)
        .add("source", "text", "agent".to_string())
        .add("classification", "text", a.classification.unwrap_or_else(|| "INTERNAL".into()))
        .opt("user_id", "text", c.user_id)
        .opt("intent_id", "text", c.intent_id)
        .opt("evidence_refs", "jsonb", a.evidence_refs.map(|r| json!(r)))
        .opt("entity", "text", a.entity)
        .opt("predicate", "text", a.predicate)
        .opt("value", "jsonb", a.value)
        .opt("write_class", "text", a.write_class)
        .opt("confidence", "float8", a.confidence)
        .add("actor", "text", actor.to_string())
        .opt("supersedes", "text", a.supersedes)
        .opt("metadata", "jsonb", a.metadata.map(Value::Object));
    let candidate = capture
        .row(
            tx,
            "jsonb_build_object('id', r.id, 'captured_at', r.captured_at, 'redaction_count', r.redaction_count)",
            "capture_memory",
        )
        .await?;
    let candidate_id = text(&candidate, "id").to_string();

    let mut by_id = NamedArgs::default();
    by_id.add("candidate_id", "text", candidate_id.clone());
    let review = by_id
        .row(
            tx,
            "jsonb_build_object('id', r.id, 'status', r.status, 'reviewer', r.reviewer, 'reason', r.reason, \
             'tier', r.proposed_tier, 'priority', r.priority_score, 'duplicate_of', r.duplicate_of_id, \
             'contradicts', r.contradicts_id, 'resolution', r.contradiction_resolution, 'similarity', r.similarity, \
             'notes', r.reviewer_notes, 'reviewed_at', r.reviewed_at)",
            "review_candidate",
        )
        .await?;
    let (status, reviewer, resolution) = (text(&review, "status"), text(&review, "reviewer"), text(&review, "resolution"));
    let automatic = reviewer == "auto"
        && (status == "pending_promotion" || (status == "contradicts" && matches!(resolution, "supersede" | "coexist")));

    let mut out = Map::new();
    let nonnull = |v: &Value, k: &str| v.get(k).filter(|x| !x.is_null()).cloned();
    let summary;
    if automatic {
        let memory = by_id
            .row(
                tx,
                "jsonb_build_object('memory_id', r.id, 'tier', r.tier, 'priority', r.priority, 'promoted_at', r.promoted_at, \
                 'expires_at', r.expires_at, 'superseded_memory_id', r.supersedes_id, 'in_contradiction', r.in_contradiction, \
                 'contradicts', r.contradicts_id)",
                "promote",
            )
            .await?;
        out.insert("outcome".into(), json!("promoted"));
        for k in
            ["memory_id", "tier", "promoted_at", "expires_at", "superseded_memory_id", "in_contradiction", "contradicts"]
        {
            if let Some(v) = nonnull(&memory, k) {
                out.insert(k.into(), v);
            }
        }
        if resolution == "coexist" || resolution == "supersede" {
            out.insert("resolution".into(), json!(resolution));
        }
        let expires = match text(&memory, "expires_at") {
            "" => "never expires".to_string(),
            e => format!("expires {e}"),
        };
        summary = match text(&memory, "superseded_memory_id") {
            "" => format!("promoted as {} (tier {}, {expires})", text(&memory, "memory_id"), text(&memory, "tier")),
            old => format!(
                "promoted as {} (tier {}, {expires}); it supersedes {old}, which is retracted",
                text(&memory, "memory_id"),
                text(&memory, "tier")
            ),
        };
    } else if status == "duplicate_of" {
        out.insert("outcome".into(), json!("duplicate"));
        out.insert("duplicate_of".into(), review["duplicate_of"].clone());
        summary = format!("already remembered: a duplicate of {}; nothing new was promoted", text(&review, "duplicate_of"));
    } else if status == "rejected" {
        out.insert("outcome".into(), json!("rejected"));
        out.insert("reason".into(), review["reason"].clone());
        summary = format!("rejected by review (reason {})", text(&review, "reason"));
    } else if status == "contradicts" {
        out.insert("outcome".into(), json!("contradiction"));
        out.insert("contradicts".into(), review["contradicts"].clone());
        out.insert("resolution".into(), review["resolution"].clone());
        if let Some(r) = nonnull(&review, "reason") {
            out.insert("reason".into(), r);
        }
        summary = format!(
            "not promoted: it contradicts memory {} (resolution {}); {}",
            text(&review, "contradicts"),
            resolution,
            if reviewer == "human" { "it waits for a human reviewer" } else { "an operator decides" }
        );
    } else {
        out.insert("outcome".into(), json!("queued_for_human"));
        out.insert("reason".into(), review["reason"].clone());
        summary = format!(
            "waiting for a human reviewer (reason {}); ask review_status with candidate_id {candidate_id} later",
            text(&review, "reason")
        );
    }
    out.insert("promoted".into(), json!(automatic));
    out.insert("waiting_for_human".into(), json!(!automatic && reviewer == "human"));
    out.insert("candidate_id".into(), json!(candidate_id));
    out.insert("captured_at".into(), candidate["captured_at"].clone());
    if candidate["redaction_count"].as_i64().unwrap_or(0) > 0 {
        out.insert("redactions".into(), candidate["redaction_count"].clone());
    }
    out.insert("review".into(), review);
    Ok(Output { summary, value: Value::Object(out) })
}

pub fn output_schema() -> Value {
    let s = || nullable("string");
    object(
        json!({
            "outcome": {"type": "string", "enum": ["promoted", "duplicate", "contradiction", "queued_for_human", "rejected"]},
            "promoted": {"type": "boolean"},
            "waiting_for_human": {"type": "boolean"},
            "candidate_id": {"type": "string"},
            "captured_at": {"type": "string"},
            "redactions": {"type": "integer"},
            "memory_id": {"type": "string"},
            "tier": {"type": "string"},
            "promoted_at": {"type": "string"},
            "expires_at": s(),
            "superseded_memory_id": s(),
            "in_contradiction": {"type": "boolean"},
            "duplicate_of": s(),
            "contradicts": s(),
            "resolution": s(),
            "reason": s(),
            "review": object(
                json!({
                    "id": {"type": "string"},
                    "status": {"type": "string"},
                    "reviewer": {"type": "string"},
                    "reason": s(),
                    "tier": {"type": "string"},
                    "priority": nullable("number"),
                    "duplicate_of": s(),
                    "contradicts": s(),
                    "resolution": s(),
                    "similarity": nullable("number"),
                    "notes": s(),
                    "reviewed_at": {"type": "string"}
                }),
                &["id", "status", "reviewer", "tier"],
            ),
        }),
        &["outcome", "promoted", "waiting_for_human", "candidate_id", "review"],
    )
}
