//! Audit events and notifications.

use crate::ids::new_id;
use crate::spi::{plan, OID, TEXT};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

// The actor is the display name the caller gave, else its role; actor_role is always the role
// that called (the role before SECURITY DEFINER), never the extension's owner.
const INSERT: &str = "INSERT INTO memory_fabric.events (id, tenant_id, kind, subject_id, actor, payload, actor_role) \
     VALUES ($1, $2, $3, $4, coalesce($5, pg_catalog.pg_get_userbyid($7)::text), $6::jsonb, pg_catalog.pg_get_userbyid($7))";
const NOTIFY: &str = "SELECT pg_catalog.pg_notify('memory_fabric', $1)";

/// Appends an event. `payload` must be a JSON object.
pub fn emit(client: &mut SpiClient<'_>, tenant: &str, kind: &str, subject: &str, actor: Option<&str>, payload: serde_json::Value) {
    let p = plan(client, INSERT, &[TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, OID], true);
    let id = new_id("ev");
    client
        .update(&*p, None, &[id.as_str().into(), tenant.into(), kind.into(), subject.into(), actor.into(), payload.to_string().as_str().into(), crate::role::caller().into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot record event: {e}"));
}

/// Sends a notification on channel `memory_fabric`, delivered when the transaction commits.
pub fn notify(client: &SpiClient<'_>, payload: serde_json::Value) {
    let p = plan(client, NOTIFY, &[TEXT], false);
    client
        .select(&*p, None, &[payload.to_string().as_str().into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot notify: {e}"));
}
