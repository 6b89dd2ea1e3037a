-- Good captures: what is stored, redacted before write, hashed and embedded.

-- The seed 000 worked example: an operator correction about a customer.
SELECT id ~ '^mc_[0-9]{8}t[0-9]{6}_[0-9a-z]{12}$' AS id_ok,
       tenant_id, user_id, intent_id, source, text, evidence_refs, classification,
       embedding_model, vector_dims(embedding) AS dims,
       round(vector_norm(embedding)::numeric, 5) AS norm,
       content_hash ~ '^[0-9a-f]{64}$' AS hash_ok,
       redaction_count, redaction_rules, policy_version,
       metadata, supersedes, captured_at <= clock_timestamp() AS captured_ok
FROM memory_fabric.capture_memory(
    tenant_id      => 'tenant_acme_prod',
    user_id        => 'cust_8861',
    intent_id      => 'support.refund.execute',
    source         => 'operator',
    text           => 'Customer cust_8861 has a verbal NDA limiting PAN exposure to last-4 only.',
    evidence_refs  => '["operator:override:fb_2026_05_09_x9"]',
    classification => 'PII');

-- A card number is stored redacted; the unredacted text exists nowhere.
SELECT text, redaction_count, redaction_rules
FROM memory_fabric.capture_memory('tenant_acme_prod',
    'Customer paid with 4111 1111 1111 1111 (exp 12/29), then 5500-0000-0000-0004.',
    'agent', 'PII', user_id => 'cust_8861');
SELECT count(*) AS stored_card_digits
FROM memory_fabric.candidates
WHERE text ~ '4111|5500' OR value::text ~ '4111' OR metadata::text ~ '4111';

-- Secrets in the text, the structured value, the metadata and the evidence refs.
SELECT text, value, metadata, evidence_refs, redaction_count, redaction_rules
FROM memory_fabric.capture_memory(
    tenant_id      => 'tenant_acme_prod',
    text           => 'Deploy key AKIAIOSFODNN7EXAMPLE, db postgres://app:hunter2@db/x',
    source         => 'system',
    classification => 'INTERNAL',
    entity         => 'service:billing',
    predicate      => 'credentials',
    value          => '{"api_key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "pan": 4111111111111111, "port": 5432}',
    metadata       => '{"note": "password=hunter2"}',
    evidence_refs  => '["https://ops:s3cret@wiki.example/page"]');

-- A structured fact with every optional argument.
SELECT entity, predicate, value, write_class, confidence, actor, source, classification,
       intent_id, user_id
FROM memory_fabric.capture_memory(
    tenant_id      => 'tenant_acme_prod',
    user_id        => 'cus_77',
    intent_id      => 'support.personalization',
    text           => 'Customer cus_77 prefers email.',
    source         => 'agent',
    classification => 'INTERNAL',
    entity         => 'customer:cus_77',
    predicate      => 'prefers_communication_channel',
    value          => '"email"',
    write_class    => 'preference',
    confidence     => 0.93,
    actor          => 'agent:support-bot',
    evidence_refs  => '["tool:crm.lookup:tc_212", "session:sess_42f1"]',
    metadata       => '{"turn": 14}');

-- The built-in embedder is deterministic: same text, same vector and hash; the hash ignores
-- case and spacing.
SELECT count(DISTINCT embedding::text) AS vectors, count(DISTINCT content_hash) AS hashes
FROM (
    SELECT * FROM memory_fabric.capture_memory('tenant_det', 'Returns accepted within 30 days.', 'agent', 'PUBLIC')
    UNION ALL
    SELECT * FROM memory_fabric.capture_memory('tenant_det', 'Returns accepted within 30 days.', 'agent', 'PUBLIC')
) s;
SELECT count(DISTINCT content_hash) AS hashes
FROM (
    SELECT * FROM memory_fabric.capture_memory('tenant_det', '  RETURNS accepted   within 30 days.', 'agent', 'PUBLIC')
    UNION ALL
    SELECT * FROM memory_fabric.capture_memory('tenant_det', 'Returns accepted within 30 days.', 'agent', 'PUBLIC')
) s;

-- The caller's own vector and model: accepted once a tenant admin registered the model (0.16.0;
-- review compares memories by these vectors), whose dimension registration fixes.
SELECT memory_fabric.capture_memory('tenant_acme_prod', 'Vector from the application.', 'agent', 'PUBLIC',
                                    embedding => '[0.1, 0.2, 0.3]', embedding_model => 'app-embed-3d');
SELECT tenant_id, model, dimensions, registered_by IS NOT NULL AS registered
FROM memory_fabric.register_embedding_model('tenant_acme_prod', 'app-embed-3d', 3);
-- again: the same row
SELECT tenant_id, model, dimensions FROM memory_fabric.register_embedding_model('tenant_acme_prod', 'app-embed-3d', 3);
SELECT embedding, embedding_model
FROM memory_fabric.capture_memory('tenant_acme_prod', 'Vector from the application.', 'agent', 'PUBLIC',
                                  embedding => '[0.1, 0.2, 0.3]', embedding_model => 'app-embed-3d');
SELECT tenant_id, model, dimensions FROM memory_fabric.embedding_models ORDER BY 1, 2;

-- A SQL embedding function named by memory_fabric.embedding_function (superuser-only setting).
-- It runs inside functions whose search_path is pinned, so it sets its own.
CREATE FUNCTION public.regress_toy_embed(t text) RETURNS vector
LANGUAGE sql IMMUTABLE SET search_path = public, pg_catalog AS $$ SELECT ARRAY[length(t), 1, 2]::real[]::vector $$;
SET memory_fabric.embedding_function = 'public.regress_toy_embed';
SELECT embedding, embedding_model
FROM memory_fabric.capture_memory('tenant_fn', 'twelve chars', 'agent', 'PUBLIC');
SET memory_fabric.embedding_model = 'toy-v1';
-- The function sees the redacted text: 69 characters, where the raw text has 62.
SELECT embedding, embedding_model
FROM memory_fabric.capture_memory('tenant_fn', 'embedded by the toy function, redacted first: 4111111111111111', 'agent', 'PUBLIC');
RESET memory_fabric.embedding_function;
RESET memory_fabric.embedding_model;
SELECT embedding_model FROM memory_fabric.capture_memory('tenant_fn', 'back to built-in', 'agent', 'PUBLIC');

-- Hostile-looking text is stored verbatim, never interpreted.
SELECT text = E'o''brien $$ DROP TABLE x; $$ \\x00 \\ "q" -- /* */' AS verbatim, redaction_count
FROM memory_fabric.capture_memory('tenant_acme_prod', E'o''brien $$ DROP TABLE x; $$ \\x00 \\ "q" -- /* */',
                                  'agent', 'PUBLIC', user_id => E'u''; DROP TABLE memory_fabric.candidates; --');
SELECT count(*) > 0 AS candidates_table_still_there FROM memory_fabric.candidates;

-- supersedes may name an earlier candidate of the same tenant.
SELECT supersedes IS NOT NULL AS has_supersedes
FROM memory_fabric.capture_memory('tenant_det', 'Returns accepted within 45 days.', 'operator', 'PUBLIC',
    supersedes => (SELECT min(id) FROM memory_fabric.candidates WHERE tenant_id = 'tenant_det'));

-- A tenant's own policy: its classifications and its redaction rules apply to it alone.
INSERT INTO memory_fabric.policies (tenant_id, version, body)
VALUES ('tenant_strict', 2, '{"classifications": ["PUBLIC"],
        "redaction": {"rules": [{"name": "ticket", "pattern": "TCK-[0-9]+"}]}}');
SELECT text, redaction_rules, policy_version
FROM memory_fabric.capture_memory('tenant_strict', 'See TCK-1234 for card 4111111111111111.', 'agent', 'PUBLIC');
SELECT text, redaction_rules, policy_version
FROM memory_fabric.capture_memory('tenant_other', 'See TCK-1234.', 'agent', 'PII');

SELECT tenant_id, count(*) FROM memory_fabric.candidates GROUP BY 1 ORDER BY 1;
