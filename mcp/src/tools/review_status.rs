//! `review_status`: memory_fabric.review_status(), where one of the role's captures stands.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_postgres::Transaction;

use super::{nullable, object, text, NamedArgs, Output, ToolError};

pub const DESCRIPTION: &str = "\
Where one of your captures stands now. Use it after `remember` answered queued_for_human or \
contradiction, to learn whether a human approved, rejected or edited it since, or whether it was \
promoted, retracted or erased later. Give the candidate_id that remember returned (mc_...). \
Returns `stage`: unreviewed, promotable, waiting_for_human (a person decides: also a \
contradiction, with status contradicts, until a reviewer keeps one memory or both), duplicate, \
rejected, edited (an operator rewrote it: new_candidate_id), promoted (memory_id, promoted_at), \
retracted or erased; with the latest review (status, reviewer, reason, tier, duplicate_of, \
contradicts, resolution, reviewed_at), the latest decision (decision, decided_at) and \
captured_at. An id you did not capture gives the same not-found error as an unknown id.";

/// The arguments of `review_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The candidate id (mc_...) that remember returned.
    pub candidate_id: String,
}

pub struct Call {
    candidate_id: String,
}

pub fn parse(args: Args) -> Result<Call, ToolError> {
    Ok(Call { candidate_id: args.candidate_id })
}

pub async fn run(tx: &Transaction<'_>, c: Call) -> Result<Output, ToolError> {
    let mut call = NamedArgs::default();
    call.add("candidate_id", "text", c.candidate_id.clone());
    // every column, whatever the function returns: a column added or renamed there shows up here
    let mut row = call.row(tx, "to_jsonb(r)", "review_status").await?;
    if row.get("candidate_id").is_none() {
        row["candidate_id"] = json!(c.candidate_id);
    }
    let mut summary = format!("candidate {} is {}", c.candidate_id, text(&row, "stage"));
    for (key, label) in [
        ("memory_id", "memory"),
        ("reason", "reason"),
        ("duplicate_of", "duplicate of"),
        ("contradicts", "contradicts"),
        ("decision", "decision"),
        ("new_candidate_id", "edited into"),
    ] {
        if !text(&row, key).is_empty() {
            summary.push_str(&format!("; {label} {}", text(&row, key)));
        }
    }
    Ok(Output { summary, value: row })
}

pub fn output_schema() -> Value {
    let s = || nullable("string");
    object(
        json!({
            "candidate_id": {"type": "string"},
            "stage": {"type": "string", "description": "unreviewed, promotable, waiting_for_human, duplicate, rejected, edited, promoted, retracted or erased"},
            "status": s(), "reviewer": s(), "reason": s(), "tier": s(), "duplicate_of": s(), "contradicts": s(),
            "resolution": s(), "reviewed_at": s(), "decision": s(), "decided_at": s(), "new_candidate_id": s(),
            "memory_id": s(), "promoted_at": s(), "retracted_at": s(), "captured_at": s()
        }),
        &["candidate_id"],
    )
}
