//! Governance: consent, policies, erasure, the recall log, and who may write a correction.

use crate::ids::new_id;
use crate::error::{raise, OrRaise};
use crate::events;
use crate::gucs;
use crate::policy;
use crate::args::require_text;
use crate::security::{caller_name, require_tenant};
use crate::spi::{col, plan, INT4, TEXT, TEXT_ARRAY, TIMESTAMPTZ};
use memory_fabric_core::policy::{merge, Policy};
use memory_fabric_core::redact::{Outcome, Redactor};
use memory_fabric_core::{Error, Kind};
use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys::{BuiltinOid, PgOid};
use pgrx::prelude::*;
use serde_json::json;


const CONSENT_INSERT: &str = "INSERT INTO memory_fabric.consents (id, tenant_id, subject, purpose, predicates_allowed, \
     classifications_allowed, basis, valid_until, evidence_refs, auditor_id, supersedes) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11)";

/// Most elements in a consent's lists (predicates, classifications, evidence refs).
const LIST_MAX: usize = 64;

/// Longest evidence ref of a consent, in bytes.
const REF_MAX: usize = 1024;

/// Largest policy patch, in bytes (the default policy is about 2 KB).
const PATCH_MAX: usize = 256 * 1024;

#[allow(clippy::too_many_arguments)]
#[pg_extern(volatile, parallel_unsafe)]
fn _record_consent(
    tenant_id: Option<&str>,
    subject: Option<&str>,
    purpose: Option<&str>,
    basis: Option<&str>,
    predicates_allowed: Option<Vec<Option<String>>>,
    classifications_allowed: Option<Vec<Option<String>>>,
    valid_until: Option<TimestampWithTimeZone>,
    evidence_refs: Option<&str>,
    auditor_id: Option<&str>,
    supersedes: Option<&str>,
) -> String {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let subject = crate::args::require_name("subject", subject);
    let purpose = crate::args::require_name("purpose", purpose);
    let basis = crate::args::require_name("basis", basis);
    let auditor_id = auditor_id.map(|a| crate::args::require_name("auditor_id", Some(a)));
    let auditor_id = auditor_id.as_deref();
    let list = |name: &str, v: Option<Vec<Option<String>>>| -> Vec<String> {
        let v = v.unwrap_or_default();
        if v.len() > LIST_MAX {
            raise(Error::limit(format!("{name} has too many elements"))
                .detail(format!("It has {}; at most {LIST_MAX} are allowed.", v.len())));
        }
        v.into_iter()
            .map(|x| match x {
                Some(s) if !s.trim().is_empty() => crate::args::require_name(name, Some(&s)),
                _ => raise(Error::invalid(format!("{name} must not contain NULL or empty elements"))),
            })
            .collect()
    };
    let predicates = list("predicates_allowed", predicates_allowed);
    let classifications = list("classifications_allowed", classifications_allowed);
    let refs = evidence_refs.unwrap_or("[]");
    match serde_json::from_str::<serde_json::Value>(refs) {
        Ok(serde_json::Value::Array(a)) if a.iter().all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty())) => {
            if a.len() > LIST_MAX || a.iter().any(|x| x.as_str().is_some_and(|s| s.len() > REF_MAX)) {
                raise(Error::limit("evidence_refs is too large")
                    .detail(format!("At most {LIST_MAX} references of at most {REF_MAX} bytes each are allowed.")));
            }
        }
        _ => raise(Error::invalid("evidence_refs must be a JSON array of non-empty strings")),
    }
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        if let Some(ts) = valid_until {
            let past = client
                .select("SELECT $1 <= pg_catalog.clock_timestamp()", Some(1), &[ts.into()])
                .and_then(|t| t.first().get_one::<bool>())
                .ok()
                .flatten()
                .unwrap_or(false);
            if past {
                raise(Error::invalid("valid_until is in the past").hint("A consent must be valid for some time to come."));
            }
        }
        if let Some(s) = supersedes {
            let found = client
                .select("SELECT subject FROM memory_fabric.consents WHERE id = $1 AND tenant_id = $2", Some(1), &[s.into(), tenant.as_str().into()])
                .unwrap_or_else(|e| error!("memory_fabric: cannot read consents: {e}"))
                .into_iter()
                .next()
                .and_then(|r| col::<String>(&r, 1));
            match found {
                None => raise(Error::new(Kind::NotFound, format!("consent \"{s}\" does not exist"))),
                Some(prev) if prev != subject => raise(
                    Error::invalid(format!("consent \"{s}\" is for another subject"))
                        .detail(format!("It is for \"{prev}\"; a consent only supersedes one of the same subject.")),
                ),
                _ => {}
            }
        }
        let id = new_id("cns");
        let p = plan(client, CONSENT_INSERT, &[TEXT, TEXT, TEXT, TEXT, TEXT_ARRAY, TEXT_ARRAY, TEXT, TIMESTAMPTZ, TEXT, TEXT, TEXT], true);
        client
            .update(
                &*p,
                None,
                &[
                    id.as_str().into(),
                    tenant.as_str().into(),
                    subject.as_str().into(),
                    purpose.as_str().into(),
                    predicates.into(),
                    classifications.into(),
                    basis.as_str().into(),
                    valid_until.into(),
                    refs.into(),
                    auditor_id.into(),
                    supersedes.into(),
                ],
            )
            .unwrap_or_else(|e| error!("memory_fabric: cannot record consent: {e}"));
        events::emit(client, &tenant, "memory.consent_recorded", &id, None, json!({"subject": subject, "purpose": purpose, "supersedes": supersedes}));
        id
    })
}

const CONSENT_OF: &str = "SELECT tenant_id, revoked_at IS NOT NULL FROM memory_fabric.consents WHERE id = $1";
const CONSENT_REVOKE: &str = "UPDATE memory_fabric.consents SET revoked_at = pg_catalog.clock_timestamp(), revoked_by = $2, \
     revocation_reason = $3 WHERE id = $1";
const RETRACT_DEPENDENT: &str = "UPDATE memory_fabric.promoted_memory SET retracted_at = pg_catalog.clock_timestamp(), \
     retracted_by = $2, retraction_reason = 'consent_revoked' WHERE consent_id = $1 AND retracted_at IS NULL RETURNING id";

/// Revokes a consent (write-once) and, in the same transaction, retracts every live memory that
/// depended on it. Recall already hides them from the revocation instant, even without this pass.
#[pg_extern(volatile, parallel_unsafe)]
fn _revoke_consent(consent_id: Option<&str>, reason: Option<&str>) -> String {
    let id = require_text("consent_id", consent_id);
    let reason = crate::args::require_reason("reason", reason);
    Spi::connect_mut(|client| {
        crate::xact::lock(client, &format!("consent:{id}"));
        let found = client
            .select(&*plan(client, CONSENT_OF, &[TEXT], false), Some(1), &[id.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot read consent: {e}"))
            .into_iter()
            .next()
            .map(|r| (col::<String>(&r, 1).unwrap_or_default(), col::<bool>(&r, 2).unwrap_or(false)));
        let not_found = || Error::new(Kind::NotFound, format!("consent \"{id}\" does not exist"));
        let Some((tenant, revoked)) = found else {
            raise(not_found());
        };
        crate::security::require_row_tenant(client, &tenant, not_found);
        if revoked {
            raise(Error::wrong_state(format!("consent \"{id}\" is already revoked")));
        }
        let by = caller_name(client);
        client
            .update(&*plan(client, CONSENT_REVOKE, &[TEXT, TEXT, TEXT], true), None, &[id.as_str().into(), by.as_str().into(), reason.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot revoke consent: {e}"));
        let retracted: Vec<String> = client
            .update(&*plan(client, RETRACT_DEPENDENT, &[TEXT, TEXT], true), None, &[id.as_str().into(), by.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot retract dependent memories: {e}"))
            .filter_map(|r| col::<String>(&r, 1))
            .collect();
        for m in &retracted {
            events::emit(client, &tenant, "memory.retracted", m, Some(&by), json!({"reason": "consent_revoked", "consent_id": id}));
        }
        events::emit(client, &tenant, "memory.consent_revoked", &id, Some(&by), json!({"reason": reason, "retracted": retracted.len(), "memories": retracted}));
        id
    })
}

// From the sequence; past the newest version if rows were written around set_policy() (a
// restore, the owner's own INSERT), which the unique version then keeps apart.
const POLICY_NEXT: &str = "SELECT GREATEST(pg_catalog.nextval('memory_fabric.policy_versions'), \
     (SELECT pg_catalog.max(version) + 1 FROM memory_fabric.policies))::integer";
const POLICY_INSERT: &str = "INSERT INTO memory_fabric.policies (tenant_id, version, body, created_by, note) \
     VALUES ($1, $2, $3::jsonb, $4, $5)";
const POLICY_BODY: &str = "SELECT body::text FROM memory_fabric.policies WHERE version = $1";

/// Writes a new policy version for a tenant ('*': the default): the policy in force with the
/// patch merged in, validated (and its redaction rules compiled) before it is written.
#[pg_extern(volatile, parallel_unsafe)]
fn _set_policy(tenant_id: Option<&str>, patch: Option<&str>, note: Option<&str>) -> i32 {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let note = crate::args::require_note("note", note);
    if let Some(p) = patch.filter(|p| p.len() > PATCH_MAX) {
        raise(Error::limit("patch is too large").detail(format!("It has {} bytes; at most {PATCH_MAX} are allowed.", p.len())));
    }
    let patch: serde_json::Value = serde_json::from_str(patch.unwrap_or("null"))
        .unwrap_or_else(|_| raise(Error::invalid("patch is not valid JSON")));
    if !patch.is_object() {
        raise(Error::invalid("patch must be a JSON object").hint("Pass the keys to change, e.g. '{\"trust\": {\"min_confidence\": 0.6}}'."));
    }
    Spi::connect_mut(|client| {
        if tenant == "*" && !crate::security::caller_is_administrator(client) {
            raise(Error::new(Kind::Privilege, "only a superuser or the extension's owner can change the default policy ('*')"));
        }
        require_tenant(client, &tenant);
        // One change at a time per tenant: versions come from a sequence, so tenants never wait
        // for each other.
        crate::xact::lock(client, &format!("policies:{tenant}"));
        let current = policy::current_version(client, &tenant);
        let mut body: serde_json::Value = client
            .select(&*plan(client, POLICY_BODY, &[INT4], false), Some(1), &[current.into()])
            .and_then(|t| t.first().get_one::<String>())
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or_else(Policy::default_json);
        merge(&mut body, &patch);
        let parsed = Policy::from_json(&body).or_raise();
        Redactor::new(parsed.default_redaction, &parsed.redaction_rules).or_raise();
        let version: i32 = client
            .select(POLICY_NEXT, Some(1), &[])
            .and_then(|t| t.first().get_one::<i32>())
            .unwrap_or_else(|e| error!("memory_fabric: cannot number the policy version: {e}"))
            .unwrap_or_else(|| error!("memory_fabric: cannot number the policy version"));
        let by = caller_name(client);
        client
            .update(
                &*plan(client, POLICY_INSERT, &[TEXT, INT4, TEXT, TEXT, TEXT], true),
                None,
                &[tenant.as_str().into(), version.into(), body.to_string().as_str().into(), by.as_str().into(), note.into()],
            )
            .unwrap_or_else(|e| error!("memory_fabric: cannot write policy: {e}"));
        events::emit(client, &tenant, "memory.policy_changed", &format!("policy:{version}"), Some(&by), json!({"version": version, "patch": patch}));
        version
    })
}

const ERASE_CANDIDATES: &str = "UPDATE memory_fabric.candidates SET erased_at = $3, \
     text = '[erased]', value = NULL, embedding = NULL, metadata = '{}' \
     WHERE tenant_id = $1 AND (user_id = $2 OR entity = $2) AND erased_at IS NULL RETURNING id";
const ERASE_MEMORIES: &str = "UPDATE memory_fabric.promoted_memory SET erased_at = $4, \
     text = '[erased]', value = NULL, embedding = NULL, \
     retracted_at = coalesce(retracted_at, $4), retracted_by = coalesce(retracted_by, $3), \
     retraction_reason = coalesce(retraction_reason, 'erased') \
     WHERE tenant_id = $1 AND (user_id = $2 OR entity = $2) AND erased_at IS NULL RETURNING id";

/// Erasure: every candidate and memory of a subject (its user_id, or its entity) keeps its id,
/// timestamps, hash and audit trail, and loses its content (text, value, embedding, metadata) to
/// a tombstone. Live memories are retracted with it. Returns (candidates, memories) erased.
#[pg_extern(volatile, parallel_unsafe)]
fn _forget_subject(tenant_id: Option<&str>, user_id: Option<&str>, reason: Option<&str>) -> Vec<i64> {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let subject = require_text("user_id", user_id);
    let reason = crate::args::require_reason("reason", reason);
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        crate::xact::lock(client, &format!("subject:{tenant}:{subject}"));
        let by = caller_name(client);
        // One instant for the whole erasure, so its history reads in a stable order.
        let at = crate::xact::clock(client);
        let cands = client
            .update(&*plan(client, ERASE_CANDIDATES, &[TEXT, TEXT, TIMESTAMPTZ], true), None, &[tenant.as_str().into(), subject.as_str().into(), at.into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot erase candidates: {e}"))
            .len() as i64;
        let mems = client
            .update(&*plan(client, ERASE_MEMORIES, &[TEXT, TEXT, TEXT, TIMESTAMPTZ], true), None, &[tenant.as_str().into(), subject.as_str().into(), by.as_str().into(), at.into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot erase memories: {e}"))
            .len() as i64;
        events::emit(client, &tenant, "memory.erased", &format!("subject:{subject}"), Some(&by),
                     json!({"reason": reason, "candidates": cands, "memories": mems}));
        vec![cands, mems]
    })
}

/// Expiry purging: memories expired longer ago than their write class's retention lose their
/// content (and their candidates') to a tombstone, in batches, in this one transaction. Returns
/// how many memories. (memory_fabric.purge_expired_memories() commits after each batch instead.)
#[pg_extern(volatile, parallel_unsafe)]
fn _purge_expired(tenant_id: Option<&str>, batch_size: Option<i32>) -> i64 {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let batch = crate::api::maintenance::require_batch(batch_size, 1000);
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        crate::api::maintenance::purge_all(client, &tenant, batch)
    })
}

const LOG: &str = "INSERT INTO memory_fabric.recall_log (id, tenant_id, role_name, intent_id, user_id, \
     classification_allowed, query_text, as_of, max_recalls, memory_ids, scores) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// Internal, called by recall: records what it returned when memory_fabric.log_recalls is on.
/// Skipped on a hot standby (nothing can be written there). The query text is redacted first.
#[allow(clippy::too_many_arguments)]
#[pg_extern(volatile, parallel_unsafe)]
fn _log_recall(
    tenant_id: &str,
    intent_id: Option<&str>,
    user_id: Option<&str>,
    classification_allowed: Option<Vec<Option<String>>>,
    query_text: Option<&str>,
    as_of: Option<TimestampWithTimeZone>,
    max_recalls: i32,
    memory_ids: Option<Vec<Option<String>>>,
    scores: Option<Vec<Option<f64>>>,
) -> bool {
    if !gucs::LOG_RECALLS.get() || unsafe { pg_sys::RecoveryInProgress() } {
        return false;
    }
    Spi::connect_mut(|client| {
        let pol = policy::for_tenant(client, tenant_id);
        let query = query_text.map(|q| pol.redactor.redact_str(q, &mut Outcome::default()));
        let classes: Vec<String> = classification_allowed.unwrap_or_default().into_iter().flatten().collect();
        let ids: Vec<String> = memory_ids.unwrap_or_default().into_iter().flatten().collect();
        let scores: Option<Vec<f64>> = scores.map(|v| v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect());
        let p = plan(
            client,
            LOG,
            &[TEXT, TEXT, TEXT, TEXT, TEXT, TEXT_ARRAY, TEXT, TIMESTAMPTZ, INT4, TEXT_ARRAY, PgOid::BuiltIn(BuiltinOid::FLOAT8ARRAYOID)],
            true,
        );
        client
            .update(
                &*p,
                None,
                &[
                    new_id("rl").as_str().into(),
                    tenant_id.into(),
                    caller_name(client).as_str().into(),
                    intent_id.into(),
                    user_id.into(),
                    classes.into(),
                    query.as_deref().into(),
                    as_of.into(),
                    max_recalls.into(),
                    ids.into(),
                    scores.into(),
                ],
            )
            .unwrap_or_else(|e| error!("memory_fabric: cannot log recall: {e}"));
        true
    })
}

/// [classifications, write classes] that need consent under the tenant's policy (for metrics).
#[pg_extern(stable, parallel_safe)]
fn _consent_rule(tenant_id: &str) -> TableIterator<'static, (name!(classifications, Vec<String>), name!(write_classes, Vec<String>))> {
    let p = Spi::connect(|client| policy::for_tenant(client, tenant_id));
    TableIterator::once((p.policy.consent_classifications.clone(), p.policy.consent_write_classes.clone()))
}

