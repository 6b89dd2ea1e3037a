-- promote, approve, reject, edit, retract: the lifecycle and every refusal.
\set SHOW_CONTEXT never

-- The seed 000 worked example: an operator correction, reviewed to durable / human.
SELECT id AS nda FROM memory_fabric.capture_memory(
    tenant_id => 'tenant_acme_prod', user_id => 'cust_8861', intent_id => 'support.refund.execute',
    source => 'operator', actor => 'operator:alice', classification => 'PII',
    text => 'Customer cust_8861 has a verbal NDA limiting PAN exposure to last-4 only.',
    evidence_refs => '["operator:override:fb_2026_05_09_x9"]') \gset
SELECT status, proposed_tier, priority_score, reviewer, reason FROM memory_fabric.review_candidate(:'nda');
-- refused without approval
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'nda'));
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L, approver => ''operator:bob'')', :'nda'));
-- refused when the same person approves (four eyes)
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, ''operator:alice'')', :'nda'));
-- approved by another
SELECT tier, priority, promoted_by, expires_at, in_contradiction, candidate_id = :'nda' AS from_candidate,
       text, evidence_refs, classification, user_id, intent_scope
FROM memory_fabric.approve(:'nda', 'operator:bob', notes => 'confirmed with the account team');
SELECT action, decided_by, notes FROM memory_fabric.decisions WHERE candidate_id = :'nda';
SELECT count(*) AS still_queued FROM memory_fabric.review_queue WHERE candidate_id = :'nda';
-- approving or promoting twice
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, ''operator:carol'')', :'nda'));
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'nda'));
SELECT public.regress_try(format('SELECT memory_fabric.review_candidate(%L)', :'nda'));

-- TTL per tier: working 1 hour, episodic 30 days, semantic 365 days, durable none.
CREATE FUNCTION pg_temp.ttl(src text, cls text, intent text) RETURNS interval LANGUAGE plpgsql AS $$
DECLARE c text; m memory_fabric.promoted_memory;
BEGIN
    SELECT id INTO c FROM memory_fabric.capture_memory('t_ttl', format('TTL probe %s %s %s', src, cls, intent), src, cls,
                                                        intent_id => intent);
    PERFORM memory_fabric.review_candidate(c);
    SELECT * INTO m FROM memory_fabric.promote(c);
    RETURN m.expires_at - m.promoted_at;
END $$;
SELECT pg_temp.ttl('agent', 'PII', 'sales.x') AS working, pg_temp.ttl('agent', 'PUBLIC', 'support.x') AS episodic,
       pg_temp.ttl('agent', 'PUBLIC', NULL) AS semantic;

-- Not promotable: unreviewed, duplicate, blocked contradiction, rejected by review.
SELECT id AS fresh FROM memory_fabric.capture_memory('t_life', 'Deploys are frozen on Fridays.', 'agent', 'INTERNAL') \gset
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'fresh'));
SELECT status FROM memory_fabric.review_candidate(:'fresh');
SELECT id AS fresh_pm FROM memory_fabric.promote(:'fresh') \gset
SELECT id AS dup FROM memory_fabric.capture_memory('t_life', 'Deploys are frozen on Fridays!', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'dup');
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'dup'));
SELECT id AS blocked FROM memory_fabric.capture_memory('t_life', 'Deploys are frozen on Mondays.', 'agent', 'INTERNAL') \gset
SELECT status, contradiction_resolution FROM memory_fabric.review_candidate(:'blocked');
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'blocked'));
INSERT INTO memory_fabric.policies (tenant_id, version, body) VALUES ('t_life_strict', 20, '{"trust": {"min_confidence": 0.9}}');
SELECT id AS weak FROM memory_fabric.capture_memory('t_life_strict', 'Maybe deploys are frozen.', 'agent', 'INTERNAL', confidence => 0.2) \gset
SELECT status, reason FROM memory_fabric.review_candidate(:'weak');
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'weak'));

-- Supersede retracts the older memory in the same transaction.
SELECT id AS newer FROM memory_fabric.capture_memory('t_life', 'Deploys are frozen on Thursdays.', 'system', 'INTERNAL') \gset
SELECT status, contradiction_resolution, contradicts_id = :'fresh_pm' AS older FROM memory_fabric.review_candidate(:'newer');
SELECT id AS newer_pm, supersedes_id = :'fresh_pm' AS supersedes FROM memory_fabric.promote(:'newer') \gset
SELECT retracted_at IS NOT NULL AS retracted, retracted_by = :'newer_pm' AS by_newer, retraction_reason LIKE 'superseded by pm\_%' AS reason
FROM memory_fabric.promoted_memory WHERE id = :'fresh_pm';
-- at one instant: recall as of any moment sees exactly one of the two
SELECT o.retracted_at = n.promoted_at AS same_instant,
       (SELECT array_agg(r.memory_id = :'newer_pm') FROM memory_fabric.recall('t_life', NULL, as_of => n.promoted_at) r) AS at_promotion,
       (SELECT array_agg(r.memory_id = :'fresh_pm') FROM memory_fabric.recall('t_life', NULL, as_of => n.promoted_at - interval '1 microsecond') r)
           AS just_before
FROM memory_fabric.promoted_memory o, memory_fabric.promoted_memory n WHERE o.id = :'fresh_pm' AND n.id = :'newer_pm';

-- The promoted set changed since review: two near-duplicates reviewed before either was promoted.
SELECT id AS twin_a FROM memory_fabric.capture_memory('t_twins', 'The VPN certificate expires in March.', 'agent', 'INTERNAL') \gset
SELECT id AS twin_b FROM memory_fabric.capture_memory('t_twins', 'The VPN certificate expires in March!', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'twin_a');
SELECT status FROM memory_fabric.review_candidate(:'twin_b');
SELECT count(*) AS promoted FROM memory_fabric.promote(:'twin_a');
SELECT public.regress_try(format('SELECT memory_fabric.promote(%L)', :'twin_b'));
SELECT status, duplicate_of_id IS NOT NULL AS points_at_twin FROM memory_fabric.review_candidate(:'twin_b');

-- reject: never promotable afterwards.
SELECT id AS noise FROM memory_fabric.capture_memory('tenant_acme_prod', 'Customer cust_8861 said hello.', 'operator', 'PII',
    user_id => 'cust_8861', actor => 'operator:alice') \gset
SELECT reviewer FROM memory_fabric.review_candidate(:'noise');
SELECT action, decided_by, notes FROM memory_fabric.reject(:'noise', 'operator:bob', 'small talk, not a fact');
SELECT count(*) FROM memory_fabric.review_queue WHERE candidate_id = :'noise';
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, ''operator:carol'')', :'noise'));
SELECT public.regress_try(format('SELECT memory_fabric.reject(%L, ''operator:carol'', ''again'')', :'noise'));
SELECT public.regress_try(format('SELECT memory_fabric.review_candidate(%L)', :'noise'));

-- edit: a new operator candidate that supersedes the old, reviewed at once.
SELECT id AS draft FROM memory_fabric.capture_memory('tenant_acme_prod', 'Customer cust_8861 prefers calls in the mornign.', 'operator', 'PII',
    user_id => 'cust_8861', actor => 'operator:alice') \gset
SELECT reviewer FROM memory_fabric.review_candidate(:'draft');
SELECT status, proposed_tier, reviewer, candidate_id <> :'draft' AS new_candidate
FROM memory_fabric.edit(:'draft', 'operator:bob', 'Customer cust_8861 prefers calls in the morning.');
SELECT c.text, c.source, c.actor, c.supersedes = :'draft' AS supersedes_draft, c.metadata ->> 'edited_from' = :'draft' AS edited_from
FROM memory_fabric.candidates c WHERE c.supersedes = :'draft';
SELECT action, decided_by, new_candidate_id IS NOT NULL AS has_new FROM memory_fabric.decisions WHERE candidate_id = :'draft';
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, ''operator:carol'')', :'draft'));
-- the editor is the new candidate's actor, so another reviewer approves it
SELECT id AS edited FROM memory_fabric.candidates WHERE supersedes = :'draft' \gset
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, ''operator:bob'')', :'edited'));
SELECT text, promoted_by FROM memory_fabric.approve(:'edited', 'operator:carol');

-- retract: write-once, evented, and the duplicates of a retracted memory go back to a human.
SELECT id AS orig FROM memory_fabric.capture_memory('t_retract', 'Office wifi password rotates monthly.', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'orig');
SELECT id AS orig_pm FROM memory_fabric.promote(:'orig') \gset
SELECT id AS echo FROM memory_fabric.capture_memory('t_retract', 'Office wifi password rotates monthly!', 'agent', 'INTERNAL') \gset
SELECT status, reviewer FROM memory_fabric.review_candidate(:'echo');
SELECT retracted_by, retraction_reason, retracted_at IS NOT NULL AS retracted
FROM memory_fabric.retract(:'orig_pm', 'policy changed: rotates weekly', 'operator:bob');
SELECT status, reviewer, reason FROM memory_fabric.reviews WHERE candidate_id = :'echo' ORDER BY reviewed_at;
SELECT proposed_text, reason FROM memory_fabric.review_queue WHERE candidate_id = :'echo';
SELECT kind, actor, payload ->> 'reason' AS reason FROM memory_fabric.events WHERE subject_id = :'orig_pm' ORDER BY created_at;
SELECT public.regress_try(format('SELECT memory_fabric.retract(%L, ''again'', ''operator:bob'')', :'orig_pm'));
SELECT memory_fabric.retract('pm_20260101t000000_000000000000', 'x', 'operator:bob');
\echo :SQLSTATE
SELECT public.regress_try(format('SELECT memory_fabric.retract(%L, '''', ''operator:bob'')', :'newer_pm'));
SELECT public.regress_try(format('SELECT memory_fabric.retract(%L, ''x'', NULL)', :'newer_pm'));

-- Bad arguments.
SELECT memory_fabric.promote('mc_20260101t000000_000000000000');
\echo :SQLSTATE
SELECT memory_fabric.promote(NULL);
\echo :SQLSTATE
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, NULL)', :'fresh'));
SELECT public.regress_try(format('SELECT memory_fabric.approve(%L, ''  '')', :'fresh'));
SELECT public.regress_try(format('SELECT memory_fabric.reject(%L, ''operator:bob'', NULL)', :'blocked'));
SELECT public.regress_try(format('SELECT memory_fabric.edit(%L, ''operator:bob'', '''')', :'blocked'));
