//! `explain_recall`: memory_fabric.explain_recall(), whether one memory is visible to a recall.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_postgres::Transaction;

use super::{
    as_if_unknown, intent_for_call, nullable, object, out_of_scope, rfc3339, user_for_call, NamedArgs, Output, ToolError,
};
use crate::config::Settings;

pub const DESCRIPTION: &str = "\
Explain whether one memory would be visible to a recall with the given scope, and every reason it \
would not (retracted, expired, another user or intent, a classification not allowed, missing \
consent, not yet promoted at that instant). Use it when a memory you expected is missing from \
recall, or to audit what an agent could see at a past instant (as_of). Returns visible (true or \
false), reasons (a list of short explanations; empty when visible), memory and at (the instant \
evaluated). For reviewers and admins.";

/// The arguments of `explain_recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The memory to explain (pm_...).
    pub memory_id: String,
    /// The intent of the recall to explain. When the server is pinned to an intent (--intent),
    /// leave it out: that intent is explained, and another is refused.
    #[serde(default, deserialize_with = "super::present")]
    #[schemars(with = "Option<String>")]
    pub intent_id: Option<Option<String>>,
    /// The user of the recall to explain. Leave it out when the server was started with a fixed
    /// user.
    pub user_id: Option<String>,
    /// The classifications that recall would allow; default PUBLIC and INTERNAL.
    pub classification_allowed: Option<Vec<String>>,
    /// An RFC 3339 timestamp (e.g. 2026-11-26T09:31:00Z): explain a recall at that instant.
    pub as_of: Option<String>,
}

pub struct Call {
    args: Args,
    user_id: Option<String>,
    intent_id: Option<String>,
}

pub fn parse(settings: &Settings, mut args: Args) -> Result<Call, ToolError> {
    if let Some(t) = &args.as_of {
        rfc3339("as_of", t)?;
    }
    let user_id = user_for_call(settings, args.user_id.take())?;
    let intent_id = intent_for_call(settings, args.intent_id.take(), false)?;
    Ok(Call { args, user_id, intent_id })
}

pub async fn run(tx: &Transaction<'_>, settings: &Settings, c: Call) -> Result<Output, ToolError> {
    let a = c.args;
    let memory_id = a.memory_id.clone();
    let call = |memory_id: String| {
        let mut call = NamedArgs::default();
        call.add("tenant_id", "text", settings.tenant.clone())
            .add("memory_id", "text", memory_id)
            .opt("intent_id", "text", c.intent_id.clone())
            .opt("user_id", "text", c.user_id.clone())
            .opt("classification_allowed", "text[]", a.classification_allowed.clone())
            .opt("as_of", "text::timestamptz", a.as_of.clone());
        call
    };
    // another user's or intent's memory: as unknown as an id that does not exist (the answer would
    // carry its text, and that it is scoped to someone else)
    if settings.user.is_some() || settings.intent.is_some() {
        let scope = tx
            .query_opt(
                "SELECT m.user_id, m.intent_scope FROM memory_fabric.promoted_memory m
                 WHERE m.id = $1 AND m.tenant_id = $2",
                &[&memory_id, &settings.tenant],
            )
            .await
            .map_err(|e| ToolError::from_pg(&e))?;
        if scope.is_some_and(|r| out_of_scope(settings, r.get(0), r.get(1))) {
            return Err(as_if_unknown(tx, "explain_recall", &memory_id, call).await);
        }
    }
    let mut row = call(memory_id.clone()).row(tx, "to_jsonb(r)", "explain_recall").await?;
    row["memory_id"] = json!(memory_id);
    let reasons: Vec<&str> =
        row["reasons"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let summary = if row["visible"] == json!(true) {
        format!("{memory_id} is visible to such a recall")
    } else {
        format!("{memory_id} is not visible to such a recall: {}", reasons.join("; "))
    };
    Ok(Output { summary, value: row })
}

pub fn output_schema() -> Value {
    object(
        json!({
            "memory_id": {"type": "string"},
            "visible": {"type": "boolean"},
            "reasons": {"type": ["array", "null"], "items": {"type": "string"}},
            "memory": nullable("string"),
            "at": nullable("string")
        }),
        &["memory_id", "visible"],
    )
}
