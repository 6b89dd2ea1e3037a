-- Pools the measured operations draw from, prepared through the real functions:
-- review_pool: near-duplicate probes captured (reviewed again and again by the benchmark);
-- promote_pool: fresh probes captured and reviewed (each promoted once);
-- pipeline_pool: fresh probes for capture → review → promote;
-- judge_pool: a candidate the learned judge must read: for :njudge fresh probes (the last ones,
--   which neither the promote nor the pipeline measurement draws), a generic statement is captured
--   with the probe's vector, reviewed and promoted, then its denial with the same vector (one
--   neighbour past the same-topic gate; the rules find a negation and leave the verdict to the
--   judge; the run's number makes each text new on a reused database). A backend keeps the judge's last 256 answers (src/pipeline/review.rs, JUDGED_KEPT):
--   drawn at random from 2,000 pairs, most reviews read the pair anew.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench.review_pool, bench.promote_pool, bench.pipeline_pool, bench.judge_pool;
CREATE TABLE bench.review_pool AS
SELECT row_number() OVER (ORDER BY p.id) AS n, c.id AS candidate_id, p.tenant_id, p.id AS probe
FROM (SELECT * FROM bench.probes WHERE kind = 'dup' ORDER BY id LIMIT :nreview) p,
     LATERAL memory_fabric.capture_memory(p.tenant_id, p.text, 'agent', 'INTERNAL', user_id => p.user_id,
         intent_id => p.intent_id, embedding => p.embedding::real[]::vector, embedding_model => 'bench-384') c;
CREATE TABLE bench.promote_pool AS
SELECT row_number() OVER (ORDER BY s.id) AS n, s.candidate_id, s.tenant_id
FROM (SELECT p.id, c.id AS candidate_id, p.tenant_id, (memory_fabric.review_candidate(c.id)).status
      FROM (SELECT * FROM bench.probes WHERE kind = 'fresh' ORDER BY id LIMIT :npromote) p,
           LATERAL memory_fabric.capture_memory(p.tenant_id, p.text, 'agent', 'INTERNAL', user_id => p.user_id,
               intent_id => p.intent_id, embedding => p.embedding::real[]::vector, embedding_model => 'bench-384') c) s
WHERE s.status = 'pending_promotion';
CREATE TABLE bench.pipeline_pool AS
SELECT row_number() OVER (ORDER BY p.id) AS n, p.*
FROM (SELECT * FROM bench.probes WHERE kind = 'fresh' ORDER BY id OFFSET :npromote) p;
CREATE TABLE bench.judge_pool (n bigint PRIMARY KEY, candidate_id text, tenant_id text);
SELECT set_config('bench.njudge', :'njudge', false) IS NOT NULL AS njudge_set \gset
DO $$
DECLARE p record; c text; k bigint := 0; run bigint := (SELECT max(n) FROM bench.runs);
BEGIN
    FOR p IN SELECT * FROM bench.probes WHERE kind = 'fresh' ORDER BY id DESC LIMIT current_setting('bench.njudge')::int LOOP
        PERFORM set_config('memory_fabric.tenant_id', p.tenant_id, true);
        SELECT id INTO c FROM memory_fabric.capture_memory(p.tenant_id, format('The courier for site %s-%s rings the bell on arrival.', run, p.id),
            'agent', 'INTERNAL', user_id => p.user_id, intent_id => p.intent_id, embedding => p.embedding::real[]::vector,
            embedding_model => 'bench-384');
        PERFORM memory_fabric.review_candidate(c);
        PERFORM memory_fabric.promote(c);
        SELECT id INTO c FROM memory_fabric.capture_memory(p.tenant_id, format('The courier for site %s-%s never rings the bell on arrival.', run, p.id),
            'agent', 'INTERNAL', user_id => p.user_id, intent_id => p.intent_id, embedding => p.embedding::real[]::vector,
            embedding_model => 'bench-384');
        k := k + 1;
        INSERT INTO bench.judge_pool VALUES (k, c, p.tenant_id);
    END LOOP;
END $$;
ALTER TABLE bench.review_pool ADD PRIMARY KEY (n);
ALTER TABLE bench.promote_pool ADD PRIMARY KEY (n);
ALTER TABLE bench.pipeline_pool ADD PRIMARY KEY (n);
ANALYZE bench.review_pool, bench.promote_pool, bench.pipeline_pool, bench.judge_pool;
CREATE SEQUENCE IF NOT EXISTS bench.promote_seq;
CREATE SEQUENCE IF NOT EXISTS bench.pipeline_seq;
ALTER SEQUENCE bench.promote_seq RESTART;
ALTER SEQUENCE bench.pipeline_seq RESTART;
GRANT SELECT ON bench.review_pool, bench.promote_pool, bench.pipeline_pool, bench.judge_pool TO bench_agent;
GRANT USAGE ON SEQUENCE bench.promote_seq, bench.pipeline_seq TO bench_agent;
-- capture → review → promote as one call (runs as the caller: the public functions do the work)
CREATE OR REPLACE FUNCTION bench.pipeline(i bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE p bench.pipeline_pool; c text;
BEGIN
    SELECT * INTO STRICT p FROM bench.pipeline_pool WHERE n = i;
    PERFORM set_config('memory_fabric.tenant_id', p.tenant_id, true);
    SELECT id INTO c FROM memory_fabric.capture_memory(p.tenant_id, p.text, 'agent', 'INTERNAL', user_id => p.user_id,
        intent_id => p.intent_id, embedding => p.embedding::real[]::vector, embedding_model => 'bench-384');
    PERFORM memory_fabric.review_candidate(c);
    RETURN (memory_fabric.promote(c)).tier;
END $$;
GRANT EXECUTE ON FUNCTION bench.pipeline(bigint) TO bench_agent;
SELECT (SELECT count(*) FROM bench.review_pool) AS review_pool, (SELECT count(*) FROM bench.promote_pool) AS promote_pool,
       (SELECT count(*) FROM bench.pipeline_pool) AS pipeline_pool, (SELECT count(*) FROM bench.judge_pool) AS judge_pool;
