-- Invariants after a load run (as the superuser). Each row is one invariant and the number of
-- rows breaking it; every count must be 0.
SELECT pg_stat_force_next_flush();
SELECT pg_sleep(1.5);
SELECT pg_stat_clear_snapshot();
WITH live AS (SELECT * FROM memory_fabric.promoted_memory WHERE retracted_at IS NULL),
checks(invariant, violations) AS (
  -- dedup: no two live memories of one scope with the same content
  SELECT 'two live duplicates', count(*) FROM (
      SELECT 1 FROM live GROUP BY tenant_id, user_id, intent_scope, content_hash HAVING count(*) > 1) d
  UNION ALL
  -- contradictions are resolved or surfaced, never silent: two live memories of one scope with
  -- the same fact key and different values must point at each other
  SELECT 'silent live contradiction', count(*) FROM live a JOIN live b
      ON b.tenant_id = a.tenant_id AND b.user_id IS NOT DISTINCT FROM a.user_id AND b.entity = a.entity
     AND b.predicate = a.predicate AND b.value IS DISTINCT FROM a.value AND a.id < b.id
  WHERE a.contradicts_id IS DISTINCT FROM b.id AND b.contradicts_id IS DISTINCT FROM a.id
  UNION ALL
  -- promotion: every memory has its candidate, and a review of that candidate that allows it
  SELECT 'memory without a promotable review', count(*) FROM memory_fabric.promoted_memory m
  LEFT JOIN memory_fabric.reviews r ON r.id = m.review_id AND r.candidate_id = m.candidate_id
  WHERE r.id IS NULL OR NOT (r.status = 'pending_promotion'
                             OR (r.status = 'contradicts' AND r.contradiction_resolution IN ('supersede', 'coexist')))
  UNION ALL
  SELECT 'candidate promoted twice', count(*) FROM (
      SELECT 1 FROM memory_fabric.promoted_memory GROUP BY candidate_id HAVING count(*) > 1) d
  UNION ALL
  SELECT 'memory superseded twice', count(*) FROM (
      SELECT 1 FROM memory_fabric.promoted_memory WHERE supersedes_id IS NOT NULL GROUP BY supersedes_id HAVING count(*) > 1) d
  UNION ALL
  SELECT 'superseded memory still live', count(*) FROM memory_fabric.promoted_memory m
  JOIN memory_fabric.promoted_memory o ON o.id = m.supersedes_id WHERE o.retracted_at IS NULL
  UNION ALL
  -- the audit trail: one event per promotion and per retraction
  SELECT 'promotion without its event', count(*) FROM memory_fabric.promoted_memory m
  WHERE (SELECT count(*) FROM memory_fabric.events e WHERE e.kind = 'memory.promoted' AND e.subject_id = m.id) <> 1
  UNION ALL
  SELECT 'retraction without its event', count(*) FROM memory_fabric.promoted_memory m
  WHERE m.retracted_at IS NOT NULL
    AND (SELECT count(*) FROM memory_fabric.events e WHERE e.kind = 'memory.retracted' AND e.subject_id = m.id) <> 1
  UNION ALL
  -- acknowledged work is there: every committed outcome names a row that exists
  SELECT 'acknowledged capture missing', count(*) FROM load.outcomes o
  WHERE o.op = 'capture' AND NOT EXISTS (SELECT 1 FROM memory_fabric.candidates c WHERE c.id = o.subject)
  UNION ALL
  SELECT 'acknowledged promotion missing', count(*) FROM load.outcomes o
  WHERE o.op = 'pipeline' AND o.outcome LIKE '% promoted'
    AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory m WHERE m.candidate_id = o.subject)
  UNION ALL
  SELECT 'promotion not acknowledged', count(*) FROM memory_fabric.promoted_memory m
  WHERE m.tenant_id LIKE 't_load_%' AND NOT EXISTS (
      SELECT 1 FROM load.outcomes o WHERE o.op = 'pipeline' AND o.subject = m.candidate_id AND o.outcome LIKE '% promoted')
  UNION ALL
  -- recall never crossed a tenant: what each recall returned belongs to the tenant it named
  SELECT 'recalled from another tenant', count(*) FROM memory_fabric.recall_log l, unnest(l.memory_ids) x(id)
  LEFT JOIN memory_fabric.promoted_memory m ON m.id = x.id WHERE m.tenant_id IS DISTINCT FROM l.tenant_id
  UNION ALL
  -- append-only: nothing deleted anywhere; candidates never updated (no erasure ran); memories
  -- updated only to retract them, once each
  SELECT 'rows deleted', coalesce(sum(n_tup_del), 0)::bigint FROM pg_stat_user_tables WHERE schemaname = 'memory_fabric'
  UNION ALL
  SELECT 'candidates updated', n_tup_upd FROM pg_stat_user_tables WHERE schemaname = 'memory_fabric' AND relname = 'candidates'
  UNION ALL
  SELECT 'memory updates beyond retractions', greatest(s.n_tup_upd - (SELECT count(*) FROM memory_fabric.promoted_memory
                                                                     WHERE retracted_at IS NOT NULL), 0)
  FROM pg_stat_user_tables s WHERE s.schemaname = 'memory_fabric' AND s.relname = 'promoted_memory'
)
SELECT invariant, violations FROM checks;
