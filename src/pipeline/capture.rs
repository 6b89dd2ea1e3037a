//! Stage 1, capture: validate, redact, hash, embed and append one candidate.

use crate::embedder::{embed_with_function, registered_dimensions};
use crate::error::{raise, OrRaise};
use crate::ids::new_id;
use crate::gucs;
use crate::policy;
use crate::spi::{plan, FLOAT4_ARRAY, FLOAT8, INT4, TEXT, TEXT_ARRAY};
use memory_fabric_core::capture::{check_embedding, prepare_capture, CaptureInput};
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

const INSERT: &str = "INSERT INTO memory_fabric.candidates \
    (id, tenant_id, user_id, intent_id, source, text, evidence_refs, classification, entity, \
     predicate, value, write_class, confidence, actor, embedding, embedding_model, content_hash, \
     supersedes, metadata, redaction_count, redaction_rules, policy_version, captured_by) \
    VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11::jsonb, $12, $13, $14, $15, $16, \
            $17, $18, $19::jsonb, $20, $21, $22, pg_catalog.pg_get_userbyid($23))";

const SUPERSEDES_EXISTS: &str = "SELECT EXISTS (SELECT 1 FROM memory_fabric.candidates WHERE id = $1 AND tenant_id = $2) \
     OR EXISTS (SELECT 1 FROM memory_fabric.promoted_memory WHERE id = $1 AND tenant_id = $2)";

fn require_utf8() {
    if unsafe { pg_sys::GetDatabaseEncoding() } != pg_sys::pg_enc::PG_UTF8 as i32 {
        raise(Error::wrong_state("memory_fabric requires a UTF8 database")
            .detail("Redaction and embedding work on Unicode text."));
    }
}

/// Validates, redacts, embeds and appends one candidate; returns its id. Nothing is written if
/// any check fails.
pub fn capture(client: &mut SpiClient<'_>, input: &CaptureInput<'_>, caller_vec: Option<Vec<f32>>) -> String {
    require_utf8();
    let Some(tenant) = input.tenant_id else {
        raise(Error::invalid("tenant_id must not be null"));
    };
    let (user_id, intent_id, source, classification, entity, predicate, write_class, confidence, actor, embedding_model, supersedes) = (
        input.user_id, input.intent_id, input.source, input.classification, input.entity, input.predicate,
        input.write_class, input.confidence, input.actor, input.embedding_model, input.supersedes,
    );
    let pol = policy::for_tenant(client, tenant);
    let prepared = prepare_capture(input, &pol.policy, &pol.redactor).or_raise();
    let max_dims = pol.policy.limits.embedding_max_dimensions;

    let (vector, model) = match (caller_vec, embedding_model) {
        // A caller's vector only of a model a tenant admin registered: review compares memories
        // by these vectors, so no caller may name a model of its own choosing.
        (Some(v), Some(m)) => {
            check_embedding(&v, None, max_dims).or_raise();
            let Some(d) = crate::embedder::registered_for_callers(client, tenant, m) else {
                raise(Error::invalid(format!("embedding model \"{m}\" is not registered for tenant \"{tenant}\""))
                    .detail("A caller's vectors are accepted only for a model a tenant admin registered: review compares memories by them.")
                    .hint("A tenant admin registers it with memory_fabric.register_embedding_model(); or leave embedding and embedding_model out to use the configured embedder."));
            };
            check_embedding(&v, Some(d as usize), max_dims).or_raise();
            (v, m.to_owned())
        }
        _ => match gucs::get(&gucs::EMBEDDING_FUNCTION) {
            Some(func) => {
                let (v, m) = embed_with_function(client, &func, &prepared.text);
                check_embedding(&v, None, max_dims).or_raise();
                let d = registered_dimensions(client, tenant, &m, v.len() as i32);
                check_embedding(&v, Some(d as usize), max_dims).or_raise();
                (v, m)
            }
            // The redacted text is embedded: nothing of what redaction removed survives.
            None => {
                let (v, m) = crate::embedder::embed_builtin(&prepared.text);
                (v, m.to_owned())
            }
        },
    };

    if let Some(s) = supersedes {
        let exists = client
            .select(&*plan(client, SUPERSEDES_EXISTS, &[TEXT, TEXT], false), Some(1), &[s.into(), tenant.into()])
            .and_then(|t| t.first().get_one::<bool>())
            .unwrap_or_else(|e| error!("memory_fabric: cannot look up supersedes: {e}"));
        if exists != Some(true) {
            raise(Error::new(Kind::NotFound, format!("supersedes \"{s}\" does not exist"))
                .detail(format!("No candidate or promoted memory with that id belongs to tenant \"{tenant}\".")));
        }
    }

    let id = new_id("mc");
    let ins = plan(
        client,
        INSERT,
        &[
            TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, FLOAT8, TEXT,
            FLOAT4_ARRAY, TEXT, TEXT, TEXT, TEXT, INT4, TEXT_ARRAY, INT4, crate::spi::OID,
        ],
        true,
    );
    client
        .update(
            &*ins,
            None,
            &[
                id.as_str().into(),
                tenant.into(),
                user_id.into(),
                intent_id.into(),
                source.into(),
                prepared.text.as_str().into(),
                prepared.evidence_refs.as_str().into(),
                classification.into(),
                entity.into(),
                predicate.into(),
                prepared.value.as_deref().into(),
                write_class.into(),
                confidence.into(),
                actor.into(),
                vector.into(),
                model.as_str().into(),
                prepared.content_hash.as_str().into(),
                supersedes.into(),
                prepared.metadata.as_str().into(),
                (prepared.redaction.count.min(i32::MAX as usize) as i32).into(),
                prepared.redaction.rules.clone().into(),
                pol.version.into(),
                crate::role::caller().into(),
            ],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot insert candidate: {e}"));
    id
}
