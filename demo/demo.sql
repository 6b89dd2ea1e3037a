-- memory_fabric demo: the seed 000 worked example, capture step.
\set ON_ERROR_STOP 1
\set QUIET on
\pset footer off
\echo
\echo '== memory_fabric: capture =================================================='
\echo 'An operator overrides a refund decision and types a correction about customer'
\echo 'cust_8861. The correction is captured into the append-only candidates log.'
\echo
\pset expanded on
SELECT id, tenant_id, user_id, intent_id, source, text, evidence_refs, classification,
       embedding_model, vector_dims(embedding) AS embedding_dims, left(content_hash, 16) || '…' AS content_hash,
       redaction_count, policy_version, captured_at
FROM memory_fabric.capture_memory(
    tenant_id      => 'tenant_acme_prod',
    user_id        => 'cust_8861',
    intent_id      => 'support.refund.execute',
    source         => 'operator',
    text           => 'Customer cust_8861 has a verbal NDA limiting PAN exposure to last-4 only.',
    evidence_refs  => '["operator:override:fb_2026_05_09_x9"]',
    classification => 'PII');
\pset expanded off

\echo
\echo '== Redaction before write ================================================='
\echo 'An agent captures a turn that contains a card number and an API key. What is'
\echo 'stored has neither; the row records how many redactions were applied.'
\echo
SELECT text, redaction_count, redaction_rules
FROM memory_fabric.capture_memory(
    tenant_id      => 'tenant_acme_prod',
    user_id        => 'cust_8861',
    source         => 'agent',
    text           => 'Customer read out card 4111 1111 1111 1111; our key sk_live_4eC39HqLyjWDarjtT1zdp7dc leaked in the log.',
    classification => 'PII');

\echo
\echo '== Validation: nothing is written on a bad capture ========================'
\set ON_ERROR_STOP 0
\set SHOW_CONTEXT never
SELECT memory_fabric.capture_memory('tenant_acme_prod', 'unclassified fact', 'agent', 'secret');
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
SELECT memory_fabric.capture_memory('tenant_acme_prod', 'who said this?', 'user', 'PUBLIC');
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE

\echo
\echo '== Append-only: captured rows cannot be altered, by anyone ==============='
UPDATE memory_fabric.candidates SET text = 'Customer has no NDA.';
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
DELETE FROM memory_fabric.candidates;
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1

\echo
\echo '== The capture log =========================================================='
SELECT source, classification, left(text, 60) AS text, redaction_count
FROM memory_fabric.candidates ORDER BY captured_at;
