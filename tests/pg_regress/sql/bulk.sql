-- The bulk path for migrations: memory_fabric.promote_pending() reviews a tenant's unreviewed
-- candidates and promotes what needs no human, in batches that each commit, as an ordinary role.
-- (Cancelling it part-way and resuming it: tests/tap/t/004_maintenance.pl.)
\set SHOW_CONTEXT never
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_bulk_agent') THEN DROP ROLE regress_bulk_agent; END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_bulk_other') THEN DROP ROLE regress_bulk_other; END IF;
END $$;
CREATE ROLE regress_bulk_agent IN ROLE memory_fabric_agent;
CREATE ROLE regress_bulk_other IN ROLE memory_fabric_agent;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_bulk_agent', 't_bulk');
SELECT count(*) FROM memory_fabric.grant_tenant('regress_bulk_other', 't_bulk_other');

SET ROLE regress_bulk_agent;
SET memory_fabric.tenant_id = 't_bulk';
-- nothing to do yet
CALL memory_fabric.promote_pending('t_bulk');
-- an operator's fact (durable: review queues it for a human), captured by the superuser
RESET ROLE;
SELECT count(*) FROM memory_fabric.capture_memory('t_bulk', 'Refunds above 500 EUR need a manager sign-off.',
                                                  'operator', 'INTERNAL');
SET ROLE regress_bulk_agent;
-- four captures by the agent: three distinct facts and a repeat of the first
SELECT count(*) FROM (
    SELECT memory_fabric.capture_memory('t_bulk', t, 'agent', 'INTERNAL')
    FROM (VALUES ('The Lisbon depot closes at 18:00 on weekdays.'),
                 ('Premium support answers within four hours.'),
                 ('Warehouse B stores the returned hardware.'),
                 ('The Lisbon depot closes at 18:00 on weekdays.')) v(t)) x;
-- one more fact reviewed and promoted by hand, and one only reviewed
SELECT (memory_fabric.capture_memory('t_bulk', 'Invoices are issued on the first business day of the month.',
                                     'agent', 'INTERNAL')).id AS c_invoices \gset
SELECT (memory_fabric.capture_memory('t_bulk', 'Refund requests need the original order number.',
                                     'agent', 'INTERNAL')).id AS c_refund \gset
SELECT (memory_fabric.review_candidate(:'c_invoices')).status, (memory_fabric.promote(:'c_invoices')).tier;
SELECT (memory_fabric.review_candidate(:'c_refund')).status;
-- in batches of 2 (one NOTICE per committed batch)
CALL memory_fabric.promote_pending('t_bulk', batch_size => 2);
RESET ROLE;
-- every fact promoted once, none reviewed twice; the repeat is a duplicate, the operator's fact
-- waits for a human
SELECT c.text, r.status, r.reviewer, p.id IS NOT NULL AS promoted
FROM memory_fabric.candidates c
LEFT JOIN LATERAL (SELECT * FROM memory_fabric.reviews r WHERE r.candidate_id = c.id
                   ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) r ON true
LEFT JOIN memory_fabric.promoted_memory p ON p.candidate_id = c.id
WHERE c.tenant_id = 't_bulk' ORDER BY c.captured_at, c.id;
SELECT count(*) AS candidates_reviewed_twice FROM (
    SELECT candidate_id FROM memory_fabric.reviews WHERE tenant_id = 't_bulk' GROUP BY 1 HAVING count(*) > 1) x;
-- again: the queued fact and the duplicate stay open, nothing is reviewed or promoted twice
SET ROLE regress_bulk_agent;
CALL memory_fabric.promote_pending('t_bulk', batch_size => 2);
RESET ROLE;
SELECT count(*) AS reviews, (SELECT count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_bulk') AS memories
FROM memory_fabric.reviews WHERE tenant_id = 't_bulk';
SET ROLE regress_bulk_agent;

-- errors: another tenant, no pin, a bad batch size, inside a transaction block
SET memory_fabric.tenant_id = 't_bulk_other';
CALL memory_fabric.promote_pending('t_bulk');
RESET memory_fabric.tenant_id;
CALL memory_fabric.promote_pending('t_bulk');
SET memory_fabric.tenant_id = 't_bulk';
CALL memory_fabric.promote_pending('t_bulk', batch_size => 0);
BEGIN;
CALL memory_fabric.promote_pending('t_bulk');
ROLLBACK;
RESET ROLE;
-- a role without the agent's rights cannot call it
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_bulk_nobody') THEN DROP ROLE regress_bulk_nobody; END IF;
END $$;
CREATE ROLE regress_bulk_nobody;
SET ROLE regress_bulk_nobody;
CALL memory_fabric.promote_pending('t_bulk');
RESET ROLE;
DROP ROLE regress_bulk_nobody;
