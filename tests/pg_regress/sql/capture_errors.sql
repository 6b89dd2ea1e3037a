-- Every bad input to capture_memory: its error and SQLSTATE, and nothing written.
\set SHOW_CONTEXT never
INSERT INTO memory_fabric.policies (tenant_id, version, body) VALUES
    ('tenant_badrule', 3, '{"redaction": {"rules": [{"name": "broken", "pattern": "(unclosed"}]}}'),
    ('tenant_badshape', 4, '{"classifications": "PUBLIC"}');
CREATE ROLE regress_mf_plain;
CREATE TEMP TABLE before AS SELECT * FROM public.regress_fingerprint();

-- tenant_id missing (NULL)
SELECT memory_fabric.capture_memory(NULL, 'x', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- tenant_id empty
SELECT memory_fabric.capture_memory('', 'x', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- tenant_id '*' is the default policy, not a tenant
SELECT memory_fabric.capture_memory('*', 'x', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- text missing
SELECT memory_fabric.capture_memory('t_err', NULL, 'agent', 'PUBLIC');
\echo :SQLSTATE
-- text empty
SELECT memory_fabric.capture_memory('t_err', '', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- text only whitespace
SELECT memory_fabric.capture_memory('t_err', E' \n\t ', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- source missing
SELECT memory_fabric.capture_memory('t_err', 'x', NULL, 'PUBLIC');
\echo :SQLSTATE
-- source unknown
SELECT memory_fabric.capture_memory('t_err', 'x', 'user', 'PUBLIC');
\echo :SQLSTATE
-- source is case-sensitive
SELECT memory_fabric.capture_memory('t_err', 'x', 'Agent', 'PUBLIC');
\echo :SQLSTATE
-- classification missing
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', NULL);
\echo :SQLSTATE
-- classification unknown
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'SECRET');
\echo :SQLSTATE
-- classification is case-sensitive
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'pii');
\echo :SQLSTATE
-- classification not allowed by the tenant's policy
SELECT memory_fabric.capture_memory('tenant_strict', 'x', 'agent', 'PII');
\echo :SQLSTATE
-- write_class unknown
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', write_class => 'gossip');
\echo :SQLSTATE
-- confidence above 1
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', confidence => 1.5);
\echo :SQLSTATE
-- confidence below 0
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', confidence => -0.1);
\echo :SQLSTATE
-- confidence NaN
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', confidence => 'NaN');
\echo :SQLSTATE
-- confidence infinite
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', confidence => 'Infinity');
\echo :SQLSTATE
-- evidence_refs an object
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => '{}');
\echo :SQLSTATE
-- evidence_refs a string
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => '"ref"');
\echo :SQLSTATE
-- evidence_refs with a number
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => '["a", 1]');
\echo :SQLSTATE
-- evidence_refs with an empty string
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => '[""]');
\echo :SQLSTATE
-- evidence_refs with null
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => '[null]');
\echo :SQLSTATE
-- evidence_refs unparsable JSON
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => '["a"');
\echo :SQLSTATE
-- too many evidence_refs
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => (SELECT jsonb_agg('ref' || g) FROM generate_series(1, 65) g));
\echo :SQLSTATE
-- an evidence ref over the size limit
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', evidence_refs => jsonb_build_array(repeat('r', 1025)));
\echo :SQLSTATE
-- entity without predicate
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', entity => 'customer:c1');
\echo :SQLSTATE
-- predicate without entity
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', predicate => 'prefers');
\echo :SQLSTATE
-- value without entity and predicate
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', value => '"email"');
\echo :SQLSTATE
-- metadata not an object
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', metadata => '[]');
\echo :SQLSTATE
-- text over the size limit
SELECT memory_fabric.capture_memory('t_err', repeat('x', 16385), 'agent', 'PUBLIC');
\echo :SQLSTATE
-- value over the size limit
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', entity => 'e', predicate => 'p', value => to_jsonb(repeat('v', 70000)));
\echo :SQLSTATE
-- value nested too deeply
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', entity => 'e', predicate => 'p', value => (repeat('[', 200) || repeat(']', 200))::jsonb);
\echo :SQLSTATE
-- metadata over the size limit
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', metadata => jsonb_build_object('k', repeat('m', 70000)));
\echo :SQLSTATE
-- identifier over the size limit
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', user_id => repeat('u', 257));
\echo :SQLSTATE
-- identifier with a control character
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', user_id => E'cust\n8861');
\echo :SQLSTATE
-- actor empty
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', actor => '');
\echo :SQLSTATE
-- embedding without its model
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', embedding => '[1,2,3]');
\echo :SQLSTATE
-- embedding_model without embedding
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', embedding_model => 'm');
\echo :SQLSTATE
-- the built-in model's name is reserved
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', embedding => '[1,2,3]', embedding_model => 'memory_fabric/hash-384-v1');
\echo :SQLSTATE
-- embedding of the zero vector
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', embedding => '[0,0,0]', embedding_model => 'm');
\echo :SQLSTATE
-- embedding dimension differs from its model's
SELECT memory_fabric.capture_memory('tenant_acme_prod', 'x', 'agent', 'PUBLIC', embedding => '[1,2,3,4]', embedding_model => 'app-embed-3d');
\echo :SQLSTATE
-- embedding with too many dimensions
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', embedding => array_fill(1, ARRAY[2001])::real[]::vector, embedding_model => 'big');
\echo :SQLSTATE
-- embedding with NaN (refused by pgvector's input)
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', embedding => '[NaN, 1]', embedding_model => 'm');
\echo :SQLSTATE
-- embedding with infinity (refused by pgvector's input)
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', embedding => '[Infinity, 1]', embedding_model => 'm');
\echo :SQLSTATE
-- supersedes not an id
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', supersedes => 'nope');
\echo :SQLSTATE
-- supersedes an unknown candidate
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC', supersedes => 'mc_20260101t000000_000000000000');
\echo :SQLSTATE
-- supersedes another tenant's candidate
-- (the id is masked: it carries the capture time)
DO $$
BEGIN
    PERFORM memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC',
        supersedes => (SELECT min(id) FROM memory_fabric.candidates WHERE tenant_id = 'tenant_acme_prod'));
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE '%: %', SQLSTATE, regexp_replace(SQLERRM, 'mc_[0-9a-z_]+', 'mc_<id>');
END
$$;
-- embedding function that does not exist
SET memory_fabric.embedding_function = 'public.no_such_embedder';
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- a tenant policy with an invalid redaction pattern
SELECT memory_fabric.capture_memory('tenant_badrule', 'x', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- a tenant policy of the wrong shape
SELECT memory_fabric.capture_memory('tenant_badshape', 'x', 'agent', 'PUBLIC');
\echo :SQLSTATE
-- an ordinary role may not set the embedding function
SET ROLE regress_mf_plain;
SET memory_fabric.embedding_function = 'public.regress_toy_embed';
\echo :SQLSTATE
-- an ordinary role may not set the embedding model name
SET memory_fabric.embedding_model = 'fake';
\echo :SQLSTATE
RESET ROLE;
RESET memory_fabric.embedding_function;
-- a read-only transaction (as on a standby): 25006 with a clear message, for every writer
BEGIN READ ONLY;
SELECT memory_fabric.capture_memory('t_err', 'x', 'agent', 'PUBLIC');
\echo :SQLSTATE
ROLLBACK;
BEGIN READ ONLY;
SELECT memory_fabric.review_candidate((SELECT min(id) FROM memory_fabric.candidates));
\echo :SQLSTATE
ROLLBACK;
BEGIN READ ONLY;
SELECT memory_fabric.record_consent('t_err', 's', 'p', 'b');
\echo :SQLSTATE
ROLLBACK;

-- Nothing was written by any of the failed calls.
SELECT b.table_name, a.rows - b.rows AS rows_added, a.hash = b.hash AS unchanged
FROM before b JOIN public.regress_fingerprint() a USING (table_name)
ORDER BY 1;
DROP ROLE regress_mf_plain;
