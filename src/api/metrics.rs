//! The `memory_fabric.metrics` view: the evaluation metrics per tenant.

use crate::policy;
use pgrx::prelude::*;

/// [classifications, write classes] that need consent under the tenant's policy (for metrics).
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _consent_rule(tenant_id: &str) -> TableIterator<'static, (name!(classifications, Vec<String>), name!(write_classes, Vec<String>))> {
    let p = Spi::connect(|client| policy::for_tenant(client, tenant_id));
    TableIterator::once((p.policy.consent_classifications.clone(), p.policy.consent_write_classes.clone()))
}

extension_sql!(
    r#"
-- The evaluation metrics, per tenant (row-level security applies: an admin sees the
-- pinned tenant).
CREATE VIEW memory_fabric.metrics WITH (security_invoker = true) AS
WITH eff AS (
    SELECT DISTINCT ON (r.candidate_id) r.tenant_id, r.candidate_id, r.status, r.contradiction_resolution, r.reviewed_at
    FROM memory_fabric.reviews r ORDER BY r.candidate_id, r.reviewed_at DESC, r.id DESC
), resolved AS (
    -- a contradiction is resolved by the promotion, rejection or edit of the candidate that raised it
    SELECT e.tenant_id, min(coalesce(p.promoted_at, d.decided_at)) - min(cr.reviewed_at) AS took
    FROM memory_fabric.reviews cr
    JOIN eff e ON e.candidate_id = cr.candidate_id
    LEFT JOIN memory_fabric.promoted_memory p ON p.candidate_id = cr.candidate_id
    LEFT JOIN memory_fabric.decisions d ON d.candidate_id = cr.candidate_id AND d.action IN ('reject', 'edit')
    WHERE cr.status = 'contradicts' AND (p.id IS NOT NULL OR d.id IS NOT NULL)
    GROUP BY e.tenant_id, cr.candidate_id
)
SELECT t.tenant_id,
       (SELECT count(*) FROM memory_fabric.candidates c WHERE c.tenant_id = t.tenant_id) AS captures,
       (SELECT coalesce(jsonb_object_agg(v.status, v.n), '{}') FROM (
            SELECT e.status, count(*) AS n FROM eff e WHERE e.tenant_id = t.tenant_id GROUP BY e.status) v) AS verdicts,
       (SELECT count(*) FROM memory_fabric.review_queue q WHERE q.tenant_id = t.tenant_id) AS queue_depth,
       (SELECT pg_catalog.clock_timestamp() - min(q.enqueued_at) FROM memory_fabric.review_queue q
        WHERE q.tenant_id = t.tenant_id) AS oldest_queued_age,
       (SELECT count(*) FROM eff e WHERE e.tenant_id = t.tenant_id AND e.status = 'contradicts'
          AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = e.candidate_id)
          AND NOT EXISTS (SELECT 1 FROM memory_fabric.decisions d WHERE d.candidate_id = e.candidate_id
                          AND d.action IN ('reject', 'edit'))) AS contradiction_backlog,
       (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY r.took) FROM resolved r WHERE r.tenant_id = t.tenant_id)
           AS median_contradiction_resolution,
       (SELECT coalesce(jsonb_object_agg(v.tier, v.n), '{}') FROM (
            SELECT p.tier, count(*) AS n FROM memory_fabric.promoted_memory p WHERE p.tenant_id = t.tenant_id
            GROUP BY p.tier) v) AS promotions_by_tier,
       (SELECT count(*) FROM memory_fabric.promoted_memory p WHERE p.tenant_id = t.tenant_id
          AND p.promoted_by = 'auto') AS promotions_auto,
       (SELECT count(*) FROM memory_fabric.promoted_memory p WHERE p.tenant_id = t.tenant_id
          AND p.promoted_by <> 'auto') AS promotions_human,
       (SELECT count(*) FROM memory_fabric.recall_log l WHERE l.tenant_id = t.tenant_id) AS recalls,
       (SELECT avg((pg_catalog.cardinality(l.memory_ids) > 0)::int)::double precision FROM memory_fabric.recall_log l
        WHERE l.tenant_id = t.tenant_id) AS recall_hit_rate,
       (SELECT count(*) FROM memory_fabric.promoted_memory p, memory_fabric._consent_rule(t.tenant_id) rule
        WHERE p.tenant_id = t.tenant_id AND p.consent_id IS NULL
          AND p.classification = ANY (rule.classifications) AND p.write_class = ANY (rule.write_classes))
           AS pii_promoted_without_consent
FROM (SELECT DISTINCT c.tenant_id FROM memory_fabric.candidates c) t;
COMMENT ON VIEW memory_fabric.metrics IS
    'Per tenant: captures, verdicts, queue depth and age, contradiction backlog and resolution time, promotions, recall hit rate, memories promoted without consent';
-- the view calls it as the querying role
REVOKE ALL ON FUNCTION memory_fabric._consent_rule(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._consent_rule(text) TO memory_fabric_admin;
GRANT SELECT ON memory_fabric.metrics TO memory_fabric_admin;
GRANT ALL ON memory_fabric.metrics TO @extowner@;
"#,
    name = "metrics",
    requires = [_consent_rule],
);
