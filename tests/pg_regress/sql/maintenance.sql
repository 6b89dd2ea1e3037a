-- Long maintenance operations: re-embedding a tenant's memories with a new embedding model, and
-- purging expired content, as procedures that commit after every batch and report each batch.
-- (Cancelling one part-way and resuming it: tests/tap/t/004_maintenance.pl.)
\set SHOW_CONTEXT never
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_maint_admin') THEN DROP ROLE regress_maint_admin; END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_maint_agent') THEN DROP ROLE regress_maint_agent; END IF;
END $$;
CREATE ROLE regress_maint_admin IN ROLE memory_fabric_admin;
CREATE ROLE regress_maint_agent IN ROLE memory_fabric_agent;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_maint_admin', 't_maint');
SELECT count(*) FROM memory_fabric.grant_tenant('regress_maint_agent', 't_maint');
SELECT count(*) FROM memory_fabric.grant_tenant('regress_maint_admin', 't_maint_purge');

-- capture, review and promote, as the agent; returns the memory's id
CREATE FUNCTION pg_temp.remember(tenant text, body text, usr text DEFAULT NULL, cls text DEFAULT 'INTERNAL',
                                 refs jsonb DEFAULT '[]')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    c text := (memory_fabric.capture_memory(tenant, body, 'agent', cls, user_id => usr, evidence_refs => refs)).id;
    r memory_fabric.reviews := memory_fabric.review_candidate(c);
BEGIN
    IF r.status <> 'pending_promotion' THEN RAISE EXCEPTION 'review: %', r.status; END IF;
    RETURN (memory_fabric.promote(c)).id;
END $$;
-- the new embedding model: 16 deterministic dimensions of the text (a stand-in for a real model)
CREATE FUNCTION public.regress_embed16(t text) RETURNS real[]
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog AS $$
    SELECT array_agg((abs(hashtext(t || i::text)) % 997 + 1)::real / 997 ORDER BY i) FROM generate_series(1, 16) i
$$;

SET ROLE regress_maint_agent;
SET memory_fabric.tenant_id = 't_maint';
SELECT pg_temp.remember('t_maint', 'The Lisbon depot closes at 18:00 on weekdays.') AS m1 \gset
SELECT pg_temp.remember('t_maint', 'Invoices are issued on the first business day of the month.') AS m2 \gset
SELECT pg_temp.remember('t_maint', 'Refund requests need the original order number.') AS m3 \gset
SELECT pg_temp.remember('t_maint', 'Premium support answers within four hours.') AS m4 \gset
SELECT pg_temp.remember('t_maint', 'Customer cus_gone asked for paper statements.', usr => 'cus_gone') AS m5 \gset
SELECT pg_temp.remember('t_maint', 'Warehouse B stores the returned hardware.') AS m6 \gset
RESET ROLE;
-- one memory retracted (recall as of the past still reads it), one erased (it has no vector left)
SELECT retracted_by FROM memory_fabric.retract(:'m6', 'moved to warehouse C', 'op:ana');
SELECT * FROM memory_fabric.forget_subject('t_maint', 'cus_gone', 'erasure request');
SELECT embedding_model, count(*) AS memories, count(embedding) AS with_vector
FROM memory_fabric.promoted_memory WHERE tenant_id = 't_maint' GROUP BY 1;

-- The procedures are the admin's: an agent may not run them
SET ROLE regress_maint_agent;
CALL memory_fabric.reembed_memories('t_maint');
\echo :LAST_ERROR_SQLSTATE
CALL memory_fabric.purge_expired_memories('t_maint');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- Switch the embedder (superuser-only settings), then re-embed as the tenant's admin in batches
-- of 2: a NOTICE per batch, each batch committed.
SET memory_fabric.embedding_function = 'public.regress_embed16';
SET memory_fabric.embedding_model = 'regress/embed16';
SET ROLE regress_maint_admin;
SET memory_fabric.tenant_id = 't_maint';
CALL memory_fabric.reembed_memories('t_maint', batch_size => 2);
-- run again: nothing left to do
CALL memory_fabric.reembed_memories('t_maint');
RESET ROLE;
-- every memory with a vector now has the new model's vector of its own text; the erased one
-- stays a tombstone; the candidates keep the vectors they were captured with
SELECT embedding_model, vector_dims(embedding) AS dims, count(*) AS memories,
       bool_and(embedding = public.regress_embed16(text)::vector) AS vector_of_its_text
FROM memory_fabric.promoted_memory WHERE tenant_id = 't_maint' GROUP BY 1, 2 ORDER BY 1;
SELECT embedding_model, count(*) AS candidates FROM memory_fabric.candidates WHERE tenant_id = 't_maint' GROUP BY 1;
SELECT model, dimensions FROM memory_fabric.embedding_models WHERE tenant_id = 't_maint';
-- text, ids, times and everything else unchanged: the retraction stands
SELECT id = :'m6' AS m6, retraction_reason, text FROM memory_fabric.promoted_memory
WHERE tenant_id = 't_maint' AND retracted_at IS NOT NULL ORDER BY 1;
-- one event per batch: who, from which model, how many, which memories
SELECT actor, payload -> 'from' AS from_models, payload ->> 'model' AS model, payload ->> 'count' AS n,
       jsonb_array_length(payload -> 'memories') AS ids
FROM memory_fabric.events WHERE tenant_id = 't_maint' AND kind = 'memory.reembedded' ORDER BY created_at, id;
SELECT count(DISTINCT m) AS distinct_memories_reembedded
FROM memory_fabric.events, jsonb_array_elements_text(payload -> 'memories') m
WHERE tenant_id = 't_maint' AND kind = 'memory.reembedded';
-- recall with a query now embeds it with the new model and finds the memory by its vector
SET ROLE regress_maint_agent;
SET memory_fabric.tenant_id = 't_maint';
SELECT text, embedding_model, round(relevance::numeric, 3) AS relevance
FROM memory_fabric.recall('t_maint', NULL, query_text => 'Refund requests need the original order number.', max_recalls => 1);
RESET ROLE;

-- The append-only guard allows a new vector only with another model, never after erasure, and
-- nothing else with it. Each refusal writes nothing.
CREATE TEMP TABLE before_guard AS SELECT * FROM public.regress_fingerprint();
SELECT public.regress_try(format($$UPDATE memory_fabric.promoted_memory SET embedding = %L::vector WHERE id = %L$$,
    public.regress_embed16('x')::vector, :'m1')) AS same_model_new_vector;
SELECT public.regress_try(format($$UPDATE memory_fabric.promoted_memory SET embedding_model = 'regress/other', text = 'rewritten'
    WHERE id = %L$$, :'m1')) AS new_model_and_text;
SELECT public.regress_try(format($$UPDATE memory_fabric.promoted_memory SET embedding_model = 'regress/other', embedding = NULL
    WHERE id = %L$$, :'m1')) AS new_model_no_vector;
SELECT public.regress_try(format($$UPDATE memory_fabric.promoted_memory SET embedding_model = 'regress/other',
    embedding = %L::vector WHERE id = %L$$, public.regress_embed16('x')::vector, :'m5')) AS erased_memory;
SELECT public.regress_try(format($$UPDATE memory_fabric.candidates SET embedding_model = 'regress/other',
    embedding = %L::vector WHERE id = (SELECT candidate_id FROM memory_fabric.promoted_memory WHERE id = %L)$$,
    public.regress_embed16('x')::vector, :'m1')) AS candidate_vector;
SELECT b.table_name, b.rows = a.rows AND b.hash = a.hash AS unchanged
FROM before_guard b JOIN public.regress_fingerprint() a USING (table_name) WHERE b.hash <> a.hash OR b.rows <> a.rows;

-- Refusals (each one's SQLSTATE is echoed after it): a bad batch size, another tenant, no pin; a
-- memory the function cannot embed stops the run in that batch, which writes nothing, and the
-- batches before it stay.
SET ROLE regress_maint_admin;
SET memory_fabric.tenant_id = 't_maint';
CALL memory_fabric.reembed_memories('t_maint', batch_size => 0);
\echo :LAST_ERROR_SQLSTATE
CALL memory_fabric.purge_expired_memories('t_maint', batch_size => 100001);
\echo :LAST_ERROR_SQLSTATE
CALL memory_fabric.reembed_memories('t_other');
\echo :LAST_ERROR_SQLSTATE
RESET memory_fabric.tenant_id;
CALL memory_fabric.reembed_memories('t_maint');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- a model that fails on its fourth call
CREATE SEQUENCE public.regress_embed_calls;
CREATE FUNCTION public.regress_embed16_picky(t text) RETURNS real[]
LANGUAGE sql VOLATILE SET search_path = pg_catalog AS $$
    SELECT CASE WHEN nextval('public.regress_embed_calls') = 4 THEN NULL ELSE public.regress_embed16(t || ' v2') END
$$;
SET memory_fabric.embedding_function = 'public.regress_embed16_picky';
SET memory_fabric.embedding_model = 'regress/embed16-v2';
SET ROLE regress_maint_admin;
SET memory_fabric.tenant_id = 't_maint';
-- the first batch of 3 commits; the second fails on its first memory and writes nothing
CALL memory_fabric.reembed_memories('t_maint', batch_size => 3);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT embedding_model, count(*) FROM memory_fabric.promoted_memory
WHERE tenant_id = 't_maint' AND embedding IS NOT NULL GROUP BY 1 ORDER BY 1;
-- inside a transaction block it could not commit its batches: refused before it starts
RESET memory_fabric.embedding_function;
RESET memory_fabric.embedding_model;
SET memory_fabric.tenant_id = 't_maint';
BEGIN;
CALL memory_fabric.reembed_memories('t_maint');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT embedding_model, count(*) FROM memory_fabric.promoted_memory
WHERE tenant_id = 't_maint' AND embedding IS NOT NULL GROUP BY 1 ORDER BY 1;
-- back to the built-in embedder, all of them
CALL memory_fabric.reembed_memories('t_maint', batch_size => 4);
SELECT embedding_model, count(*), bool_and(embedding = (SELECT coalesce(e.semantic, e.builtin) FROM memory_fabric._embed_query('t_maint', text) e)::vector)
       AS builtin_vector_of_its_text, bool_and(embedding_bits = binary_quantize(embedding)) AS bits_of_new_vector
FROM memory_fabric.promoted_memory WHERE tenant_id = 't_maint' AND embedding IS NOT NULL GROUP BY 1;
RESET memory_fabric.tenant_id;

-- Purging expired content in batches: working memories live 1 second here, and are purged as
-- soon as they expire.
SELECT version > 0 FROM memory_fabric.set_policy('t_maint_purge',
    '{"ttl_seconds": {"working": 1}, "retention_seconds": {"default": 0}}');
CREATE TEMP TABLE purge_ids AS
SELECT pg_temp.remember('t_maint_purge', body, cls => 'PII', refs => '["session:s-purge"]') AS id
FROM unnest(ARRAY['Caller wants a callback after lunch.', 'The parcel was left with a neighbour.',
                  'Agent promised a voucher by email.', 'Printer jam reported at the kiosk.',
                  'Password reset link expired twice.']) AS body;
SELECT pg_temp.remember('t_maint_purge', 'Opening hours are published on the website.', refs => '["session:s-keep"]') AS keep \gset
SELECT tier, count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_maint_purge' GROUP BY 1 ORDER BY 1;
CREATE TEMP TABLE purge_hashes AS SELECT id, content_hash FROM memory_fabric.promoted_memory WHERE tenant_id = 't_maint_purge';
SELECT pg_sleep(1.1);
SET ROLE regress_maint_admin;
SET memory_fabric.tenant_id = 't_maint_purge';
CALL memory_fabric.purge_expired_memories('t_maint_purge', batch_size => 2);
CALL memory_fabric.purge_expired_memories('t_maint_purge');
RESET ROLE;
-- a purged memory and its candidate keep the keyed digest of their content hash, as erasure does
SELECT m.id IN (SELECT id FROM purge_ids) AS expired, m.text, m.embedding IS NULL AS no_vector, m.erased_at IS NOT NULL AS erased,
       c.text AS candidate_text,
       c.content_hash = m.content_hash AND m.content_hash = CASE WHEN m.erased_at IS NULL THEN h.content_hash
                                                              ELSE memory_fabric._erased_digest(h.content_hash) END AS hash_kept_as_due,
       m.evidence_refs::text AS refs, c.evidence_refs::text AS candidate_refs, count(*)
FROM memory_fabric.promoted_memory m JOIN memory_fabric.candidates c ON c.id = m.candidate_id JOIN purge_hashes h ON h.id = m.id
WHERE m.tenant_id = 't_maint_purge' GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ORDER BY 1;
SELECT payload FROM memory_fabric.events WHERE tenant_id = 't_maint_purge' AND kind = 'memory.erased' ORDER BY created_at, id;
RESET memory_fabric.tenant_id;

DROP FUNCTION public.regress_embed16_picky(text);
DROP SEQUENCE public.regress_embed_calls;
DROP ROLE regress_maint_admin;
DROP ROLE regress_maint_agent;
