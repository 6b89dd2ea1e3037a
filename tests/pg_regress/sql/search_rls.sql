-- Review's nearest-neighbour search, run by ordinary roles under row-level security, finds the
-- same memory as an exact scan run by the owner: for a large tenant, and for a tenant with three
-- memories inside a table of 700 others, with the HNSW path forced.
\set SHOW_CONTEXT never
DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['regress_big', 'regress_small'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN EXECUTE format('DROP ROLE %I', r); END IF;
        EXECUTE format('CREATE ROLE %I IN ROLE memory_fabric_agent', r);
    END LOOP;
END $$;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_big', 't_nn_big') a, memory_fabric.grant_tenant('regress_small', 't_nn_small') b;

-- Memories in bulk: captured through the function, promotion rows written directly by the owner.
SELECT count(*) FROM generate_series(0, 699) i,
    memory_fabric.capture_memory('t_nn_big',
        format('Customer cust_%s prefers %s for %s updates', i,
               (ARRAY['email','phone','sms','post','chat','fax'])[i % 6 + 1],
               (ARRAY['billing','shipping','returns','outages','renewals','security','invoices'])[(i / 6) % 7 + 1]),
        'agent', 'INTERNAL');
SELECT count(*) FROM unnest(ARRAY['The Lisbon warehouse ships on weekdays', 'Refunds above 500 euros need a manager',
                                  'Customer cust_3 prefers sms for billing updates']) t,
    memory_fabric.capture_memory('t_nn_small', t, 'agent', 'INTERNAL');
INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
SELECT 'rv_' || substr(c.id, 4), c.tenant_id, c.id, 'pending_promotion', 'semantic', 0.5, 'auto', 1
FROM memory_fabric.candidates c WHERE c.tenant_id IN ('t_nn_big', 't_nn_small');
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
                                           priority, embedding, embedding_model, content_hash, promoted_by)
SELECT 'pm_' || substr(c.id, 4), c.id, 'rv_' || substr(c.id, 4), c.tenant_id, c.text, c.classification, c.source,
       'semantic', 0.5, c.embedding, c.embedding_model, c.content_hash, 'bulk'
FROM memory_fabric.candidates c WHERE c.tenant_id IN ('t_nn_big', 't_nn_small');
ANALYZE memory_fabric.promoted_memory;

-- Probes: near-duplicates (punctuation added) and one contradiction (the same customer, negated;
-- another customer's preference would be no contradiction: identifiers are subjects),
-- reviewed by the tenant's own role through the index; the memory each verdict points at is
-- compared with the owner's exact answer.
CREATE TEMP TABLE probes (tenant text, role text, text text, candidate text, reviewed_as text);
INSERT INTO probes (tenant, role, text) VALUES
    ('t_nn_big', 'regress_big', 'Customer cust_42 prefers email for billing updates!'),
    ('t_nn_big', 'regress_big', 'Customer cust_699 prefers post for renewals updates.'),
    ('t_nn_big', 'regress_big', 'Customer cust_42 does not prefer email for billing updates!'),
    ('t_nn_small', 'regress_small', 'Customer cust_3 prefers sms for billing updates!'),
    ('t_nn_small', 'regress_small', 'The Lisbon warehouse ships on weekdays.');
GRANT ALL ON probes TO PUBLIC;
CREATE FUNCTION pg_temp.probe(p_text text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE c text; r memory_fabric.reviews;
BEGIN
    SELECT id INTO c FROM memory_fabric.capture_memory(current_setting('memory_fabric.tenant_id'), p_text, 'agent', 'INTERNAL');
    r := memory_fabric.review_candidate(c);
    UPDATE probes SET candidate = c, reviewed_as = coalesce(r.duplicate_of_id, r.contradicts_id, r.status) WHERE text = p_text;
    RETURN r.status;
END $$;
GRANT EXECUTE ON FUNCTION pg_temp.probe(text) TO PUBLIC;
SET memory_fabric.exact_search_limit = 0;
SET ROLE regress_big;
SET memory_fabric.tenant_id = 't_nn_big';
SELECT text, pg_temp.probe(text) FROM probes WHERE role = 'regress_big' ORDER BY text;
-- the same role reads none of the tables it searched
SELECT public.regress_try('SELECT count(*) FROM memory_fabric.promoted_memory') AS direct_read;
SET ROLE regress_small;
SET memory_fabric.tenant_id = 't_nn_small';
SELECT text, pg_temp.probe(text) FROM probes WHERE role = 'regress_small' ORDER BY text;
RESET ROLE;
RESET memory_fabric.tenant_id;
RESET memory_fabric.exact_search_limit;

-- The owner's exact scan: the nearest live memory in the same tenant, without any index.
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT p.tenant, p.text,
       p.reviewed_as = (SELECT m.id FROM memory_fabric.promoted_memory m
                        WHERE m.tenant_id = p.tenant AND m.retracted_at IS NULL
                        ORDER BY m.embedding <=> c.embedding, m.id LIMIT 1) AS same_as_exact_scan
FROM probes p JOIN memory_fabric.candidates c ON c.id = p.candidate
ORDER BY p.tenant, p.text;
RESET enable_indexscan;
RESET enable_bitmapscan;

DROP ROLE regress_big;
DROP ROLE regress_small;
