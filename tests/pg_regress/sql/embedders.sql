-- The built-in embedders: the semantic model is the default where its weights are installed
-- (CI installs them), recall by text embeds with it, the hashing model stays selectable by the
-- superuser, and reembed_memories moves memories between them. Review's verdicts on sentences:
-- a paraphrase with synonyms or a change of voice is a duplicate, a negation or an antonym a
-- contradiction, a synonym or a more general word never one, a sentence that says less or more
-- is new. Run as an ordinary agent role. (The missing- and damaged-weights rules are in
-- tests/shell/model_files.sh, which can make the folders.)
\set SHOW_CONTEXT never
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_embed') THEN DROP ROLE regress_embed; END IF;
    CREATE ROLE regress_embed IN ROLE memory_fabric_agent;
END $$;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_embed', 't_embed');
SHOW memory_fabric.builtin_model;
SET ROLE regress_embed;
SET memory_fabric.tenant_id = 't_embed';
-- an ordinary role may not choose the model (review compares only vectors of one model)
SELECT public.regress_try($$SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1'$$) AS choose_model;
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('t_embed', 'x', 'agent', 'PUBLIC',
    embedding => array_fill(0.1, ARRAY[384])::vector, embedding_model => 'sentence-transformers/all-MiniLM-L6-v2')$$) AS reserved_name;

CREATE FUNCTION pg_temp.remember(t text) RETURNS text LANGUAGE sql AS $$
    SELECT m.id FROM memory_fabric.capture_memory('t_embed', t, 'agent', 'PUBLIC') c,
                     memory_fabric.review_candidate(c.id) r, memory_fabric.promote(c.id) m $$;
CREATE FUNCTION pg_temp.verdict(t text, OUT text text, OUT status text, OUT reason text, OUT model text) LANGUAGE sql AS $$
    SELECT t, r.status, r.reason, c.embedding_model
    FROM memory_fabric.capture_memory('t_embed', t, 'agent', 'PUBLIC') c, memory_fabric.review_candidate(c.id) r $$;
SELECT pg_temp.remember('The kids love the blue couch.') IS NOT NULL AS promoted;
SELECT pg_temp.remember('Alice approved the refund for order ord_5521.') IS NOT NULL AS promoted;
SELECT pg_temp.remember('Order ord_7720 ships to Lisbon on 2026-03-01.') IS NOT NULL AS promoted;
SELECT (pg_temp.verdict(t)).* FROM unnest(ARRAY[
    'The children love the blue sofa.',                          -- synonyms: a duplicate
    'The refund for order ord_5521 was approved by Alice.',      -- voice: a duplicate
    'Order ord_7720 ships to Lisbon on March 1st, 2026.',        -- the same date: a duplicate
    'The kids do not love the blue couch.',                      -- negation
    'The kids hate the blue couch.',                             -- antonym
    'The refund for order ord_5521 was approved by Bob.',        -- another value
    'Order ord_7720 ships from Lisbon on 2026-03-01.',           -- opposite preposition
    'Order ord_7720 ships to Lisbon on 2026-03-08.',             -- another date
    'The kids love the couch.',                                  -- says less: new
    'The kids love the blue couch in the living room.',          -- says more: new
    'Order ord_9911 ships to Lisbon on 2026-03-08.'              -- another order: new
]) WITH ORDINALITY u(t, n) ORDER BY n;

-- recall by text: the query is embedded with the semantic model too
SELECT text, embedding_model, relevance > 0.5 AS relevant
FROM memory_fabric.recall('t_embed', NULL, classification_allowed => ARRAY['PUBLIC'],
                          query_text => 'Which sofa do the children like?', max_recalls => 1);
RESET ROLE;

-- The superuser chooses the hashing model: capture records it, reembed_memories moves the
-- memories to the model in force and back, and recall by text embeds the query the same way.
SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1';
SET memory_fabric.tenant_id = 't_embed';
SELECT embedding_model FROM memory_fabric.capture_memory('t_embed', 'Parking is free after 6 pm.', 'agent', 'PUBLIC');
CALL memory_fabric.reembed_memories('t_embed');
SELECT embedding_model, count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_embed' GROUP BY 1;
SELECT text, embedding_model, relevance > 0.3 AS relevant
FROM memory_fabric.recall('t_embed', NULL, classification_allowed => ARRAY['PUBLIC'],
                          query_text => 'Which couch do the kids love?', max_recalls => 1);
RESET memory_fabric.builtin_model;
CALL memory_fabric.reembed_memories('t_embed');
SELECT embedding_model, count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_embed' GROUP BY 1;
RESET memory_fabric.tenant_id;
-- an unknown model name
SET memory_fabric.builtin_model = 'no-such-model';
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('t_embed', 'x', 'agent', 'PUBLIC')$$) AS unknown_model;
RESET memory_fabric.builtin_model;
