//! The audit trail's hash chain (sql/schema.sql, audit_chain and audit_heads): the digests of a
//! link (memory_fabric_core::audit), the deferred trigger that appends a link for every event and
//! decision when its transaction commits, and `memory_fabric.verify_audit()`, which walks a
//! tenant's chain and reports the first link that does not hold.

use memory_fabric_core::audit;
use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use pgrx::{JsonB, Uuid};

fn salt(u: Option<Uuid>) -> Option<String> {
    u.map(|u| u.to_string())
}

fn object(p: &JsonB) -> &serde_json::Map<String, serde_json::Value> {
    p.0.as_object()
        .unwrap_or_else(|| crate::error::raise(memory_fabric_core::Error::invalid("an event payload must be a JSON object")))
}

/// Internal: an event's commitment to its payload under its salt; NULL without a salt (erased).
#[pg_extern(immutable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _audit_event_content(audit_salt: Uuid, payload: JsonB) -> String {
    audit::event_content(Some(&audit_salt.to_string()), &payload.0).unwrap_or_default()
}

/// Internal: a decision's commitment to its notes under its salt.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _audit_decision_content(audit_salt: Option<Uuid>, notes: Option<&str>) -> Option<String> {
    audit::content_digest(salt(audit_salt).as_deref(), notes)
}

/// Internal: an event's link digest (memory_fabric_core::audit::event_link).
#[allow(clippy::too_many_arguments)]
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _audit_event_link(
    prev: &str,
    seq: i64,
    id: &str,
    tenant_id: &str,
    kind: &str,
    subject_id: Option<&str>,
    actor: Option<&str>,
    actor_role: Option<&str>,
    created_at: TimestampWithTimeZone,
    payload: JsonB,
    content: Option<&str>,
) -> String {
    let e = audit::Event { id, tenant_id, kind, subject_id, actor, actor_role, created_at: created_at.into_inner(), payload: object(&payload) };
    audit::event_link(prev, seq, &e, content)
}

/// Internal: a decision's link digest (memory_fabric_core::audit::decision_link).
#[allow(clippy::too_many_arguments)]
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _audit_decision_link(
    prev: &str,
    seq: i64,
    id: &str,
    tenant_id: &str,
    candidate_id: &str,
    review_id: Option<&str>,
    action: &str,
    decided_by: &str,
    new_candidate_id: Option<&str>,
    decided_at: TimestampWithTimeZone,
    decided_by_role: Option<&str>,
    has_notes: bool,
    content: Option<&str>,
) -> String {
    let d = audit::Decision {
        id,
        tenant_id,
        candidate_id,
        review_id,
        action,
        decided_by,
        new_candidate_id,
        decided_at: decided_at.into_inner(),
        decided_by_role,
        has_notes,
    };
    audit::decision_link(prev, seq, &d, content)
}

extension_sql!(
    r#"
-- Appending a row's link. One statement moves the tenant's head on (holding its row until the
-- transaction ends) and returns the link's place and digests; a tenant without a head starts at
-- link 1, or after the newest link it has (a chain restored or copied without its head). A row
-- that arrives with its link already in the chain (a restore, a tenant moved with its chain)
-- keeps that link. They run as the extension's owner (the trigger's SECURITY DEFINER): the
-- inserting role has no rights on the chain.
CREATE FUNCTION memory_fabric._audit_append_event(e memory_fabric.events) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c text := CASE WHEN e.audit_salt IS NOT NULL THEN memory_fabric._audit_event_content(e.audit_salt, e.payload) END;
    n bigint;
    p text;
    d text;
BEGIN
    IF EXISTS (SELECT 1 FROM memory_fabric.audit_chain x WHERE x.row_id = e.id AND x.source = 'events') THEN
        RETURN;
    END IF;
    INSERT INTO memory_fabric.audit_heads AS h (tenant_id, seq, prev_digest, digest)
    SELECT e.tenant_id, coalesce(l.seq, 0) + 1, coalesce(l.digest, pg_catalog.repeat('0', 64)),
           memory_fabric._audit_event_link(coalesce(l.digest, pg_catalog.repeat('0', 64)), coalesce(l.seq, 0) + 1, e.id,
               e.tenant_id, e.kind, e.subject_id, e.actor, e.actor_role, e.created_at, e.payload, c)
    FROM (SELECT 1) one
    LEFT JOIN LATERAL (SELECT y.seq, y.digest FROM memory_fabric.audit_chain y
                       WHERE y.tenant_id = e.tenant_id ORDER BY y.seq DESC LIMIT 1) l ON true
    ON CONFLICT (tenant_id) DO UPDATE
        SET seq = h.seq + 1, prev_digest = h.digest,
            digest = memory_fabric._audit_event_link(h.digest, h.seq + 1, e.id, e.tenant_id, e.kind, e.subject_id,
                                                     e.actor, e.actor_role, e.created_at, e.payload, c)
    RETURNING h.seq, h.prev_digest, h.digest INTO n, p, d;
    INSERT INTO memory_fabric.audit_chain (tenant_id, seq, source, row_id, content_digest, prev_digest, digest)
    VALUES (e.tenant_id, n, 'events', e.id, c, p, d);
END
$$;
CREATE FUNCTION memory_fabric._audit_append_decision(r memory_fabric.decisions) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c text := memory_fabric._audit_decision_content(r.audit_salt, r.notes);
    n bigint;
    p text;
    d text;
BEGIN
    IF EXISTS (SELECT 1 FROM memory_fabric.audit_chain x WHERE x.row_id = r.id AND x.source = 'decisions') THEN
        RETURN;
    END IF;
    INSERT INTO memory_fabric.audit_heads AS h (tenant_id, seq, prev_digest, digest)
    SELECT r.tenant_id, coalesce(l.seq, 0) + 1, coalesce(l.digest, pg_catalog.repeat('0', 64)),
           memory_fabric._audit_decision_link(coalesce(l.digest, pg_catalog.repeat('0', 64)), coalesce(l.seq, 0) + 1, r.id,
               r.tenant_id, r.candidate_id, r.review_id, r.action, r.decided_by, r.new_candidate_id, r.decided_at,
               r.decided_by_role, r.notes IS NOT NULL, c)
    FROM (SELECT 1) one
    LEFT JOIN LATERAL (SELECT y.seq, y.digest FROM memory_fabric.audit_chain y
                       WHERE y.tenant_id = r.tenant_id ORDER BY y.seq DESC LIMIT 1) l ON true
    ON CONFLICT (tenant_id) DO UPDATE
        SET seq = h.seq + 1, prev_digest = h.digest,
            digest = memory_fabric._audit_decision_link(h.digest, h.seq + 1, r.id, r.tenant_id, r.candidate_id, r.review_id,
                                                        r.action, r.decided_by, r.new_candidate_id, r.decided_at,
                                                        r.decided_by_role, r.notes IS NOT NULL, c)
    RETURNING h.seq, h.prev_digest, h.digest INTO n, p, d;
    INSERT INTO memory_fabric.audit_chain (tenant_id, seq, source, row_id, content_digest, prev_digest, digest)
    VALUES (r.tenant_id, n, 'decisions', r.id, c, p, d);
END
$$;
-- The deferred constraint triggers: a row's link is made when its transaction commits, after every
-- other lock of the transaction is held, so a tenant's writers wait for each other only while
-- committing. ENABLE ALWAYS: they fire under session_replication_role = replica too.
CREATE FUNCTION memory_fabric._audit_events() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM memory_fabric._audit_append_event(NEW);
    RETURN NULL;
END
$$;
CREATE FUNCTION memory_fabric._audit_decisions() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM memory_fabric._audit_append_decision(NEW);
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION memory_fabric._audit_event_content(uuid, jsonb),
    memory_fabric._audit_decision_content(uuid, text),
    memory_fabric._audit_event_link(text, bigint, text, text, text, text, text, text, timestamptz, jsonb, text),
    memory_fabric._audit_decision_link(text, bigint, text, text, text, text, text, text, text, timestamptz, text, boolean, text),
    memory_fabric._audit_append_event(memory_fabric.events), memory_fabric._audit_append_decision(memory_fabric.decisions),
    memory_fabric._audit_events(), memory_fabric._audit_decisions() FROM PUBLIC;
CREATE CONSTRAINT TRIGGER audit_chain AFTER INSERT ON memory_fabric.events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION memory_fabric._audit_events();
CREATE CONSTRAINT TRIGGER audit_chain AFTER INSERT ON memory_fabric.decisions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION memory_fabric._audit_decisions();
ALTER TABLE memory_fabric.events ENABLE ALWAYS TRIGGER audit_chain;
ALTER TABLE memory_fabric.decisions ENABLE ALWAYS TRIGGER audit_chain;

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
    ), rows AS (
        -- each link with its row recomputed: the link's digest from the row and the link's stored
        -- commitment, and the commitment again from the row where its salt is still there
        SELECT ch.seq, e.id IS NOT NULL AS found,
               CASE WHEN e.id IS NOT NULL THEN
                   memory_fabric._audit_event_link(ch.prev_digest, ch.seq, e.id, e.tenant_id, e.kind, e.subject_id, e.actor,
                                                   e.actor_role, e.created_at, e.payload, ch.content_digest) END AS digest,
               CASE WHEN e.audit_salt IS NOT NULL THEN memory_fabric._audit_event_content(e.audit_salt, e.payload) END AS content
        FROM ch LEFT JOIN memory_fabric.events e ON e.id = ch.row_id AND e.tenant_id = t
        WHERE ch.source = 'events'
        UNION ALL
        SELECT ch.seq, d.id IS NOT NULL,
               CASE WHEN d.id IS NOT NULL THEN
                   memory_fabric._audit_decision_link(ch.prev_digest, ch.seq, d.id, d.tenant_id, d.candidate_id, d.review_id,
                                                      d.action, d.decided_by, d.new_candidate_id, d.decided_at,
                                                      d.decided_by_role, d.notes IS NOT NULL, ch.content_digest) END,
               CASE WHEN d.audit_salt IS NOT NULL THEN memory_fabric._audit_decision_content(d.audit_salt, d.notes) END
        FROM ch LEFT JOIN memory_fabric.decisions d ON d.id = ch.row_id AND d.tenant_id = t
        WHERE ch.source = 'decisions'
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
                        WHEN NOT r.found
                            THEN 'the row is missing'
                        WHEN r.digest <> ch.digest
                            THEN 'the row or its link was altered'
                        WHEN r.content IS NOT NULL AND r.content IS DISTINCT FROM ch.content_digest
                            THEN 'the row''s text was altered'
                   END AS problem
            FROM ch JOIN rows r ON r.seq = ch.seq) b
        WHERE b.problem IS NOT NULL
        UNION ALL
        SELECT NULL, s.source, s.id, 'the row is not in the chain', 1 FROM (
            SELECT 'events'::text AS source, e.id FROM memory_fabric.events e WHERE e.tenant_id = t
            UNION ALL
            SELECT 'decisions', d.id FROM memory_fabric.decisions d WHERE d.tenant_id = t) s
        WHERE NOT EXISTS (SELECT 1 FROM memory_fabric.audit_chain c WHERE c.row_id = s.id AND c.source = s.source)
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
    requires = [_require_tenant, _audit_event_content, _audit_decision_content, _audit_event_link, _audit_decision_link],
);
