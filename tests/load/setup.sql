-- The load test's database: ten tenants, an ordinary role that acts for them, and the three
-- statements pgbench mixes, each a function that records its outcome in the same transaction
-- (so a rolled-back or retried transaction records nothing). Only the refusals the pipeline is
-- documented to give under concurrency (55000) are caught; any other error aborts the client.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS memory_fabric CASCADE;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_load') THEN
        CREATE ROLE memory_fabric_load LOGIN IN ROLE memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
    END IF;
END $$;
SELECT count(*) FROM generate_series(0, 9) t, memory_fabric.grant_tenant('memory_fabric_load', 't_load_' || t);
ALTER ROLE memory_fabric_load IN DATABASE :"DBNAME" SET memory_fabric.log_recalls = on;
CREATE SCHEMA load;
GRANT USAGE ON SCHEMA load TO memory_fabric_load;
CREATE UNLOGGED TABLE load.outcomes (op text NOT NULL, outcome text NOT NULL, subject text);
GRANT INSERT ON load.outcomes TO memory_fabric_load;

-- capture -> review -> promote of a fact drawn from a small space, so that clients collide:
-- the same (tenant, user, topic, channel) is a duplicate, another channel a contradiction
-- (blocked for an agent, superseding for the system source).
CREATE FUNCTION load.pipeline(t int, u int, topic int, ch int, sys int) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tenant text := 't_load_' || t;
    usr text := CASE WHEN u < 4 THEN 'u' || u END;
    chan text := (ARRAY['email', 'sms', 'phone', 'post'])[ch + 1];
    cid text; r memory_fabric.reviews; outcome text;
BEGIN
    PERFORM set_config('memory_fabric.tenant_id', tenant, true);
    SELECT c.id INTO cid FROM memory_fabric.capture_memory(tenant,
        format('Customer %s prefers %s for topic %s.', coalesce(usr, 'anyone'), chan, topic),
        CASE WHEN sys = 0 THEN 'system' ELSE 'agent' END, 'INTERNAL', user_id => usr,
        entity => 'customer:' || coalesce(usr, 'anyone'), predicate => 'channel_for_topic_' || topic,
        value => to_jsonb(chan), actor => 'agent:load') c;
    INSERT INTO load.outcomes VALUES ('capture', 'captured', cid);
    r := memory_fabric.review_candidate(cid);
    outcome := r.status || coalesce('/' || r.contradiction_resolution, '');
    IF r.reviewer = 'auto' AND (r.status = 'pending_promotion'
                                OR (r.status = 'contradicts' AND r.contradiction_resolution IN ('supersede', 'coexist'))) THEN
        BEGIN
            PERFORM memory_fabric.promote(cid);
            outcome := outcome || ' promoted';
        EXCEPTION WHEN object_not_in_prerequisite_state THEN
            outcome := outcome || ' refused: ' || regexp_replace(SQLERRM, '(mc|pm)_[0-9a-z_]+', '\1_<id>', 'g');
        END;
    END IF;
    INSERT INTO load.outcomes VALUES ('pipeline', outcome, cid);
    RETURN cid || ' ' || outcome;
END $$;

-- recall with query text; the rows must be of the caller's scope
CREATE FUNCTION load.recall(t int, u int, topic int) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tenant text := 't_load_' || t;
    usr text := CASE WHEN u < 4 THEN 'u' || u END;
    n int; bad int;
BEGIN
    PERFORM set_config('memory_fabric.tenant_id', tenant, true);
    SELECT count(*), count(*) FILTER (WHERE r.user_scope IS DISTINCT FROM usr AND r.user_scope IS NOT NULL)
      INTO n, bad
    FROM memory_fabric.recall(tenant, NULL, user_id => usr, query_text => format('which channel for topic %s', topic)) r;
    IF bad > 0 THEN
        RAISE EXCEPTION 'recall returned % rows of another user', bad;
    END IF;
    INSERT INTO load.outcomes VALUES ('recall', CASE WHEN n > 0 THEN 'hit' ELSE 'miss' END, NULL);
    RETURN n;
END $$;

-- an operator retracts one live memory of a tenant
CREATE FUNCTION load.retract(t int) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tenant text := 't_load_' || t;
    mid text; outcome text;
BEGIN
    PERFORM set_config('memory_fabric.tenant_id', tenant, true);
    SELECT m.id INTO mid FROM memory_fabric.promoted_memory m
    WHERE m.tenant_id = tenant AND m.retracted_at IS NULL ORDER BY random() LIMIT 1;
    IF mid IS NULL THEN
        outcome := 'nothing live';
    ELSE
        BEGIN
            PERFORM memory_fabric.retract(mid, 'load test', 'op:load');
            outcome := 'retracted';
        EXCEPTION WHEN object_not_in_prerequisite_state THEN
            outcome := 'refused: ' || regexp_replace(SQLERRM, '(mc|pm)_[0-9a-z_]+', '\1_<id>', 'g');
        END;
    END IF;
    INSERT INTO load.outcomes VALUES ('retract', outcome, mid);
    RETURN coalesce(mid, '-') || ' ' || outcome;
END $$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA load TO memory_fabric_load;
