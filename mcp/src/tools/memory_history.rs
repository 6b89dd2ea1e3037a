//! `memory_history`: memory_fabric.memory_history(), a candidate's or memory's life.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_postgres::Transaction;

use super::{as_if_unknown, nullable, object, out_of_scope, text, NamedArgs, Output, ToolError};
use crate::config::Settings;

pub const DESCRIPTION: &str = "\
The life of one candidate (mc_...) or memory (pm_...), oldest first: captured, reviewed (with the \
verdict, similarity and the judge's scores), decided by an operator, promoted, retracted, erased, \
and the events on the way. Use it to audit why something is or is not remembered, or who changed \
it and when. Returns `history`, a list of steps with at (timestamp), stage, ref (the id of the \
row behind the step) and detail (a JSON object). For reviewers and admins.";

/// The arguments of `memory_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A candidate id (mc_...) or a memory id (pm_...).
    pub id: String,
}

pub struct Call {
    id: String,
}

pub fn parse(args: Args) -> Result<Call, ToolError> {
    Ok(Call { id: args.id })
}

pub async fn run(tx: &Transaction<'_>, settings: &Settings, c: Call) -> Result<Output, ToolError> {
    let call = |id: String| {
        let mut call = NamedArgs::default();
        call.add("id", "text", id);
        call
    };
    // another user's or intent's candidate or memory: as unknown as an id that does not exist.
    // The lookup is memory_history's own (the candidate, or the promoted memory's candidate),
    // read as the role, under row-level security.
    if settings.user.is_some() || settings.intent.is_some() {
        let rows = tx
            .query(
                "SELECT c.user_id, c.intent_id FROM memory_fabric.candidates c
                 WHERE c.tenant_id = $2
                   AND (c.id = $1 OR c.id = (SELECT p.candidate_id FROM memory_fabric.promoted_memory p
                                             WHERE p.id = $1 AND p.tenant_id = $2))",
                &[&c.id, &settings.tenant],
            )
            .await
            .map_err(|e| ToolError::from_pg(&e))?;
        if rows.iter().any(|r| out_of_scope(settings, r.get(0), r.get(1))) {
            return Err(as_if_unknown(tx, "memory_history", &c.id, call).await);
        }
    }
    let history = call(c.id.clone()).rows(tx, "to_jsonb(r)", "memory_history").await?;
    let mut summary = format!("{} steps in the history of {}:", history.len(), c.id);
    for h in &history {
        summary.push_str(&format!("\n- {} {} {}", text(h, "at"), text(h, "stage"), text(h, "ref")));
    }
    Ok(Output { summary, value: json!({ "id": c.id, "count": history.len(), "history": history }) })
}

pub fn output_schema() -> Value {
    object(
        json!({
            "id": {"type": "string"},
            "count": {"type": "integer"},
            "history": {
                "type": "array",
                "items": object(json!({
                    "at": nullable("string"),
                    "stage": {"type": "string"},
                    "ref": nullable("string"),
                    "detail": {}
                }), &["stage"])
            }
        }),
        &["id", "count", "history"],
    )
}
