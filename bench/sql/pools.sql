-- Pools the measured operations draw from, prepared through the real functions:
-- review_pool: near-duplicate probes captured (reviewed again and again by the benchmark);
-- promote_pool: fresh probes captured and reviewed (each promoted once);
-- pipeline_pool: fresh probes for capture → review → promote.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench.review_pool, bench.promote_pool, bench.pipeline_pool;
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
ALTER TABLE bench.review_pool ADD PRIMARY KEY (n);
ALTER TABLE bench.promote_pool ADD PRIMARY KEY (n);
ALTER TABLE bench.pipeline_pool ADD PRIMARY KEY (n);
ANALYZE bench.review_pool, bench.promote_pool, bench.pipeline_pool;
CREATE SEQUENCE IF NOT EXISTS bench.promote_seq;
CREATE SEQUENCE IF NOT EXISTS bench.pipeline_seq;
ALTER SEQUENCE bench.promote_seq RESTART;
ALTER SEQUENCE bench.pipeline_seq RESTART;
GRANT SELECT ON bench.review_pool, bench.promote_pool, bench.pipeline_pool TO bench_agent;
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
       (SELECT count(*) FROM bench.pipeline_pool) AS pipeline_pool;
