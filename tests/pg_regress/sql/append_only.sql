-- Append-only storage: no role can alter a written row, in any mode.
\set SHOW_CONTEXT never

-- Rows to attack in every table (written directly here, as the functions that normally
-- write them arrive with the pipeline).
INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score,
                                   reviewer, policy_version)
SELECT 'rv_regress_1', tenant_id, id, 'pending_promotion', 'durable', 0.95, 'human', 1
FROM memory_fabric.candidates WHERE tenant_id = 'tenant_acme_prod' ORDER BY captured_at LIMIT 1;
INSERT INTO memory_fabric.decisions (id, tenant_id, candidate_id, review_id, action, decided_by)
SELECT 'dc_regress_1', tenant_id, candidate_id, id, 'approve', 'operator:bob' FROM memory_fabric.reviews;
INSERT INTO memory_fabric.consents (id, tenant_id, subject, purpose, basis, classifications_allowed)
VALUES ('cns_regress_1', 'tenant_acme_prod', 'customer:cus_77', 'support_personalization', 'user_opt_in', '{INTERNAL}');
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope, text,
    evidence_refs, classification, source, tier, priority, embedding, embedding_model, content_hash, promoted_by)
SELECT 'pm_regress_1', c.id, r.id, c.tenant_id, c.user_id, c.intent_id, c.text, c.evidence_refs, c.classification,
       c.source, r.proposed_tier, r.priority_score, c.embedding, c.embedding_model, c.content_hash, 'operator:bob'
FROM memory_fabric.candidates c JOIN memory_fabric.reviews r ON r.candidate_id = c.id;
INSERT INTO memory_fabric.events (id, tenant_id, kind, subject_id) VALUES ('ev_regress_1', 'tenant_acme_prod', 'memory.promoted', 'pm_regress_1');

CREATE TEMP TABLE before AS SELECT * FROM public.regress_fingerprint();
SELECT table_name, rows FROM before ORDER BY 1;

-- The same 19 attempts are made as the owner, in replica mode, and as an intruder with every privilege;
-- each shows the SQLSTATE and message it gets ('ok' would mean it went through).
CREATE TEMP TABLE regress_attempts (n int PRIMARY KEY, stmt text NOT NULL);
INSERT INTO regress_attempts VALUES
    (1, 'UPDATE memory_fabric.policies SET tenant_id = tenant_id;'),
    (2, 'DELETE FROM memory_fabric.policies;'),
    (3, 'UPDATE memory_fabric.candidates SET tenant_id = tenant_id;'),
    (4, 'DELETE FROM memory_fabric.candidates;'),
    (5, 'UPDATE memory_fabric.embedding_models SET tenant_id = tenant_id;'),
    (6, 'DELETE FROM memory_fabric.embedding_models;'),
    (7, 'UPDATE memory_fabric.reviews SET tenant_id = tenant_id;'),
    (8, 'DELETE FROM memory_fabric.reviews;'),
    (9, 'UPDATE memory_fabric.decisions SET tenant_id = tenant_id;'),
    (10, 'DELETE FROM memory_fabric.decisions;'),
    (11, 'UPDATE memory_fabric.consents SET purpose = ''marketing'';'),
    (12, 'DELETE FROM memory_fabric.consents;'),
    (13, 'UPDATE memory_fabric.promoted_memory SET text = text || '' (edited)'';'),
    (14, 'DELETE FROM memory_fabric.promoted_memory;'),
    (15, 'UPDATE memory_fabric.events SET tenant_id = tenant_id;'),
    (16, 'DELETE FROM memory_fabric.events;'),
    (17, 'TRUNCATE memory_fabric.events;'),
    (18, 'TRUNCATE memory_fabric.candidates CASCADE;'),
    (19, 'TRUNCATE memory_fabric.policies, memory_fabric.candidates, memory_fabric.embedding_models, memory_fabric.reviews, memory_fabric.decisions, memory_fabric.consents, memory_fabric.promoted_memory, memory_fabric.events;');
SELECT n, stmt FROM regress_attempts ORDER BY n;

-- As the superuser who owns the tables.
SELECT n, regress_try(stmt) FROM regress_attempts ORDER BY n;

-- In replica mode, where ordinary triggers do not fire.
SET session_replication_role = replica;
-- Replica mode, superuser.
SELECT n, regress_try(stmt) FROM regress_attempts ORDER BY n;
RESET session_replication_role;

-- Write-once columns: retraction may be set once, from NULL to a value.
UPDATE memory_fabric.promoted_memory
   SET retracted_at = '2026-05-10 09:31:00+00', retracted_by = 'operator:bob', retraction_reason = 'wrong customer'
 WHERE id = 'pm_regress_1';
SELECT retracted_at, retracted_by, retraction_reason FROM memory_fabric.promoted_memory;
-- ... and never again: not to another value, not back to NULL, and no other column with it.
UPDATE memory_fabric.promoted_memory SET retracted_at = '2026-05-11 00:00:00+00' WHERE id = 'pm_regress_1';
\echo :SQLSTATE
UPDATE memory_fabric.promoted_memory SET retracted_at = NULL, retracted_by = NULL, retraction_reason = NULL;
\echo :SQLSTATE
UPDATE memory_fabric.promoted_memory SET retraction_reason = 'changed my mind';
\echo :SQLSTATE
UPDATE memory_fabric.consents SET revoked_at = now(), revoked_by = 'cust', revocation_reason = 'opt out', purpose = 'marketing';
\echo :SQLSTATE
UPDATE memory_fabric.consents SET valid_until = now();
\echo :SQLSTATE
UPDATE memory_fabric.consents SET revoked_at = '2026-06-01 00:00:00+00', revoked_by = 'customer:cus_77', revocation_reason = 'opt out';
SELECT revoked_at, revoked_by, revocation_reason FROM memory_fabric.consents;
UPDATE memory_fabric.consents SET revoked_at = '2026-07-01 00:00:00+00';
\echo :SQLSTATE
-- An update that sets no write-once column is refused as well.
UPDATE memory_fabric.promoted_memory SET tenant_id = tenant_id;
\echo :SQLSTATE
-- The same in replica mode.
SET session_replication_role = replica;
UPDATE memory_fabric.promoted_memory SET retracted_at = NULL;
\echo :SQLSTATE
RESET session_replication_role;
-- The baseline now includes the two write-once changes above.
DROP TABLE before;
CREATE TEMP TABLE before AS SELECT * FROM public.regress_fingerprint();

-- An ordinary role that was (wrongly) granted every privilege on the tables still cannot alter
-- a row: row-level security shows it no row to UPDATE or DELETE (nothing happens, 00000), and
-- TRUNCATE, which row-level security does not cover, meets the guard.
CREATE ROLE regress_mf_intruder;
GRANT USAGE ON SCHEMA memory_fabric TO regress_mf_intruder;
GRANT ALL ON ALL TABLES IN SCHEMA memory_fabric TO regress_mf_intruder;
GRANT SELECT ON regress_attempts TO regress_mf_intruder;
SET ROLE regress_mf_intruder;
-- Ordinary role with every table privilege.
SELECT n, regress_try(stmt) FROM regress_attempts ORDER BY n;
-- Nor switch the guards off.
SET session_replication_role = replica;
\echo :SQLSTATE
ALTER TABLE memory_fabric.candidates DISABLE TRIGGER guard_update;
\echo :SQLSTATE
ALTER TABLE memory_fabric.candidates DISABLE TRIGGER ALL;
\echo :SQLSTATE
DROP TRIGGER guard_delete ON memory_fabric.candidates;
\echo :SQLSTATE
RESET ROLE;

-- An ordinary role with no grants cannot even see the tables.
CREATE ROLE regress_mf_nobody;
SET ROLE regress_mf_nobody;
UPDATE memory_fabric.candidates SET text = 'x';
\echo :SQLSTATE
SELECT count(*) FROM memory_fabric.candidates;
\echo :SQLSTATE
RESET ROLE;

-- Every table is exactly as it was.
SELECT b.table_name, b.rows, a.rows = b.rows AND a.hash = b.hash AS unchanged
FROM before b JOIN public.regress_fingerprint() a USING (table_name)
ORDER BY 1;

DROP TABLE regress_attempts;
REVOKE ALL ON ALL TABLES IN SCHEMA memory_fabric FROM regress_mf_intruder;
REVOKE USAGE ON SCHEMA memory_fabric FROM regress_mf_intruder;
DROP ROLE regress_mf_intruder;
DROP ROLE regress_mf_nobody;
