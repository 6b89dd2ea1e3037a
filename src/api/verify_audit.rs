//! `memory_fabric.verify_audit()`: walks a tenant's audit chain (sql/schema.sql, the audit trail's
//! hash chain) and reports the first link that does not hold.

use pgrx::prelude::*;

extension_sql!(
    r#"
-- One statement, so one snapshot: a link and its row commit together. The first break in chain
-- order wins; rows the chain does not hold (inserted past its trigger) come after every link;
-- last, a chain that ends before its head (its newest links and their rows deleted).
CREATE FUNCTION memory_fabric.verify_audit(tenant_id text)
RETURNS TABLE (links bigint, intact boolean, broken_seq bigint, broken_table text, broken_id text, problem text,
               head_seq bigint, head_digest text)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    t text := verify_audit.tenant_id;
    zero constant text := pg_catalog.repeat('0', 64);
BEGIN
    PERFORM memory_fabric._require_tenant(t);
    RETURN QUERY
    WITH ch AS (
        SELECT c.seq, c.source, c.row_id, c.content_digest, c.prev_digest, c.digest,
               pg_catalog.lag(c.seq) OVER w AS before_seq, pg_catalog.lag(c.digest) OVER w AS before_digest
        FROM memory_fabric.audit_chain c WHERE c.tenant_id = t
        WINDOW w AS (ORDER BY c.seq)
    ), src AS (
        SELECT 'events'::text AS source, e.id, pg_catalog.to_jsonb(e) AS r
        FROM memory_fabric.events e WHERE e.tenant_id = t
        UNION ALL
        SELECT 'decisions', d.id, pg_catalog.to_jsonb(d) FROM memory_fabric.decisions d WHERE d.tenant_id = t
    ), head AS (
        SELECT h.seq, h.digest FROM memory_fabric.audit_heads h WHERE h.tenant_id = t
    ), last AS (
        SELECT coalesce(max(ch.seq), 0) AS seq,
               coalesce((SELECT x.digest FROM ch x ORDER BY x.seq DESC LIMIT 1), zero) AS digest,
               count(*) AS n
        FROM ch
    ), breaks AS (
        SELECT b.seq, b.source, b.row_id, b.problem, 0 AS o FROM (
            SELECT ch.seq, ch.source, ch.row_id,
                   CASE WHEN ch.seq <> coalesce(ch.before_seq, 0) + 1
                            THEN pg_catalog.format('links %s to %s are missing', coalesce(ch.before_seq, 0) + 1, ch.seq - 1)
                        WHEN ch.prev_digest <> coalesce(ch.before_digest, zero)
                            THEN 'the link does not carry the digest of the link before it'
                        WHEN s.id IS NULL
                            THEN 'the row is missing'
                        WHEN memory_fabric._audit_digest(ch.prev_digest, ch.seq, memory_fabric._audit_fixed(ch.source, s.r),
                                                         ch.content_digest) <> ch.digest
                            THEN 'the row or its link was altered'
                        WHEN s.r ->> 'audit_salt' IS NOT NULL
                             AND memory_fabric._audit_content(ch.source, s.r) IS DISTINCT FROM ch.content_digest
                            THEN 'the row''s text was altered'
                   END AS problem
            FROM ch LEFT JOIN src s ON s.source = ch.source AND s.id = ch.row_id) b
        WHERE b.problem IS NOT NULL
        UNION ALL
        SELECT NULL, s.source, s.id, 'the row is not in the chain', 1 FROM src s
        WHERE NOT EXISTS (SELECT 1 FROM memory_fabric.audit_chain c WHERE c.source = s.source AND c.row_id = s.id)
        UNION ALL
        SELECT l.seq + 1, NULL, NULL,
               pg_catalog.format('the chain ends at link %s but its head is link %s', l.seq, coalesce(h.seq, 0)), 2
        FROM last l LEFT JOIN head h ON true
        WHERE coalesce(h.seq, 0) <> l.seq OR coalesce(h.digest, zero) <> l.digest
    ), first AS (
        SELECT * FROM breaks ORDER BY o, seq, source, row_id LIMIT 1
    )
    SELECT l.n, f.problem IS NULL, f.seq, f.source, f.row_id, f.problem, h.seq, h.digest
    FROM last l LEFT JOIN first f ON true LEFT JOIN head h ON true;
END
$$;
COMMENT ON FUNCTION memory_fabric.verify_audit IS
    'Recompute a tenant''s audit hash chain over its events and decisions and report the first link that does not hold, and the head''s digest to keep elsewhere';
REVOKE ALL ON FUNCTION memory_fabric.verify_audit(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.verify_audit(text) TO memory_fabric_admin;
"#,
    name = "verify_audit",
    requires = [_require_tenant],
);
