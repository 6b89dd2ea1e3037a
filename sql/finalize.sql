-- Runs last in the extension script, after the Rust functions exist.

-- The built-in default policy; its body comes from the Rust core (one source of defaults).
INSERT INTO memory_fabric.policies (tenant_id, version, body, created_by, note)
VALUES ('*', 1, memory_fabric._default_policy(), 'memory_fabric', 'built-in default');

-- capture_memory: the public capture function (SPEC §3). A thin PL/pgSQL shell so it can take
-- pgvector's type and return the stored row; validation, redaction, hashing, embedding and the
-- insert happen in memory_fabric._capture (Rust), and nothing is written if any check fails.
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
    embedding       vector           DEFAULT NULL,
    embedding_model text             DEFAULT NULL,
    supersedes      text             DEFAULT NULL,
    metadata        jsonb            DEFAULT '{}'
) RETURNS memory_fabric.candidates
LANGUAGE plpgsql VOLATILE
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
