//! `memory_fabric.forget_subject()`: erasure of everything captured about a subject.

use crate::args::require_identifier;
use crate::events;
use crate::security::{caller_name, require_tenant};
use crate::spi::{plan, TEXT, TEXT_ARRAY, TIMESTAMPTZ};
use pgrx::prelude::*;
use serde_json::json;

/// The memories and candidates about a subject ($2) in a tenant ($1): those whose user or entity
/// names it (memory_fabric._names_subject(), as consent reads it).
macro_rules! about {
    () => {
        "tenant_id = $1 AND (memory_fabric._names_subject(user_id, $2) OR memory_fabric._names_subject(entity, $2))"
    };
}

const ERASE_CANDIDATES: &str = concat!(
    "UPDATE memory_fabric.candidates SET erased_at = $3, text = '[erased]', value = NULL, embedding = NULL, \
     metadata = '{}', evidence_refs = '[]', content_hash = memory_fabric._erased_digest(content_hash) \
     WHERE ",
    about!(),
    " AND erased_at IS NULL RETURNING id"
);
// A retraction's reason may hold what someone wrote: it becomes '[erased]', but for the reasons
// the pipeline writes itself, which name only ids (supersession) or nothing (revoke_consent's).
// A live memory is retracted by the erasure.
const ERASE_MEMORIES: &str = concat!(
    "UPDATE memory_fabric.promoted_memory SET erased_at = $4, text = '[erased]', value = NULL, embedding = NULL, \
     evidence_refs = '[]', content_hash = memory_fabric._erased_digest(content_hash), \
     retracted_at = coalesce(retracted_at, $4), retracted_by = coalesce(retracted_by, $3), \
     retraction_reason = CASE WHEN retraction_reason IS NULL THEN 'erased' \
                              WHEN retraction_reason ~ '^(consent_revoked|superseded by pm_[0-9a-z_]+)$' THEN retraction_reason \
                              ELSE '[erased]' END \
     WHERE ",
    about!(),
    " AND erased_at IS NULL RETURNING id"
);
// The operators' notes on the erased candidates, and on those an edit of them made.
// Their audit salts go with them (sql/schema.sql, the audit chain).
const ERASE_DECISIONS: &str = "UPDATE memory_fabric.decisions SET erased_at = $3, audit_salt = NULL, \
     notes = CASE WHEN notes IS NULL THEN NULL ELSE '[erased]' END \
     WHERE tenant_id = $1 AND (candidate_id = ANY ($2) OR new_candidate_id = ANY ($2)) AND erased_at IS NULL";
// The events about the erased candidates and memories: their payloads' free text.
const ERASE_EVENTS: &str = "UPDATE memory_fabric.events SET erased_at = $3, audit_salt = NULL, payload = memory_fabric._erased_payload(payload) \
     WHERE tenant_id = $1 AND subject_id = ANY ($2) AND erased_at IS NULL";
// What the subject's recalls asked.
const ERASE_RECALLS: &str = "UPDATE memory_fabric.recall_log SET erased_at = $3, query_text = NULL \
     WHERE tenant_id = $1 AND memory_fabric._names_subject(user_id, $2) AND erased_at IS NULL";
// The subject's consents: their evidence and revocation reasons (the consent itself, its purpose
// and basis stay: the audit of what was allowed).
const ERASE_CONSENTS: &str = "UPDATE memory_fabric.consents SET erased_at = $3, evidence_refs = '[]', \
     revocation_reason = CASE WHEN revocation_reason IS NULL THEN NULL ELSE '[erased]' END \
     WHERE tenant_id = $1 AND memory_fabric._names_subject(subject, $2) AND erased_at IS NULL";

/// Erasure: every candidate and memory about a subject (one whose user or entity names it, as
/// consent reads it: the subject, or "<kind>:<subject>") keeps its id and timestamps, and loses
/// its content (text, value, embedding, metadata, evidence refs) to a tombstone and its content
/// hash to a keyed digest (_erased_digest); live memories are retracted with it. The operators'
/// notes on those candidates, the free text of the events about them, the query text of the
/// subject's recalls and the evidence of its consents go too. Reviews are left: their notes and
/// reasons are written by review from ids, numbers and the policy's names. Returns (candidates,
/// memories) erased.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _forget_subject(tenant_id: Option<&str>, user_id: Option<&str>, reason: Option<&str>) -> Vec<i64> {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let subject = require_identifier("user_id", user_id);
    let reason = crate::args::require_reason("reason", reason);
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        crate::xact::lock(client, "subject", &[Some(tenant.as_str()), Some(subject.as_str())]);
        let by = caller_name(client);
        // One instant for the whole erasure, so its history reads in a stable order.
        let at = crate::xact::clock(client);
        let ids = |client: &mut pgrx::spi::SpiClient<'_>, sql: &str, args: &[pgrx::datum::DatumWithOid<'_>], types: &[pgrx::pg_sys::PgOid]| -> Vec<String> {
            client
                .update(&*plan(client, sql, types, true), None, args)
                .unwrap_or_else(|e| error!("memory_fabric: cannot erase: {e}"))
                .filter_map(|r| crate::spi::col::<String>(&r, 1))
                .collect()
        };
        let cands = ids(client, ERASE_CANDIDATES, &[tenant.as_str().into(), subject.as_str().into(), at.into()], &[TEXT, TEXT, TIMESTAMPTZ]);
        let mems = ids(
            client,
            ERASE_MEMORIES,
            &[tenant.as_str().into(), subject.as_str().into(), by.as_str().into(), at.into()],
            &[TEXT, TEXT, TEXT, TIMESTAMPTZ],
        );
        let erased: Vec<String> = cands.iter().chain(mems.iter()).cloned().collect();
        for (sql, subjects) in [(ERASE_DECISIONS, &cands), (ERASE_EVENTS, &erased)] {
            client
                .update(&*plan(client, sql, &[TEXT, TEXT_ARRAY, TIMESTAMPTZ], true), None, &[tenant.as_str().into(), subjects.clone().into(), at.into()])
                .unwrap_or_else(|e| error!("memory_fabric: cannot erase: {e}"));
        }
        for sql in [ERASE_RECALLS, ERASE_CONSENTS] {
            client
                .update(&*plan(client, sql, &[TEXT, TEXT, TIMESTAMPTZ], true), None, &[tenant.as_str().into(), subject.as_str().into(), at.into()])
                .unwrap_or_else(|e| error!("memory_fabric: cannot erase: {e}"));
        }
        events::emit(client, &tenant, "memory.erased", &format!("subject:{subject}"), Some(&by),
                     json!({"reason": reason, "candidates": cands.len(), "memories": mems.len()}));
        vec![cands.len() as i64, mems.len() as i64]
    })
}

/// The digest erasure keeps in place of a content hash (memory_fabric_core::keys::erased_digest),
/// under the database's key in memory_fabric.secrets, which only a superuser can read: a function
/// that runs as its caller, so that only a superuser and the extension's SECURITY DEFINER
/// functions can make one (the extension's owner is not granted it, sql/finalize.sql). The
/// append-only guard checks with it that an erasure writes the digest and nothing else.
#[pg_extern(stable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _erased_digest(content_hash: &str) -> String {
    let secret: Option<Vec<u8>> = Spi::connect(|client| {
        client
            .select("SELECT value FROM memory_fabric.secrets WHERE name = 'erasure_digest'", Some(1), &[])
            .and_then(|t| if t.is_empty() { Ok(None) } else { t.first().get_one::<Vec<u8>>() })
            .unwrap_or_else(|e| error!("memory_fabric: cannot read the erasure key: {e}"))
    });
    let Some(secret) = secret else {
        error!("memory_fabric: the erasure key is missing from memory_fabric.secrets");
    };
    memory_fabric_core::keys::erased_digest(&secret, content_hash)
}

/// An event's payload as erasure leaves it (memory_fabric_core::audit::erased_payload): the values
/// of the keys that hold ids and names of the pipeline's own, and numbers, booleans and nulls, stay;
/// every other value, which may hold what someone wrote (an operator's reason, notes), becomes
/// "[erased]"; "erased": true marks it. Erasure writes it, the append-only guard checks an erasure
/// with it, and the audit chain's links are made of it (so they hold after an erasure).
#[pg_extern(immutable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _erased_payload(p: pgrx::JsonB) -> pgrx::JsonB {
    match &p.0 {
        serde_json::Value::Object(m) => pgrx::JsonB(serde_json::Value::Object(memory_fabric_core::audit::erased_payload(m))),
        _ => crate::error::raise(memory_fabric_core::Error::invalid("an event payload must be a JSON object")),
    }
}

extension_sql!(
    r#"
COMMENT ON FUNCTION memory_fabric._erased_payload IS
    'An event payload without its free text, as erasure leaves it';
REVOKE ALL ON FUNCTION memory_fabric._erased_payload(jsonb) FROM PUBLIC;
CREATE FUNCTION memory_fabric.forget_subject(tenant_id text, user_id text, reason text)
RETURNS TABLE (candidates_erased bigint, memories_erased bigint)
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r[1], r[2] FROM memory_fabric._forget_subject(forget_subject.tenant_id, forget_subject.user_id,
                                                         forget_subject.reason) AS r
$$;
COMMENT ON FUNCTION memory_fabric.forget_subject IS
    'Erasure: replace everything captured about a subject with tombstones and keyed digests, keeping ids, times and the audit';
REVOKE ALL ON FUNCTION memory_fabric.forget_subject(text, text, text), memory_fabric._forget_subject(text, text, text),
    memory_fabric._erased_digest(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.forget_subject(text, text, text) TO memory_fabric_admin;
"#,
    name = "forget_subject",
    requires = [_forget_subject, _erased_digest, _erased_payload],
);
