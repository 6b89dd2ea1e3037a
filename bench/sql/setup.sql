-- Benchmark database: the extension, a bench schema, the ordinary role every measured
-- operation runs as, and the baseline table.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS memory_fabric CASCADE;
-- a database kept from an earlier run (--reuse) is brought to the extension version installed now
ALTER EXTENSION memory_fabric UPDATE;
CREATE SCHEMA IF NOT EXISTS bench;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bench_agent') THEN
        CREATE ROLE bench_agent LOGIN IN ROLE memory_fabric_agent, memory_fabric_reviewer;
    END IF;
END $$;
SELECT count(*) FROM memory_fabric.grant_tenant('bench_agent', '*');
GRANT USAGE ON SCHEMA bench TO bench_agent;
CREATE TABLE IF NOT EXISTS bench.probes (id bigint PRIMARY KEY, kind text, tenant_id text, user_id text, intent_id text,
                                         text text, embedding vector(384), source_memory text);
-- the floor for capture: the same candidate row, inserted plainly (same columns, defaults,
-- constraints and indexes; no function, no triggers)
CREATE TABLE IF NOT EXISTS bench.plain_candidates (LIKE memory_fabric.candidates INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
GRANT SELECT ON bench.probes TO bench_agent;
GRANT INSERT ON bench.plain_candidates TO bench_agent;
-- every tenant's vectors are of one model, 384 dimensions, registered for callers' vectors as a
-- tenant admin registers it (memory_fabric.register_embedding_model())
INSERT INTO memory_fabric.embedding_models (tenant_id, model, dimensions, registered_by)
SELECT format('t%s', lpad(i::text, 4, '0')), 'bench-384', 384, current_user FROM generate_series(0, 999) i ON CONFLICT DO NOTHING;
-- the runs of the benchmark on this database (bench/run.sh numbers each, 0 the first)
CREATE TABLE IF NOT EXISTS bench.runs (n integer PRIMARY KEY, started_at timestamptz NOT NULL DEFAULT clock_timestamp());
