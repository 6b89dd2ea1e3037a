-- Review's learned judge (core/data/JUDGE.md): what it decides with the rules, what each review
-- records of it, and when it is not read. The judge is installed beside the semantic model.
\set SHOW_CONTEXT never
CREATE FUNCTION pg_temp.seen(r memory_fabric.reviews)
RETURNS TABLE (status text, reason text, resolution text, judge_read boolean, pairs int)
LANGUAGE sql AS $$
    SELECT r.status, r.reason, r.contradiction_resolution, r.judge_model IS NOT NULL,
           pg_catalog.jsonb_array_length(r.judge_scores)
$$;
SET memory_fabric.builtin_model = 'sentence-transformers/all-MiniLM-L6-v2';

-- A memory, and candidates on its topic: the judge reads each pair both ways.
SELECT id AS gate FROM memory_fabric.capture_memory('t_judge', 'The west gate stays locked at night.', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'gate');
SELECT id AS gate_pm FROM memory_fabric.promote(:'gate') \gset
-- a negation both the rules and the judge find
SELECT s.* FROM memory_fabric.capture_memory('t_judge', 'The west gate does not stay locked at night.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;
-- what the review recorded: for the memory compared, the probabilities both ways, each summing to 1
SELECT x ->> 'id' = :'gate_pm' AS the_memory, (x ->> 'similarity')::float > 0.53 AS past_the_gate,
       abs((SELECT sum(v::float) FROM jsonb_each_text(x -> 'candidate_to_memory') e(k, v)) - 1) < 1e-5 AS sums_to_1,
       greatest((x -> 'candidate_to_memory' ->> 'contradiction')::float,
                (x -> 'memory_to_candidate' ->> 'contradiction')::float) > 0.5 AS contradiction,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(x -> 'memory_to_candidate') k) AS labels
FROM memory_fabric.reviews r, jsonb_array_elements(r.judge_scores) x
WHERE r.tenant_id = 't_judge' AND r.status = 'contradicts';
-- the same words, said again: a duplicate, which the judge agrees with
SELECT s.* FROM memory_fabric.capture_memory('t_judge', 'The west gate stays locked at night!', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;
-- the same content needs no judge
SELECT s.* FROM memory_fabric.capture_memory('t_judge', 'the west gate stays  LOCKED at night.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;
-- another topic: nothing past the gate, nothing read, the judge still named
SELECT s.* FROM memory_fabric.capture_memory('t_judge', 'The Lisbon depot closes at noon on Saturdays.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;

-- what the claims decide needs no judge: one customer's two ways of getting invoices
SELECT status FROM memory_fabric.capture_memory('t_judge', 'cust_7 wants paper invoices.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r;
SELECT (memory_fabric.promote(candidate_id)).id IS NOT NULL AS promoted FROM memory_fabric.reviews
WHERE tenant_id = 't_judge' AND status = 'pending_promotion' AND reviewer = 'auto'
  AND candidate_id IN (SELECT id FROM memory_fabric.candidates WHERE text = 'cust_7 wants paper invoices.');
SELECT s.* FROM memory_fabric.capture_memory('t_judge', 'cust_7 wants invoices by email.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;

-- memory_history shows what the judge said with the review, and the notes say it in words
SELECT stage, detail ->> 'status' AS status, detail ? 'judge_model' AS model,
       jsonb_array_length(detail -> 'judge') AS pairs, detail ->> 'notes' LIKE '%judge: contradiction%' AS notes
FROM memory_fabric.memory_history((SELECT candidate_id FROM memory_fabric.reviews
                                   WHERE tenant_id = 't_judge' AND status = 'contradicts' ORDER BY reviewed_at LIMIT 1))
WHERE stage = 'reviewed';

-- The policy turns it off: the rules alone, and the review says the judge was not read.
SELECT version > 1 AS new_version, body -> 'judge' AS judge
FROM memory_fabric.set_policy('t_judge', '{"judge": {"enabled": false}}', note => 'rules only');
SELECT s.* FROM memory_fabric.capture_memory('t_judge', 'The west gate never stays locked at night.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;
SELECT version > 1 AS new_version FROM memory_fabric.set_policy('t_judge', '{"judge": {"enabled": true}}');
-- a judge function overrides it, and the review says it was not read
CREATE FUNCTION public.regress_judge_never(a text, b text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT false $$;
SET memory_fabric.contradiction_function = 'public.regress_judge_never';
SELECT s.* FROM memory_fabric.capture_memory('t_judge', 'The west gate no longer stays locked at night.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;
RESET memory_fabric.contradiction_function;
DROP FUNCTION public.regress_judge_never(text, text);

-- Thresholds by the rules' finding: antonyms need little of the judge by default; a policy may set each.
SELECT body #> '{judge, with_rules}' AS with_rules
FROM memory_fabric.set_policy('t_judge', '{"judge": {"with_rules": {"negation": 0.1}}}');
-- what set_policy refuses, naming the key
SELECT public.regress_try($$SELECT memory_fabric.set_policy('t_judge', '{"judge": {"with_rules": {"sarcasm": 0.1}}}')$$) AS unknown_finding;
SELECT public.regress_try($$SELECT memory_fabric.set_policy('t_judge', '{"judge": {"merge": 2}}')$$) AS out_of_range;
SELECT public.regress_try($$SELECT memory_fabric.set_policy('t_judge', '{"judge": {"enabled": "yes"}}')$$) AS not_boolean;

-- Hostile text reaches the judge cut to its 128 tokens, and gives a verdict.
SELECT s.status IS NOT NULL AS verdict, s.pairs
FROM memory_fabric.capture_memory('t_judge', 'The west gate stays locked at night ' || repeat('and not ', 1500) || '.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.seen(r) s;
RESET memory_fabric.builtin_model;
