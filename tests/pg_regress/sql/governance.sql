-- Governance: consent (every seed 001 invariant), corrections, remembered rejections, erasure,
-- policies, replay and metrics.
\set SHOW_CONTEXT never
CREATE FUNCTION pg_temp.cap(tenant text, body text, src text, cls text, usr text DEFAULT NULL,
                            ent text DEFAULT NULL, pred text DEFAULT NULL, val jsonb DEFAULT NULL,
                            wc text DEFAULT NULL, meta jsonb DEFAULT '{}', sup text DEFAULT NULL, act text DEFAULT 'agent:a')
RETURNS text LANGUAGE sql AS $$
    SELECT id FROM memory_fabric.capture_memory(tenant, body, src, cls, user_id => usr, entity => ent, predicate => pred,
                                                value => val, write_class => wc, metadata => meta, supersedes => sup, actor => act)
$$;

-- 1. Consent. Invariant: a preference / decision_outcome / correction on a PII attribute resolves
-- a live consent_id or is rejected at the candidate stage.
SELECT pg_temp.cap('t_gov', 'Customer cus_77 prefers email.', 'agent', 'PII', usr => 'cus_77', ent => 'customer:cus_77',
                   pred => 'prefers_communication_channel', val => '"email"', wc => 'preference') AS pref \gset
SELECT status, reason, consent_id FROM memory_fabric.review_candidate(:'pref');
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'pref')) AS promote_without_consent;
-- the same fact as an evidence link needs no consent
SELECT status, consent_id FROM memory_fabric.review_candidate(
    pg_temp.cap('t_gov', 'Ticket 42 cites the customer''s channel preference.', 'agent', 'PII', usr => 'cus_77',
                wc => 'evidence_link'));
SELECT subject, purpose, predicates_allowed, classifications_allowed, basis, valid_until > now() AS valid,
       evidence_refs, revoked_at
FROM memory_fabric.record_consent('t_gov', 'cus_77', 'support_personalization', 'user_opt_in',
    predicates_allowed => ARRAY['prefers_communication_channel', 'preferred_language'],
    classifications_allowed => ARRAY['PII'], valid_until => now() + interval '365 days',
    evidence_refs => '["channel:app_chat:msg_881", "consent_screen:v3"]');
SELECT id AS cns FROM memory_fabric.consents WHERE tenant_id = 't_gov' AND subject = 'cus_77' \gset
-- with a live consent: matched, recorded on the review and on the promoted memory
SELECT pg_temp.cap('t_gov', 'Customer cus_77 prefers email for updates.', 'agent', 'PII', usr => 'cus_77',
                   ent => 'customer:cus_77', pred => 'prefers_communication_channel', val => '"email"',
                   wc => 'preference') AS pref2 \gset
SELECT status, reason, consent_id = :'cns' AS matched FROM memory_fabric.review_candidate(:'pref2');
SELECT id AS pref2_pm, consent_id = :'cns' AS consent_on_memory FROM memory_fabric.promote(:'pref2') \gset
SELECT :'consent_on_memory' AS consent_on_memory;
-- a predicate, classification or purpose the consent does not cover: rejected
SELECT status, reason FROM memory_fabric.review_candidate(pg_temp.cap('t_gov', 'Customer cus_77 lives in Lisbon.', 'agent',
    'PII', usr => 'cus_77', ent => 'customer:cus_77', pred => 'home_city', val => '"Lisbon"', wc => 'preference'));
SELECT status, reason FROM memory_fabric.review_candidate(pg_temp.cap('t_gov', 'Customer cus_77 prefers German.', 'agent',
    'PII', usr => 'cus_77', ent => 'customer:cus_77', pred => 'preferred_language', val => '"de"', wc => 'preference',
    meta => '{"purpose": "marketing"}'));
SELECT status, reason FROM memory_fabric.review_candidate(pg_temp.cap('t_gov', 'Customer cus_77 prefers German.', 'agent',
    'PII', usr => 'cus_77', ent => 'customer:cus_77', pred => 'preferred_language', val => '"de"', wc => 'preference',
    meta => '{"purpose": "support_personalization"}'));
-- invariant: cross-tenant consent does not exist
SELECT status, reason FROM memory_fabric.review_candidate(pg_temp.cap('t_gov_other', 'Customer cus_77 prefers email.',
    'agent', 'PII', usr => 'cus_77', ent => 'customer:cus_77', pred => 'prefers_communication_channel', val => '"email"',
    wc => 'preference'));
-- recall shows the consent on the row
SELECT text, consent_id = :'cns' AS consent FROM memory_fabric.recall('t_gov', NULL, user_id => 'cus_77',
    classification_allowed => ARRAY['PII']) WHERE consent_id IS NOT NULL;
-- invariant: consent records are never modified; a correction is a new record that supersedes
SELECT public.regress_try(format('UPDATE memory_fabric.consents SET purpose = %L WHERE id = %L', 'marketing', :'cns')) AS modify;
SELECT id AS cns2, supersedes = :'cns' AS supersedes_first FROM memory_fabric.record_consent('t_gov', 'cus_77',
    'support_personalization', 'user_opt_in', predicates_allowed => ARRAY['preferred_language'],
    classifications_allowed => ARRAY['PII'], supersedes => :'cns') \gset
SELECT :'supersedes_first' AS supersedes_first;
-- the superseded consent no longer matches new candidates; the superseding one does
SELECT status, reason FROM memory_fabric.review_candidate(pg_temp.cap('t_gov', 'Customer cus_77 prefers sms.', 'agent',
    'PII', usr => 'cus_77', ent => 'customer:cus_77', pred => 'prefers_communication_channel', val => '"sms"', wc => 'preference'));
SELECT status, consent_id = :'cns2' AS matched_new FROM memory_fabric.review_candidate(pg_temp.cap('t_gov',
    'Customer cus_77 prefers Portuguese.', 'agent', 'PII', usr => 'cus_77', ent => 'customer:cus_77',
    pred => 'preferred_language', val => '"pt"', wc => 'preference'));
-- invariant: revocation is honoured on the next recall; dependent records are tombstoned (retracted)
SELECT revoked_at IS NOT NULL AS revoked, revoked_by, revocation_reason
FROM memory_fabric.revoke_consent(:'cns', 'customer withdrew consent in app');
SELECT retracted_at IS NOT NULL AS retracted, retraction_reason FROM memory_fabric.promoted_memory WHERE id = :'pref2_pm';
SELECT payload ->> 'retracted' AS retracted FROM memory_fabric.events WHERE kind = 'memory.consent_revoked' AND subject_id = :'cns';
SELECT count(*) AS recalled FROM memory_fabric.recall('t_gov', NULL, user_id => 'cus_77', classification_allowed => ARRAY['PII'])
WHERE consent_id = :'cns';
SELECT visible, reasons FROM memory_fabric.explain_recall('t_gov', :'pref2_pm', user_id => 'cus_77',
    classification_allowed => ARRAY['PII']) \gset
SELECT :'visible' AS visible, regexp_replace(regexp_replace(:'reasons', '[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC', '<time>', 'g'),
                                            'cns_[0-9a-z_]+', 'cns_<id>', 'g') AS reasons;
SELECT public.regress_try(format('SELECT memory_fabric.revoke_consent(%L, %L)', :'cns', 'again')) AS revoke_twice;
SELECT public.regress_try($$SELECT memory_fabric.revoke_consent('cns_20260101t000000_000000000000', 'x')$$) AS unknown;
-- ... and an expired consent hides its memories at as_of, before any pass retracts them
SELECT id AS cns3 FROM memory_fabric.record_consent('t_gov', 'cus_88', 'support_personalization', 'contract',
    classifications_allowed => ARRAY['PII'], valid_until => now() + interval '1 hour') \gset
SELECT pg_temp.cap('t_gov', 'Customer cus_88 prefers phone.', 'agent', 'PII', usr => 'cus_88', ent => 'customer:cus_88',
                   pred => 'prefers_communication_channel', val => '"phone"', wc => 'preference') AS p88 \gset
SELECT status FROM memory_fabric.review_candidate(:'p88');
SELECT count(*) FROM memory_fabric.promote(:'p88');
SELECT (SELECT count(*) FROM memory_fabric.recall('t_gov', NULL, user_id => 'cus_88', classification_allowed => ARRAY['PII'],
                                                  as_of => clock_timestamp() + interval '30 minutes')) AS within_validity,
       (SELECT count(*) FROM memory_fabric.recall('t_gov', NULL, user_id => 'cus_88', classification_allowed => ARRAY['PII'],
                                                  as_of => clock_timestamp() + interval '2 hours')) AS after_expiry;
-- bad consent arguments
SELECT public.regress_try($$SELECT memory_fabric.record_consent('t_gov', '', 'p', 'b')$$) AS empty_subject;
SELECT public.regress_try($$SELECT memory_fabric.record_consent('t_gov', 's', 'p', 'b', valid_until => now() - interval '1 day')$$) AS past;
SELECT public.regress_try($$SELECT memory_fabric.record_consent('t_gov', 's', 'p', 'b', evidence_refs => '[1]')$$) AS bad_refs;
SELECT public.regress_try($$SELECT memory_fabric.record_consent('t_gov', 's', 'p', 'b', predicates_allowed => ARRAY[NULL])$$) AS null_predicate;
SELECT public.regress_try($$SELECT memory_fabric.record_consent('t_gov', 's', 'p', 'b', supersedes => 'cns_20260101t000000_000000000000')$$) AS unknown_supersedes;
SELECT public.regress_try(format('SELECT memory_fabric.record_consent(%L, %L, %L, %L, supersedes => %L)', 't_gov', 'someone_else', 'p', 'b', :'cns2')) AS other_subject;

-- 2. Corrections need the reviewer role, and supersede the memory they name.
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_gov_agent') THEN DROP ROLE regress_gov_agent; END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_gov_reviewer') THEN DROP ROLE regress_gov_reviewer; END IF;
END $$;
CREATE ROLE regress_gov_agent IN ROLE memory_fabric_agent;
CREATE ROLE regress_gov_reviewer IN ROLE memory_fabric_reviewer;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_gov_agent', 't_corr') a, memory_fabric.grant_tenant('regress_gov_reviewer', 't_corr') b;
SELECT id AS wrong FROM memory_fabric.promote((memory_fabric.review_candidate(
    pg_temp.cap('t_corr', 'The Porto office opens at 9.', 'agent', 'INTERNAL'))).candidate_id) \gset
SET memory_fabric.tenant_id = 't_corr';
SET ROLE regress_gov_agent;
SELECT public.regress_try(format('SELECT memory_fabric.capture_memory(%L, %L, %L, %L, write_class => %L, supersedes => %L)',
    't_corr', 'The Porto office opens at 10.', 'agent', 'INTERNAL', 'correction', :'wrong')) AS agent_correction;
SET ROLE regress_gov_reviewer;
SELECT id AS fix FROM memory_fabric.capture_memory('t_corr', 'Porto opening hour is ten.', 'operator', 'INTERNAL',
    write_class => 'correction', supersedes => :'wrong', actor => 'op:rita') \gset
SELECT status, contradiction_resolution, contradicts_id = :'wrong' AS names_it, reason, reviewer FROM memory_fabric.review_candidate(:'fix');
RESET ROLE;
SELECT supersedes_id = :'wrong' AS supersedes FROM memory_fabric.approve(:'fix', 'op:sam');
SELECT retracted_at IS NOT NULL AS retracted, retraction_reason LIKE 'superseded by%' AS superseded FROM memory_fabric.promoted_memory WHERE id = :'wrong';
RESET memory_fabric.tenant_id;

-- 3. Remembered rejections: the same noise is filtered next time, pointing at the rejection.
SELECT pg_temp.cap('t_rej', 'Customer said thanks and goodbye.', 'operator', 'PUBLIC', act => 'op:a') AS noise \gset
SELECT reviewer FROM memory_fabric.review_candidate(:'noise');
SELECT action FROM memory_fabric.reject(:'noise', 'op:b', 'small talk');
SELECT status, reason, rejection_of_id = :'noise' AS points_at_it, round(similarity::numeric, 2) AS similarity
FROM memory_fabric.review_candidate(pg_temp.cap('t_rej', 'Customer said thanks and goodbye!', 'agent', 'PUBLIC'));
SELECT status, reason, rejection_of_id = :'noise' AS points_at_it
FROM memory_fabric.review_candidate(pg_temp.cap('t_rej', 'customer said THANKS and goodbye.', 'agent', 'PUBLIC'));
SELECT status, rejection_of_id FROM memory_fabric.review_candidate(
    pg_temp.cap('t_rej', 'Customer said thanks and asked to close the account.', 'agent', 'PUBLIC'));
-- other users' rejections are not this user's
SELECT status FROM memory_fabric.review_candidate(pg_temp.cap('t_rej', 'Customer said thanks and goodbye.', 'agent', 'PUBLIC',
    usr => 'u9'));

-- 4. Policies: versions are append-only and numbered across tenants; reviews record theirs.
SELECT tenant_id, version > 1 AS new_version, body -> 'trust' ->> 'min_confidence' AS floor, note, created_by
FROM memory_fabric.set_policy('t_pol', '{"trust": {"min_confidence": 0.8}}', note => 'stricter floor');
SELECT status, reason, policy_version = (SELECT max(version) FROM memory_fabric.policies WHERE tenant_id = 't_pol') AS records_version
FROM memory_fabric.review_candidate(pg_temp.cap('t_pol', 'A guess.', 'system', 'PUBLIC'));
SELECT status, reason FROM memory_fabric.review_candidate(
    (SELECT id FROM memory_fabric.capture_memory('t_pol', 'A weak guess.', 'system', 'PUBLIC', confidence => 0.5)));
-- a second patch merges into the first
SELECT body -> 'trust' ->> 'min_confidence' AS floor, body -> 'limits' ->> 'text_max_bytes' AS text_max
FROM memory_fabric.set_policy('t_pol', '{"limits": {"text_max_bytes": 20}}');
SELECT public.regress_try($$SELECT memory_fabric.capture_memory('t_pol', 'This text is longer than twenty bytes.', 'agent', 'PUBLIC')$$) AS over_new_limit;
-- an invalid patch writes nothing
SELECT count(*) AS versions_before FROM memory_fabric.policies \gset
SELECT public.regress_try($$SELECT memory_fabric.set_policy('t_pol', '{"redaction": {"rules": [{"name": "x", "pattern": "("}]}}')$$) AS bad_regex;
SELECT public.regress_try($$SELECT memory_fabric.set_policy('t_pol', '{"thresholds": {"m": {"duplicate": 0.5, "contradiction": 0.9}}}')$$) AS bad_thresholds;
SELECT public.regress_try($$SELECT memory_fabric.set_policy('t_pol', '[1]')$$) AS not_an_object;
SELECT count(*) = :versions_before AS nothing_written FROM memory_fabric.policies;
SET ROLE regress_gov_reviewer;
SET memory_fabric.tenant_id = 't_corr';
SELECT public.regress_try($$SELECT memory_fabric.set_policy('t_corr', '{}')$$) AS reviewer_sets_policy;
RESET ROLE;
RESET memory_fabric.tenant_id;

-- 5. Erasure: content becomes a tombstone and its hash a keyed digest; ids, timestamps and the
-- audit trail remain (tests/pg_regress/sql/integrity.sql scans every table for what was erased).
SELECT pg_temp.cap('t_erase', 'Customer u7 card ends 4242 and lives at Rua Augusta 12.', 'agent', 'PII', usr => 'u7') AS e1 \gset
SELECT status FROM memory_fabric.review_candidate(:'e1');
SELECT id AS e1_pm FROM memory_fabric.promote(:'e1') \gset
SELECT pg_temp.cap('t_erase', 'Customer u8 prefers chat.', 'agent', 'INTERNAL', usr => 'u8') AS keep \gset
SELECT id, content_hash AS hash_before, captured_at AS captured_before FROM memory_fabric.candidates WHERE id = :'e1' \gset
SELECT * FROM memory_fabric.forget_subject('t_erase', 'u7', 'GDPR request 2026-118');
SELECT text, value, embedding IS NULL AS no_embedding, metadata, erased_at IS NOT NULL AS erased,
       content_hash <> :'hash_before' AND content_hash ~ '^[0-9a-f]{64}$' AS hash_keyed, captured_at = :'captured_before' AS time_kept
FROM memory_fabric.candidates WHERE id = :'e1';
SELECT text, embedding IS NULL AS no_embedding, embedding_bits IS NULL AS no_bits, retracted_at IS NOT NULL AS retracted,
       retraction_reason, erased_at IS NOT NULL AS erased
FROM memory_fabric.promoted_memory WHERE id = :'e1_pm';
SELECT text FROM memory_fabric.candidates WHERE id = :'keep';
SELECT count(*) AS recalled FROM memory_fabric.recall('t_erase', NULL, user_id => 'u7', classification_allowed => ARRAY['PII']);
SELECT payload ->> 'candidates' AS candidates, payload ->> 'memories' AS memories, payload ->> 'reason' AS reason
FROM memory_fabric.events WHERE tenant_id = 't_erase' AND kind = 'memory.erased';
SELECT stage, detail ->> 'text' AS text FROM memory_fabric.memory_history(:'e1_pm') WHERE stage IN ('captured', 'erased', 'promoted', 'retracted');
SELECT public.regress_try(format('SELECT memory_fabric.review_candidate(%L)', :'e1')) AS review_erased;
SELECT * FROM memory_fabric.forget_subject('t_erase', 'u7', 'again');
-- the guard allows exactly the tombstone, for every role, and nothing else
SELECT public.regress_try(format('UPDATE memory_fabric.candidates SET erased_at = now(), text = %L WHERE id = %L', 'gone', :'keep')) AS fake_tombstone;
SELECT public.regress_try(format('UPDATE memory_fabric.candidates SET erased_at = now(), text = %L, value = NULL, embedding = NULL, metadata = %L, source = %L WHERE id = %L', '[erased]', '{}', 'system', :'keep')) AS tombstone_plus_edit;
SELECT public.regress_try(format('UPDATE memory_fabric.candidates SET erased_at = NULL WHERE id = %L', :'e1')) AS unerase;
-- purge: a memory expired longer than its retention loses its content
SELECT version > 0 FROM memory_fabric.set_policy('t_purge', '{"ttl_seconds": {"working": 1}, "retention_seconds": {"default": 0}}');
SELECT pg_temp.cap('t_purge', 'Working note about a call.', 'agent', 'PII') AS w \gset
SELECT proposed_tier FROM memory_fabric.review_candidate(:'w');
SELECT id AS w_pm FROM memory_fabric.promote(:'w') \gset
SELECT pg_sleep(1.2);
SELECT memory_fabric.purge_expired('t_purge') AS purged;
SELECT text, erased_at IS NOT NULL AS erased FROM memory_fabric.promoted_memory WHERE id = :'w_pm';
SELECT memory_fabric.purge_expired('t_purge') AS purged_again;
-- retention is per write class: preferences here keep their content an hour past expiry
SELECT version > 0 FROM memory_fabric.set_policy('t_purge', '{"retention_seconds": {"preference": 3600}}');
SELECT pg_temp.cap('t_purge', 'Prefers morning calls for billing questions.', 'agent', 'PII', wc => 'preference') AS wp \gset
SELECT pg_temp.cap('t_purge', 'Renewal decided: two-year plan signed.', 'agent', 'PII', wc => 'decision_outcome') AS wd \gset
-- (these PII notes need no consent under this tenant's policy)
SELECT (memory_fabric.set_policy('t_purge', '{"consent": {"classifications": []}}')).version > 0 AS no_consent_needed;
SELECT r1.status, r2.status FROM memory_fabric.review_candidate(:'wp') r1, memory_fabric.review_candidate(:'wd') r2;
SELECT count(*) FROM memory_fabric.promote(:'wp') p1, memory_fabric.promote(:'wd') p2;
SELECT pg_sleep(1.2);
SELECT memory_fabric.purge_expired('t_purge') AS purged_only_the_decision;
SELECT write_class, erased_at IS NOT NULL AS erased FROM memory_fabric.promoted_memory
WHERE candidate_id IN (:'wp', :'wd') ORDER BY write_class;
SELECT public.regress_try($$SELECT memory_fabric.purge_expired('t_purge', batch_size => 0)$$) AS bad_batch;
SET ROLE regress_gov_reviewer;
SET memory_fabric.tenant_id = 't_corr';
SELECT public.regress_try($$SELECT memory_fabric.forget_subject('t_corr', 'u1', 'x')$$) AS reviewer_erases;
SELECT public.regress_try($$SELECT memory_fabric.purge_expired('t_corr')$$) AS reviewer_purges;
RESET ROLE;
RESET memory_fabric.tenant_id;

-- 6. Replay: why a memory was hidden at an instant, and its whole history.
SELECT pg_temp.cap('t_replay', 'The on-call lead is Dana.', 'agent', 'INTERNAL', usr => 'u1') AS d \gset
SELECT status FROM memory_fabric.review_candidate(:'d');
SELECT id AS d_pm, promoted_at AS d_at FROM memory_fabric.promote(:'d') \gset
SELECT count(*) FROM memory_fabric.retract(:'d_pm', 'rotation ended', 'op:b');
CREATE FUNCTION pg_temp.why(r text[]) RETURNS text[] LANGUAGE sql AS
    $$ SELECT array_agg(regexp_replace(regexp_replace(x, '[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC', '<time>', 'g'),
                                      '(cns|pm|mc)_[0-9a-z_]+', '\1_<id>', 'g')) FROM unnest(r) x $$;
SELECT 'before promotion' AS at, visible, pg_temp.why(reasons) FROM memory_fabric.explain_recall('t_replay', :'d_pm', user_id => 'u1', as_of => '2000-01-01')
UNION ALL SELECT 'at promotion', visible, pg_temp.why(reasons) FROM memory_fabric.explain_recall('t_replay', :'d_pm', user_id => 'u1', as_of => :'d_at')
UNION ALL SELECT 'now', visible, pg_temp.why(reasons) FROM memory_fabric.explain_recall('t_replay', :'d_pm', user_id => 'u1')
UNION ALL SELECT 'other user, PII only', visible, pg_temp.why(reasons) FROM memory_fabric.explain_recall('t_replay', :'d_pm', user_id => 'u2',
    classification_allowed => ARRAY['PII'], as_of => :'d_at');
SELECT stage, (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(detail) k) AS recorded,
       detail ->> 'by' AS by, detail ->> 'reason' AS reason
FROM memory_fabric.memory_history(:'d');
SELECT public.regress_try($$SELECT * FROM memory_fabric.explain_recall('t_replay', 'pm_20260101t000000_000000000000')$$) AS unknown_memory;
SELECT public.regress_try($$SELECT * FROM memory_fabric.memory_history('mc_20260101t000000_000000000000')$$) AS unknown_history;
-- the recall log: what a past run saw, its query redacted
SET memory_fabric.log_recalls = on;
SELECT count(*) FROM memory_fabric.recall('t_replay', NULL, user_id => 'u1', query_text => 'who is on call? card 4111 1111 1111 1111');
SELECT count(*) FROM memory_fabric.recall('t_gov', NULL, user_id => 'cus_77', classification_allowed => ARRAY['PII']);
SELECT count(*) FROM memory_fabric.recall('t_corr', NULL);
RESET memory_fabric.log_recalls;
SELECT count(*) FROM memory_fabric.recall('t_replay', NULL, user_id => 'u1');
SELECT tenant_id, role_name, user_id, query_text, cardinality(memory_ids) AS rows_returned, max_recalls
FROM memory_fabric.recall_log ORDER BY recalled_at;
SELECT public.regress_try($$SET memory_fabric.log_recalls = off$$) AS superuser_can_set;

-- 7. Metrics, per tenant.
SELECT tenant_id, captures, verdicts, queue_depth, contradiction_backlog, promotions_by_tier, promotions_auto,
       promotions_human, recalls, recall_hit_rate, pii_promoted_without_consent
FROM memory_fabric.metrics WHERE tenant_id IN ('t_gov', 't_corr', 't_replay') ORDER BY tenant_id;
SELECT count(*) AS tenants_with_pii_without_consent FROM memory_fabric.metrics WHERE pii_promoted_without_consent > 0;
SELECT median_contradiction_resolution > interval '0' AS measured FROM memory_fabric.metrics WHERE tenant_id = 't_corr';

DROP ROLE regress_gov_agent;
DROP ROLE regress_gov_reviewer;
