-- The attack suite: ordinary roles try to reach another tenant's data, write around the
-- functions, switch the guards off, hijack search_path and smuggle payloads. Every attempt must
-- fail with its SQLSTATE and leave every table unchanged. Outcomes print as SQLSTATE: message.
\set SHOW_CONTEXT never

-- Cast: two tenants' agents, a reviewer and an admin of tenant A, a shared application role
-- granted every tenant, and an outsider with nothing.
DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['regress_agent_a', 'regress_agent_b', 'regress_reviewer_a', 'regress_admin_a',
                             'regress_shared', 'regress_outsider'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            EXECUTE format('DROP OWNED BY %I; DROP ROLE %I', r, r);
        END IF;
        EXECUTE format('CREATE ROLE %I', r);
    END LOOP;
END $$;
GRANT memory_fabric_agent TO regress_agent_a, regress_agent_b, regress_shared;
GRANT memory_fabric_reviewer TO regress_reviewer_a;
GRANT memory_fabric_admin TO regress_admin_a;
SELECT role_name, tenant_id FROM memory_fabric.grant_tenant('regress_agent_a', 'tenant_a')
UNION ALL SELECT role_name, tenant_id FROM memory_fabric.grant_tenant('regress_agent_b', 'tenant_b')
UNION ALL SELECT role_name, tenant_id FROM memory_fabric.grant_tenant('regress_reviewer_a', 'tenant_a')
UNION ALL SELECT role_name, tenant_id FROM memory_fabric.grant_tenant('regress_admin_a', 'tenant_a')
UNION ALL SELECT role_name, tenant_id FROM memory_fabric.grant_tenant('regress_shared', '*');
-- granting twice is idempotent
SELECT count(*) FROM memory_fabric.grant_tenant('regress_agent_a', 'tenant_a');
SELECT count(*) AS live_grants FROM memory_fabric.tenant_grants WHERE role_name LIKE 'regress\_%' AND revoked_at IS NULL;

-- The legitimate path works for each role in its own tenant.
SET ROLE regress_agent_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT id AS a_fact FROM memory_fabric.capture_memory('tenant_a', 'Tenant A ships from Porto.', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'a_fact');
SELECT id AS a_mem FROM memory_fabric.promote(:'a_fact') \gset
SELECT id AS a_queued FROM memory_fabric.capture_memory('tenant_a', 'Tenant A customer c1 has a VIP contract.', 'operator',
    'CONFIDENTIAL', user_id => 'c1', actor => 'regress_reviewer_a') \gset
SELECT reviewer FROM memory_fabric.review_candidate(:'a_queued');
SELECT text FROM memory_fabric.recall('tenant_a', NULL, classification_allowed => ARRAY['INTERNAL']);
SET ROLE regress_agent_b;
SET memory_fabric.tenant_id = 'tenant_b';
SELECT id AS b_fact FROM memory_fabric.capture_memory('tenant_b', 'Tenant B ships from Vigo.', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'b_fact');
SELECT id AS b_mem FROM memory_fabric.promote(:'b_fact') \gset
SELECT id AS b_queued FROM memory_fabric.capture_memory('tenant_b', 'Tenant B customer c9 is on a payment plan.', 'operator',
    'CONFIDENTIAL', user_id => 'c9', actor => 'op:zoe') \gset
SELECT reviewer FROM memory_fabric.review_candidate(:'b_queued');
-- the shared role acts for any tenant, but only for the one its transaction is pinned to
SET ROLE regress_shared;
SET memory_fabric.tenant_id = 'tenant_b';
SELECT text FROM memory_fabric.recall('tenant_b', NULL, classification_allowed => ARRAY['INTERNAL']);
SELECT public.regress_try($$SELECT memory_fabric.recall('tenant_a', NULL)$$);
RESET ROLE;
RESET memory_fabric.tenant_id;

CREATE TEMP TABLE before AS SELECT * FROM public.regress_fingerprint();
-- every row, by key, with a hash of its content
CREATE FUNCTION pg_temp.row_hashes() RETURNS TABLE (table_name text, key text, hash text)
LANGUAGE sql AS $$
    SELECT 'policies', tenant_id || '/' || version, md5(x::text) FROM memory_fabric.policies x
    UNION ALL SELECT 'embedding_models', tenant_id || '/' || model, md5(x::text) FROM memory_fabric.embedding_models x
    UNION ALL SELECT 'candidates', id, md5(x::text) FROM memory_fabric.candidates x
    UNION ALL SELECT 'reviews', id, md5(x::text) FROM memory_fabric.reviews x
    UNION ALL SELECT 'decisions', id, md5(x::text) FROM memory_fabric.decisions x
    UNION ALL SELECT 'consents', id, md5(x::text) FROM memory_fabric.consents x
    UNION ALL SELECT 'promoted_memory', id, md5(x::text) FROM memory_fabric.promoted_memory x
    UNION ALL SELECT 'events', id, md5(x::text) FROM memory_fabric.events x
    UNION ALL SELECT 'tenant_grants', id, md5(x::text) FROM memory_fabric.tenant_grants x
$$;
CREATE TEMP TABLE before_rows AS SELECT * FROM pg_temp.row_hashes();

-- 1. Another tenant's data through every function: agent A, pinned to A, names B.
SET ROLE regress_agent_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('tenant_b', 'planted', 'agent', 'INTERNAL')$$) AS capture_b;
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall('tenant_b', NULL)$$) AS recall_b;
-- the tenant is checked before anything is read or validated against its data (model dimensions)
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall('tenant_b', NULL, query_embedding => '[1,2,3]', query_embedding_model => 'memory_fabric/hash-384-v1')$$) AS recall_b_vector;
SELECT public.regress_try(format('SELECT memory_fabric.review_candidate(%L)', :'b_queued')) AS review_b;
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'b_fact')) AS promote_b;
-- ... and pinned to B, with no grant for B.
SET memory_fabric.tenant_id = 'tenant_b';
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('tenant_b', 'planted', 'agent', 'INTERNAL')$$) AS capture_b_pinned;
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall('tenant_b', NULL)$$) AS recall_b_pinned;
-- ... and with no pin at all, even for its own tenant.
RESET memory_fabric.tenant_id;
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('tenant_a', 'no pin', 'agent', 'INTERNAL')$$) AS capture_unpinned;
SET memory_fabric.tenant_id = '';
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall('tenant_a', NULL)$$) AS recall_empty_pin;
-- The reviewer and admin of A against B's queue and memories.
SET ROLE regress_reviewer_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, %L)', :'b_queued', 'regress_reviewer_a')) AS approve_b;
SELECT public.regress_try(format('SELECT memory_fabric.reject(%L, %L, %L)', :'b_queued', 'regress_reviewer_a', 'noise')) AS reject_b;
SELECT public.regress_try(format('SELECT memory_fabric.edit(%L, %L, %L)', :'b_queued', 'regress_reviewer_a', 'rewritten')) AS edit_b;
SET ROLE regress_admin_a;
SELECT public.regress_try(format('SELECT memory_fabric.retract(%L, %L, %L)', :'b_mem', 'wrong', 'regress_admin_a')) AS retract_b;
SELECT public.regress_try($$SELECT memory_fabric.grant_tenant('regress_admin_a', 'tenant_b')$$) AS grant_self_b;
SELECT public.regress_try($$SELECT memory_fabric.grant_tenant('regress_admin_a', '*')$$) AS grant_self_all;
SELECT public.regress_try($$SELECT memory_fabric.revoke_tenant('regress_agent_b', 'tenant_b')$$) AS revoke_b;
-- ... and every governance function, as admin A against B.
SELECT public.regress_try($$SELECT memory_fabric.record_consent('tenant_b', 'c9', 'p', 'b')$$) AS consent_b;
SELECT public.regress_try($$SELECT memory_fabric.set_policy('tenant_b', '{}')$$) AS policy_b;
SELECT public.regress_try($$SELECT memory_fabric.set_policy('*', '{}')$$) AS policy_default;
SELECT public.regress_try($$SELECT memory_fabric.forget_subject('tenant_b', 'c9', 'x')$$) AS forget_b;
SELECT public.regress_try($$SELECT memory_fabric.purge_expired('tenant_b')$$) AS purge_b;
SELECT public.regress_try(format('SELECT memory_fabric.explain_recall(%L, %L)', 'tenant_b', :'b_mem')) AS explain_b;
SELECT public.regress_try(format('SELECT memory_fabric.memory_history(%L)', :'b_mem')) AS history_b;
SELECT public.regress_try($$SELECT count(*) FROM memory_fabric.metrics WHERE tenant_id = 'tenant_b'$$) AS metrics_b_query;
SELECT count(*) AS metrics_rows_for_b FROM memory_fabric.metrics WHERE tenant_id = 'tenant_b';
-- Roles outside their job: an agent approving, retracting or granting.
SET ROLE regress_agent_a;
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, %L)', :'a_queued', 'someone')) AS agent_approves;
SELECT public.regress_try(format('SELECT memory_fabric.retract(%L, %L, %L)', :'a_mem', 'x', 'y')) AS agent_retracts;
SELECT public.regress_try($$SELECT memory_fabric.grant_tenant('regress_agent_a', 'tenant_b')$$) AS agent_grants;
SELECT public.regress_try($$SELECT memory_fabric.forget_subject('tenant_a', 'c1', 'x')$$) AS agent_erases;
SELECT public.regress_try($$SELECT memory_fabric.set_policy('tenant_a', '{}')$$) AS agent_sets_policy;
SELECT public.regress_try($$SELECT count(*) FROM memory_fabric.metrics$$) AS agent_reads_metrics;
-- The internal functions are nobody's to call.
SELECT public.regress_try($$SELECT memory_fabric._capture('tenant_a', 'x', 'agent', 'INTERNAL', NULL, NULL, '[]', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{}')$$) AS internal_capture;
SELECT public.regress_try(format('SELECT memory_fabric._promote(%L, NULL)', :'a_fact')) AS internal_promote;
SELECT public.regress_try($$SELECT memory_fabric._grant_tenant('regress_agent_a', 'tenant_b')$$) AS internal_grant;
-- The outsider reaches nothing.
SET ROLE regress_outsider;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall('tenant_a', NULL)$$) AS outsider_recall;
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('tenant_a', 'x', 'agent', 'INTERNAL')$$) AS outsider_capture;

-- 2. Every table and view, read directly.
SET ROLE regress_agent_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT t AS agent_reads, public.regress_try(format('SELECT count(*) FROM memory_fabric.%I', t)) AS outcome
FROM unnest(ARRAY['candidates', 'reviews', 'decisions', 'promoted_memory', 'consents', 'events', 'policies',
                  'embedding_models', 'tenant_grants', 'review_queue']) t;
-- The reviewer and admin see their pinned tenant only, and nothing unpinned or pinned elsewhere.
CREATE FUNCTION pg_temp.visible() RETURNS TABLE (relation text, tenants text)
LANGUAGE plpgsql AS $$
DECLARE t text; r text;
BEGIN
    FOREACH t IN ARRAY ARRAY['candidates', 'reviews', 'decisions', 'promoted_memory', 'events', 'tenant_grants',
                             'review_queue'] LOOP
        BEGIN
            EXECUTE format('SELECT coalesce(string_agg(DISTINCT tenant_id, '','' ORDER BY tenant_id), ''-'') FROM memory_fabric.%I', t) INTO r;
        EXCEPTION WHEN insufficient_privilege THEN r := '42501';
        END;
        relation := t; tenants := r; RETURN NEXT;
    END LOOP;
END $$;
GRANT EXECUTE ON FUNCTION pg_temp.visible() TO PUBLIC;
SET ROLE regress_reviewer_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT * FROM pg_temp.visible();
SELECT proposed_text FROM memory_fabric.review_queue;
SET memory_fabric.tenant_id = 'tenant_b';
SELECT * FROM pg_temp.visible();
RESET memory_fabric.tenant_id;
SELECT * FROM pg_temp.visible();
SET ROLE regress_admin_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT * FROM pg_temp.visible();
SELECT role_name FROM memory_fabric.tenant_grants ORDER BY 1;

-- 3. Writing around the functions: direct INSERT, UPDATE, DELETE, TRUNCATE, as every role.
CREATE FUNCTION pg_temp.writes() RETURNS TABLE (attempt text, outcome text)
LANGUAGE plpgsql AS $$
DECLARE s text;
BEGIN
    FOREACH s IN ARRAY ARRAY[
        'INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier, priority, embedding_model, content_hash, promoted_by) SELECT ''pm_x'', candidate_id, review_id, tenant_id, ''forged'', classification, source, tier, priority, embedding_model, content_hash, ''me'' FROM memory_fabric.promoted_memory LIMIT 1',
        'INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding_model, content_hash, policy_version) VALUES (''mc_x'', ''tenant_a'', ''agent'', ''forged'', ''PUBLIC'', ''m'', repeat(''0'', 64), 1)',
        'INSERT INTO memory_fabric.tenant_grants (id, role_name, tenant_id, granted_by) VALUES (''tg_x'', current_user, ''tenant_b'', ''me'')',
        'UPDATE memory_fabric.promoted_memory SET text = ''altered''',
        'UPDATE memory_fabric.promoted_memory SET retracted_at = now(), retracted_by = ''me'', retraction_reason = ''x''',
        'DELETE FROM memory_fabric.candidates',
        'TRUNCATE memory_fabric.events',
        'ALTER TABLE memory_fabric.candidates DISABLE TRIGGER guard_update',
        'ALTER TABLE memory_fabric.candidates DISABLE ROW LEVEL SECURITY',
        'ALTER TABLE memory_fabric.candidates NO FORCE ROW LEVEL SECURITY',
        'DROP POLICY tenant_read ON memory_fabric.candidates',
        'CREATE POLICY mine ON memory_fabric.candidates FOR ALL USING (true)',
        'SET session_replication_role = replica',
        'SET memory_fabric.embedding_function = ''public.regress_toy_embed''',
        'ALTER FUNCTION memory_fabric.capture_memory SECURITY INVOKER',
        'CREATE FUNCTION memory_fabric.planted() RETURNS int LANGUAGE sql AS ''SELECT 1''']
    LOOP
        attempt := left(s, 60); outcome := public.regress_try(s); RETURN NEXT;
    END LOOP;
END $$;
GRANT EXECUTE ON FUNCTION pg_temp.writes() TO PUBLIC;
SET ROLE regress_agent_a;
SELECT * FROM pg_temp.writes();
SET ROLE regress_reviewer_a;
SELECT * FROM pg_temp.writes();
SET ROLE regress_admin_a;
SELECT * FROM pg_temp.writes();

-- 4. A hostile function and operator planted earlier in search_path: none is ever called.
RESET ROLE;
CREATE SCHEMA regress_evil AUTHORIZATION regress_agent_a;
SET ROLE regress_agent_a;
CREATE FUNCTION regress_evil.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS
    $$ BEGIN RAISE EXCEPTION 'hijacked clock_timestamp'; END $$;
CREATE FUNCTION regress_evil.jsonb_array_length(jsonb) RETURNS int LANGUAGE plpgsql AS
    $$ BEGIN RAISE EXCEPTION 'hijacked jsonb_array_length'; END $$;
CREATE FUNCTION regress_evil.texteq_evil(text, text) RETURNS boolean LANGUAGE plpgsql AS
    $$ BEGIN RAISE EXCEPTION 'hijacked ='; END $$;
CREATE OPERATOR regress_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil.texteq_evil);
CREATE FUNCTION regress_evil.pg_advisory_xact_lock(bigint) RETURNS void LANGUAGE plpgsql AS
    $$ BEGIN RAISE EXCEPTION 'hijacked lock'; END $$;
SET search_path = regress_evil, public, pg_catalog;
SET memory_fabric.tenant_id = 'tenant_a';
-- the trap is armed: plain SQL in this session now calls the planted operator
SELECT 'a'::text = 'b'::text;
\echo :SQLSTATE
SELECT id AS hostile FROM memory_fabric.capture_memory('tenant_a', 'Captured under a hostile search_path.', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'hostile');
SELECT count(*) AS promoted FROM memory_fabric.promote(:'hostile');
SELECT count(*) AS recalled FROM memory_fabric.recall('tenant_a', NULL, classification_allowed => ARRAY['INTERNAL'],
                                                      query_text => 'hostile search_path');
RESET search_path;
RESET ROLE;
DROP SCHEMA regress_evil CASCADE;

-- 5. Payloads: quotes, $$, backslashes and SQL in every text argument are data, never code.
SET ROLE regress_agent_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT c.user_id = $p$u'; DROP TABLE memory_fabric.candidates; --$p$ AS user_ok,
       c.intent_id = $p$i$$ || pg_sleep(10) || $$$p$ AS intent_ok,
       c.text = $p$t\'$$ \x00 \\ "q"$p$ || chr(10) || 'end' AS text_ok,
       c.entity = $p$e" OR "1"="1$p$ AS entity_ok,
       c.predicate = $p$p\$p$ AS predicate_ok,
       c.value = to_jsonb($p$v'\"$p$::text) AS value_ok,
       c.actor = $p$a'--$p$ AS actor_ok,
       c.metadata ->> 'k' = $p$'); SELECT 1; --$p$ AS metadata_ok,
       c.evidence_refs ->> 0 = $p$ref\'$$$p$ AS refs_ok
FROM memory_fabric.capture_memory(
    tenant_id      => 'tenant_a',
    text           => $p$t\'$$ \x00 \\ "q"$p$ || chr(10) || 'end',
    source         => 'agent',
    classification => 'INTERNAL',
    user_id        => $p$u'; DROP TABLE memory_fabric.candidates; --$p$,
    intent_id      => $p$i$$ || pg_sleep(10) || $$$p$,
    entity         => $p$e" OR "1"="1$p$,
    predicate      => $p$p\$p$,
    value          => to_jsonb($p$v'\"$p$::text),
    actor          => $p$a'--$p$,
    evidence_refs  => jsonb_build_array($p$ref\'$$$p$),
    metadata       => jsonb_build_object('k', $p$'); SELECT 1; --$p$)) c;
SELECT count(*) FROM memory_fabric.recall('tenant_a', $p$x' OR '1'='1$p$, user_id => $p$' OR 1=1 --$p$,
                                          classification_allowed => ARRAY[$p$INTERNAL' OR '1'='1$p$]);
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('tenant_a', 'nul ' || chr(0), 'agent', 'INTERNAL')$$) AS nul_byte;
SELECT public.regress_try($$SELECT memory_fabric.review_candidate($q$mc_x' OR '1'='1$q$)$$) AS review_injection;
-- A pin that is itself an injection matches no tenant.
SET memory_fabric.tenant_id = $p$tenant_a' OR '1'='1$p$;
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall('tenant_a', NULL)$$) AS pin_injection;
RESET ROLE;
RESET memory_fabric.tenant_id;

-- 6. Approving one's own capture (four eyes), as an ordinary reviewer.
SET ROLE regress_reviewer_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, %L)', :'a_queued', 'regress_reviewer_a')) AS own_capture;
RESET ROLE;
RESET memory_fabric.tenant_id;

-- 9. The pin is one value for the whole statement. A reviewer granted tenant_a pins it, then sets
-- the pin to tenant_b inside the statement (set_config in a lateral subquery, run again on each
-- rescan): every table and view shows tenant_a's rows only, and a statement that starts pinned
-- to tenant_b (not granted) shows nothing even after it sets the pin to tenant_a.
CREATE FUNCTION public.regress_pin_flip(rel text, first_pin text, second_pin text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE seen text;
BEGIN
    EXECUTE format($q$
        SELECT coalesce(string_agg(DISTINCT x.tenant_id, ',' ORDER BY x.tenant_id), '(nothing)')
        FROM (VALUES (1, %L), (2, %L)) v(n, t)
        CROSS JOIN LATERAL (SELECT pg_catalog.set_config('memory_fabric.tenant_id', v.t, true) OFFSET 0) s(pin)
        CROSS JOIN LATERAL (SELECT r.tenant_id FROM %s r WHERE s.pin IS NOT NULL OFFSET 0) x$q$,
        first_pin, second_pin, rel) INTO seen;
    RETURN seen;
END
$$;
GRANT EXECUTE ON FUNCTION public.regress_pin_flip(text, text, text) TO PUBLIC;
SET ROLE regress_reviewer_a;
BEGIN;
SET LOCAL memory_fabric.tenant_id = 'tenant_a';
SELECT x.tenant_id, count(*)
FROM (VALUES (1, 'tenant_a'), (2, 'tenant_b')) v(n, t)
CROSS JOIN LATERAL (SELECT pg_catalog.set_config('memory_fabric.tenant_id', v.t, true) OFFSET 0) s(pin)
CROSS JOIN LATERAL (SELECT * FROM memory_fabric.promoted_memory m WHERE s.pin IS NOT NULL OFFSET 0) x
GROUP BY 1 ORDER BY 1;
ROLLBACK;
SELECT rel, public.regress_pin_flip(rel, 'tenant_a', 'tenant_b') AS a_then_b,
       public.regress_pin_flip(rel, 'tenant_b', 'tenant_a') AS b_then_a
FROM unnest(ARRAY['memory_fabric.promoted_memory', 'memory_fabric.candidates', 'memory_fabric.reviews',
                  'memory_fabric.decisions', 'memory_fabric.review_queue']) rel;
SET ROLE regress_admin_a;
SELECT rel, public.regress_pin_flip(rel, 'tenant_a', 'tenant_b') AS a_then_b,
       public.regress_pin_flip(rel, 'tenant_b', 'tenant_a') AS b_then_a
FROM unnest(ARRAY['memory_fabric.consents', 'memory_fabric.tenant_grants', 'memory_fabric.events',
                  'memory_fabric.embedding_models', 'memory_fabric.recall_log', 'memory_fabric.metrics',
                  '(SELECT * FROM memory_fabric.policies WHERE tenant_id <> ''*'')']) rel;
RESET ROLE;
RESET memory_fabric.tenant_id;

-- 10. A tenant id has one spelling: a pin with a trailing space reads nothing, and ids with
-- whitespace at either end (a NO-BREAK SPACE included) are refused where they are given.
SET ROLE regress_reviewer_a;
BEGIN;
SET LOCAL memory_fabric.tenant_id = 'tenant_a ';
SELECT count(*) AS read_with_trailing_space FROM memory_fabric.candidates;
ROLLBACK;
SET ROLE regress_agent_a;
SET memory_fabric.tenant_id = 'tenant_a ';
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('tenant_a ', 'Spaced.', 'agent', 'INTERNAL')$$) AS trailing_space;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT public.regress_try($$SELECT memory_fabric.capture_memory(E'tenant_a\u00a0', 'Spaced.', 'agent', 'INTERNAL')$$) AS no_break_space;
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall(' tenant_a', NULL)$$) AS recall_leading_space;
RESET ROLE;
RESET memory_fabric.tenant_id;
SELECT public.regress_try($$SELECT memory_fabric.grant_tenant('regress_agent_a', 'tenant_a ')$$) AS grant_trailing_space;

-- No attempt above changed or removed a row that existed before them ...
SELECT count(*) AS rows_changed_or_gone
FROM before_rows b LEFT JOIN pg_temp.row_hashes() a USING (table_name, key)
WHERE a.hash IS DISTINCT FROM b.hash;
-- ... and the only rows added are the legitimate captures of sections 4 and 5 (two candidates,
-- one review, one promotion with its event).
SELECT b.table_name, a.rows - b.rows AS rows_added
FROM before b JOIN public.regress_fingerprint() a USING (table_name)
ORDER BY 1;

-- Revocation takes effect at once.
SELECT role_name, tenant_id, revoked_at IS NOT NULL AS revoked FROM memory_fabric.revoke_tenant('regress_agent_a', 'tenant_a');
SET ROLE regress_agent_a;
SET memory_fabric.tenant_id = 'tenant_a';
SELECT public.regress_try($$SELECT * FROM memory_fabric.recall('tenant_a', NULL)$$) AS after_revoke;
RESET ROLE;
RESET memory_fabric.tenant_id;
SELECT public.regress_try($$SELECT memory_fabric.revoke_tenant('regress_agent_a', 'tenant_a')$$) AS revoke_twice;
SELECT public.regress_try($$SELECT memory_fabric.grant_tenant('regress_no_such_role', 'tenant_a')$$) AS unknown_role;

DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['regress_agent_a', 'regress_agent_b', 'regress_reviewer_a', 'regress_admin_a',
                             'regress_shared', 'regress_outsider'] LOOP
        EXECUTE format('DROP OWNED BY %I; DROP ROLE %I', r, r);
    END LOOP;
END $$;
DROP FUNCTION public.regress_pin_flip(text, text, text);
