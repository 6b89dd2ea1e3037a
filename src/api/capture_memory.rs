//! `memory_fabric.capture_memory()`: capture anything into the append-only candidates log.

use crate::pipeline::capture::capture;
use crate::error::raise;
use memory_fabric_core::capture::CaptureInput;
use memory_fabric_core::Error;
use pgrx::prelude::*;

/// Internal: the body of memory_fabric.capture_memory(). Returns the new candidate's id.
#[allow(clippy::too_many_arguments)]
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _capture(
    tenant_id: Option<&str>,
    text: Option<&str>,
    source: Option<&str>,
    classification: Option<&str>,
    user_id: Option<&str>,
    intent_id: Option<&str>,
    evidence_refs: Option<&str>,
    entity: Option<&str>,
    predicate: Option<&str>,
    value: Option<&str>,
    write_class: Option<&str>,
    confidence: Option<f64>,
    actor: Option<&str>,
    embedding: Option<pgrx::Array<f32>>,
    embedding_model: Option<&str>,
    supersedes: Option<&str>,
    metadata: Option<&str>,
) -> String {
    let caller_vec: Option<Vec<f32>> = embedding.map(|a| {
        a.iter()
            .enumerate()
            .map(|(i, x)| {
                x.unwrap_or_else(|| {
                    raise(Error::invalid("embedding must not contain NULL").detail(format!("Element {} is NULL.", i + 1)))
                })
            })
            .collect()
    });
    let input = CaptureInput {
        tenant_id,
        text,
        source,
        classification,
        user_id,
        intent_id,
        evidence_refs,
        entity,
        predicate,
        value,
        write_class,
        confidence,
        actor,
        embedding_model,
        has_embedding: caller_vec.is_some(),
        supersedes,
        metadata,
    };

    Spi::connect_mut(|client| {
        if let Some(t) = tenant_id {
            // one spelling per tenant (22023), before the grant check names it
            crate::args::require_tenant_id(Some(t));
            crate::security::require_tenant(client, t);
        }
        if let Some(a) = actor {
            crate::args::require_name("actor", Some(a));
        }
        crate::security::require_intent(intent_id, true);
        // Which sources the caller's grants let it claim: an agent cannot pass as an operator
        // or the system, whose memories outrank and supersede its own.
        if let Some(s) = source {
            crate::security::require_source_claim(client, s);
        }
        if write_class == Some("correction") {
            crate::security::require_correction_writer(client);
        }
        capture(client, &input, caller_vec)
    })
}

extension_sql!(
    r#"
SET LOCAL client_min_messages = warning;  -- the %TYPE notice
CREATE FUNCTION memory_fabric.capture_memory(
    tenant_id       text,
    text            text,
    source          text,
    classification  text,
    user_id         text             DEFAULT NULL,
    intent_id       text             DEFAULT NULL,
    evidence_refs   jsonb            DEFAULT '[]',
    entity          text             DEFAULT NULL,
    predicate       text             DEFAULT NULL,
    value           jsonb            DEFAULT NULL,
    write_class     text             DEFAULT NULL,
    confidence      double precision DEFAULT NULL,
    actor           text             DEFAULT NULL,
    embedding       memory_fabric.candidates.embedding%TYPE DEFAULT NULL,
    embedding_model text             DEFAULT NULL,
    supersedes      text             DEFAULT NULL,
    metadata        jsonb            DEFAULT '{}'
) RETURNS memory_fabric.candidates
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    v_id  text;
    v_row memory_fabric.candidates;
BEGIN
    v_id := memory_fabric._capture(
        capture_memory.tenant_id, capture_memory.text, capture_memory.source,
        capture_memory.classification, capture_memory.user_id, capture_memory.intent_id,
        capture_memory.evidence_refs::text, capture_memory.entity, capture_memory.predicate,
        capture_memory.value::text, capture_memory.write_class, capture_memory.confidence,
        capture_memory.actor, capture_memory.embedding::real[], capture_memory.embedding_model,
        capture_memory.supersedes, capture_memory.metadata::text);
    SELECT * INTO STRICT v_row FROM memory_fabric.candidates AS c WHERE c.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.capture_memory IS
    'Capture anything into the append-only candidates log: validated, redacted, hashed, embedded';
REVOKE ALL ON FUNCTION memory_fabric.capture_memory, memory_fabric._capture FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.capture_memory TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "capture_memory",
    requires = [_capture],
);
