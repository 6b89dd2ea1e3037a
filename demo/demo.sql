-- memory_fabric demo: the seed 000 worked example, from capture to recall, and a contradiction
-- that supersedes an older fact.
\set ON_ERROR_STOP 1
\set QUIET on
\pset footer off
\set SHOW_CONTEXT never

\echo
\echo '== 1. Capture ================================================================'
\echo 'After overriding a refund decision, operator alice types a correction about customer'
\echo 'cust_8861. It lands in the append-only candidates log: classified, redacted, embedded.'
\echo
SELECT id AS nda FROM memory_fabric.capture_memory(
    tenant_id      => 'tenant_acme_prod',
    user_id        => 'cust_8861',
    intent_id      => 'support.refund.execute',
    source         => 'operator',
    actor          => 'operator:alice',
    text           => 'Customer cust_8861 has a verbal NDA limiting PAN exposure to last-4 only.',
    evidence_refs  => '["operator:override:fb_2026_05_09_x9"]',
    classification => 'PII') \gset
\pset expanded on
SELECT id, tenant_id, user_id, intent_id, source, actor, text, evidence_refs, classification,
       embedding_model, left(content_hash, 16) || '…' AS content_hash, redaction_count
FROM memory_fabric.candidates WHERE id = :'nda';
\pset expanded off

\echo
\echo '== 2. Review ================================================================='
\echo 'Deterministic review: no duplicate, no contradiction; an operator source makes it'
\echo 'durable (no expiry), so it waits for a human. Priority 0.9 + 0.05 per evidence ref.'
\echo
SELECT status, proposed_tier, priority_score, reviewer, reason FROM memory_fabric.review_candidate(:'nda');
\echo 'The review queue:'
SELECT proposed_tier, proposed_text, reason, actor FROM memory_fabric.review_queue;

\echo
\echo '== 3. Promote ================================================================'
\set ON_ERROR_STOP 0
\echo 'Promoting it without an approval is refused:'
SELECT memory_fabric.promote(:'nda');
\echo 'SQLSTATE' :SQLSTATE
\echo
\echo 'alice approving her own correction is refused (four eyes):'
SELECT memory_fabric.approve(:'nda', 'operator:alice');
\echo 'SQLSTATE' :SQLSTATE
\set ON_ERROR_STOP 1
\echo
\echo 'bob approves it; it is promoted:'
SELECT id AS nda_pm, tier, priority, promoted_by, coalesce(expires_at::text, 'never') AS expires
FROM memory_fabric.approve(:'nda', 'operator:bob', notes => 'confirmed with the account team') \gset
SELECT id, tier, priority, promoted_by, coalesce(expires_at::text, 'never') AS expires
FROM memory_fabric.promoted_memory WHERE id = :'nda_pm';

\echo
\echo '== 4. Recall ================================================================='
\echo 'The next refund for cust_8861, with PII clearance, recalls it (with its provenance):'
SELECT memory_id, text, tier, priority, source, evidence_refs, candidate_id = :'nda' AS from_the_capture
FROM memory_fabric.recall('tenant_acme_prod', 'support.refund.execute', user_id => 'cust_8861',
                          classification_allowed => ARRAY['PII', 'INTERNAL', 'PUBLIC']);
\echo 'And nobody else sees it:'
SELECT 'another user'   AS recall_for, count(*) AS rows FROM memory_fabric.recall('tenant_acme_prod', 'support.refund.execute', user_id => 'cust_1234', classification_allowed => ARRAY['PII', 'INTERNAL', 'PUBLIC'])
UNION ALL
SELECT 'another tenant', count(*) FROM memory_fabric.recall('tenant_globex', 'support.refund.execute', user_id => 'cust_8861', classification_allowed => ARRAY['PII', 'INTERNAL', 'PUBLIC'])
UNION ALL
SELECT 'another intent', count(*) FROM memory_fabric.recall('tenant_acme_prod', 'sales.upsell', user_id => 'cust_8861', classification_allowed => ARRAY['PII', 'INTERNAL', 'PUBLIC'])
UNION ALL
SELECT 'no PII clearance', count(*) FROM memory_fabric.recall('tenant_acme_prod', 'support.refund.execute', user_id => 'cust_8861');

\echo
\echo '== 5. A contradiction that supersedes an older fact ==========================='
\echo 'An agent learned the return window from an old help page; it was auto-promoted.'
SELECT id AS old FROM memory_fabric.capture_memory('tenant_acme_prod', 'Returns are accepted within 30 days of delivery.',
    'agent', 'PUBLIC', evidence_refs => '["kb:returns_2025"]') \gset
SELECT status, proposed_tier, reviewer FROM memory_fabric.review_candidate(:'old');
SELECT id AS old_pm FROM memory_fabric.promote(:'old') \gset
SELECT pg_sleep(0.05) \g /dev/null
SELECT clock_timestamp() AS before_update \gset
\echo
\echo 'The policy system publishes the new window, with two pieces of evidence:'
SELECT id AS new FROM memory_fabric.capture_memory('tenant_acme_prod', 'Returns are accepted within 45 days of delivery.',
    'system', 'PUBLIC', evidence_refs => '["kb:returns_2026", "ticket:policy_update_88"]') \gset
SELECT status, contradicts_id = :'old_pm' AS contradicts_the_old_fact, contradiction_resolution, reason,
       round(similarity::numeric, 3) AS similarity
FROM memory_fabric.review_candidate(:'new');
SELECT id AS new_pm FROM memory_fabric.promote(:'new') \gset
\echo 'Promotion superseded the old memory in the same transaction; nothing was deleted:'
SELECT text, retracted_at IS NOT NULL AS retracted, retracted_by = :'new_pm' AS by_the_new_fact
FROM memory_fabric.promoted_memory WHERE id IN (:'old_pm', :'new_pm') ORDER BY promoted_at;
\echo
\echo 'Recall now:'
SELECT text, round(score::numeric, 3) AS score FROM memory_fabric.recall('tenant_acme_prod', 'support.returns',
    query_text => 'how many days does a customer have to return an item?', classification_allowed => ARRAY['PUBLIC']);
\echo 'Recall as of just before the update (what the agent believed then):'
SELECT text FROM memory_fabric.recall('tenant_acme_prod', 'support.returns', as_of => :'before_update',
    classification_allowed => ARRAY['PUBLIC']);

\echo
\echo '== The audit trail ==========================================================='
SELECT kind, actor, coalesce(payload ->> 'tier', payload ->> 'resolution', payload ->> 'reason', '') AS detail
FROM memory_fabric.events ORDER BY created_at, id;
