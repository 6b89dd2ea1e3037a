//! `memory_fabric.recall_fact()`: the memories a recall may see that state one fact, by its
//! entity and predicate, whatever their rank.

use pgrx::prelude::*;

extension_sql!(
    r#"
-- What it may see is memory_fabric._visible_memories() (sql/schema.sql), as for recall, and it
-- is checked and logged as recall is (the same helpers, src/api/recall.rs); it reads the
-- promoted_fact index. The caller's own memories come first, then the user-less ones; in each,
-- the intent's before the cross-intent ones, then by priority and promotion, newest first. No
-- query: score and relevance are NULL.
SET LOCAL client_min_messages = warning;  -- the %TYPE notices
CREATE FUNCTION memory_fabric.recall_fact(
    tenant_id              text,
    intent_id              text,
    fact_entity            text,
    fact_predicate         text,
    user_id                text        DEFAULT NULL,
    max_recalls            integer     DEFAULT 8,
    classification_allowed text[]      DEFAULT ARRAY['PUBLIC', 'INTERNAL'],
    as_of                  timestamptz DEFAULT NULL)
RETURNS TABLE (
    memory_id text, text text, tier text, priority numeric, score double precision,
    relevance double precision, recency double precision, importance double precision,
    low_confidence boolean, in_contradiction boolean, contradicts text[],
    candidate_id text, evidence_refs jsonb, source text, captured_at timestamptz, consent_id text,
    classification text, user_scope text, intent_scope text, entity text, predicate text, value jsonb,
    write_class text, confidence double precision, promoted_at timestamptz, expires_at timestamptz,
    embedding_model text)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    t timestamptz := coalesce(recall_fact.as_of, pg_catalog.clock_timestamp());
    s double precision[];
BEGIN
    IF recall_fact.tenant_id IS NULL OR pg_catalog.btrim(recall_fact.tenant_id) = '' THEN
        RAISE EXCEPTION 'tenant_id must not be null or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF recall_fact.fact_entity IS NULL OR recall_fact.fact_predicate IS NULL THEN
        RAISE EXCEPTION 'fact_entity and fact_predicate must not be null' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF recall_fact.max_recalls IS NULL OR recall_fact.max_recalls < 1 OR recall_fact.max_recalls > 1000 THEN
        RAISE EXCEPTION 'max_recalls must be between 1 and 1000' USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('%s was given.', coalesce(recall_fact.max_recalls::text, 'NULL'));
    END IF;
    IF recall_fact.classification_allowed IS NULL THEN
        RAISE EXCEPTION 'classification_allowed must not be null' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Pass an empty array to recall nothing, or the classifications this run may see.';
    END IF;
    -- the caller may act for the tenant (42501 otherwise), checked before anything is read
    s := memory_fabric._recall_settings(recall_fact.tenant_id);
    PERFORM memory_fabric._check_recall(recall_fact.tenant_id, recall_fact.user_id, recall_fact.intent_id, NULL::text, NULL::real[]);

    RETURN QUERY
    WITH res AS (
        SELECT m.id, m.text, m.tier, m.priority,
               pg_catalog.power(0.5, greatest(extract(epoch FROM t - m.promoted_at), 0) / 86400.0 / s[4]) AS rec,
               m.priority::double precision AS imp,
               (m.confidence IS NOT NULL AND m.confidence < s[6]) AS low,
               pg_catalog.cardinality(x.ids) > 0 AS conflicted, x.ids,
               m.candidate_id, m.evidence_refs, m.source, c.captured_at, m.consent_id, m.classification,
               m.user_id, m.intent_scope, m.entity, m.predicate, m.value, m.write_class, m.confidence,
               m.promoted_at, m.expires_at, m.embedding_model,
               pg_catalog.row_number() OVER (ORDER BY m.user_id IS NULL, m.intent_scope IS NULL, m.priority DESC,
                                                      m.promoted_at DESC, m.id) AS ord
        FROM memory_fabric.promoted_memory m
        JOIN memory_fabric._visible_memories(recall_fact.tenant_id, recall_fact.user_id, recall_fact.intent_id,
                                             recall_fact.classification_allowed, t) v ON v.id = m.id
        JOIN memory_fabric.candidates c ON c.id = m.candidate_id
        CROSS JOIN LATERAL (
            -- only conflicts this recall could see itself
            SELECT coalesce(array_agg(o.id ORDER BY o.id), '{}') AS ids
            FROM memory_fabric._visible_memories(recall_fact.tenant_id, recall_fact.user_id, recall_fact.intent_id,
                                                 recall_fact.classification_allowed, t) o
            WHERE o.id = m.contradicts_id OR o.contradicts_id = m.id) x
        WHERE m.tenant_id = recall_fact.tenant_id AND m.entity = recall_fact.fact_entity AND m.predicate = recall_fact.fact_predicate
        ORDER BY ord
        LIMIT recall_fact.max_recalls
    ), logged AS (
        -- one row whatever res holds; writes only when memory_fabric.log_recalls is on
        SELECT memory_fabric._log_recall(recall_fact.tenant_id, recall_fact.intent_id, recall_fact.user_id,
                   recall_fact.classification_allowed, NULL, recall_fact.as_of, recall_fact.max_recalls,
                   coalesce(array_agg(r.id ORDER BY r.ord), '{}'), NULL) AS done
        FROM res r
    )
    SELECT r.id, r.text, r.tier, r.priority, NULL::double precision, NULL::double precision, r.rec, r.imp, r.low,
           r.conflicted, r.ids, r.candidate_id, r.evidence_refs, r.source, r.captured_at, r.consent_id,
           r.classification, r.user_id, r.intent_scope, r.entity, r.predicate, r.value, r.write_class,
           r.confidence, r.promoted_at, r.expires_at, r.embedding_model
    FROM logged LEFT JOIN res r ON true
    WHERE r.id IS NOT NULL
    ORDER BY r.ord;
END
$$;
COMMENT ON FUNCTION memory_fabric.recall_fact IS
    'Recall the promoted memories that state one fact (entity, predicate) for a tenant, user, intent and classification set, now or as of an instant';
REVOKE ALL ON FUNCTION memory_fabric.recall_fact FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.recall_fact TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "recall_fact",
    requires = ["recall"],
);
