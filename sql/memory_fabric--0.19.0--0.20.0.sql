-- memory_fabric 0.19.0 → 0.20.0: the audit trail's hash chain and the intent boundary.
-- * Every event and decision gets a link of its tenant's hash chain when its transaction commits
--   (memory_fabric.audit_chain, audit_heads, a deferred constraint trigger); a salt for the
--   commitment to its free text (audit_salt), which erasure removes with the text. The rows
--   already there are chained here, per tenant, in the order they were written.
--   memory_fabric.verify_audit(tenant) reports the first link that does not hold.
-- * The append-only guard's erasure rule takes the salt to its tombstone (NULL).
-- * memory_fabric._erased_payload() is the library's (memory_fabric_core::audit), the same rule:
--   the chain's links are made of what erasure leaves of a payload.
-- * The library: a per-transaction intent pin (memory_fabric.intent_id), and review sends a
--   contradiction with a cross-intent memory (coexist) to a person. No SQL object changes for them.
-- Its statements are the install script's own; tests/upgrade/run.sh checks that it ends with the
-- catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.20.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

-- The salts. Rows already erased have no text to commit to and get none.
ALTER TABLE memory_fabric.decisions ADD COLUMN audit_salt uuid;
ALTER TABLE memory_fabric.events ADD COLUMN audit_salt uuid;
ALTER TABLE memory_fabric.decisions DISABLE TRIGGER guard_update;
ALTER TABLE memory_fabric.events DISABLE TRIGGER guard_update;
UPDATE memory_fabric.decisions SET audit_salt = pg_catalog.gen_random_uuid() WHERE erased_at IS NULL;
UPDATE memory_fabric.events SET audit_salt = pg_catalog.gen_random_uuid() WHERE erased_at IS NULL;
ALTER TABLE memory_fabric.decisions ENABLE ALWAYS TRIGGER guard_update;
ALTER TABLE memory_fabric.events ENABLE ALWAYS TRIGGER guard_update;
ALTER TABLE memory_fabric.decisions ALTER COLUMN audit_salt SET DEFAULT pg_catalog.gen_random_uuid();
ALTER TABLE memory_fabric.events ALTER COLUMN audit_salt SET DEFAULT pg_catalog.gen_random_uuid();

-- The newest link of each tenant's chain. Row-locked by each append until its transaction ends.
-- Its rows are updated by every link: fillfactor 10 leaves each page room for the new versions
-- (HOT updates on the same page, pruned as they go).
CREATE TABLE memory_fabric.audit_heads (
    tenant_id   text   PRIMARY KEY,
    seq         bigint NOT NULL CHECK (seq > 0),
    -- the link before the newest one (what the newest link carries)
    prev_digest text   NOT NULL CHECK (prev_digest ~ '^[0-9a-f]{64}$'),
    digest      text   NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$')
) WITH (fillfactor = 10);
COMMENT ON TABLE memory_fabric.audit_heads IS
    'The newest link of each tenant''s audit chain (memory_fabric.verify_audit reports its digest, to keep elsewhere)';
REVOKE ALL ON memory_fabric.audit_heads FROM PUBLIC;

-- The links. Append-only (guarded below).
CREATE TABLE memory_fabric.audit_chain (
    tenant_id      text        NOT NULL,
    seq            bigint      NOT NULL CHECK (seq > 0),
    source         text        NOT NULL CHECK (source IN ('events', 'decisions')),
    row_id         text        NOT NULL,
    -- SHA-256 of the row's salt and free text; NULL when the row had no salt
    content_digest text        CHECK (content_digest ~ '^[0-9a-f]{64}$'),
    prev_digest    text        NOT NULL CHECK (prev_digest ~ '^[0-9a-f]{64}$'),
    digest         text        NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
    chained_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tenant_id, seq),
    UNIQUE (row_id, source)
);
COMMENT ON TABLE memory_fabric.audit_chain IS
    'The hash chain over each tenant''s events and decisions, a link a row in commit order; append-only';

-- The digests of a link (memory_fabric_core::audit).
CREATE FUNCTION memory_fabric."_audit_event_content"(
	"audit_salt" uuid, /* Uuid */
	"payload" jsonb /* JsonB */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_audit_event_content_wrapper';
CREATE FUNCTION memory_fabric."_audit_decision_content"(
	"audit_salt" uuid, /* Option < Uuid > */
	"notes" TEXT /* Option < & str > */
) RETURNS TEXT /* Option < String > */
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_audit_decision_content_wrapper';
CREATE FUNCTION memory_fabric."_audit_event_link"(
	"prev" TEXT, /* & str */
	"seq" bigint, /* i64 */
	"id" TEXT, /* & str */
	"tenant_id" TEXT, /* & str */
	"kind" TEXT, /* & str */
	"subject_id" TEXT, /* Option < & str > */
	"actor" TEXT, /* Option < & str > */
	"actor_role" TEXT, /* Option < & str > */
	"created_at" timestamp with time zone, /* TimestampWithTimeZone */
	"payload" jsonb, /* JsonB */
	"content" TEXT /* Option < & str > */
) RETURNS TEXT /* String */
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_audit_event_link_wrapper';
CREATE FUNCTION memory_fabric."_audit_decision_link"(
	"prev" TEXT, /* & str */
	"seq" bigint, /* i64 */
	"id" TEXT, /* & str */
	"tenant_id" TEXT, /* & str */
	"candidate_id" TEXT, /* & str */
	"review_id" TEXT, /* Option < & str > */
	"action" TEXT, /* & str */
	"decided_by" TEXT, /* & str */
	"new_candidate_id" TEXT, /* Option < & str > */
	"decided_at" timestamp with time zone, /* TimestampWithTimeZone */
	"decided_by_role" TEXT, /* Option < & str > */
	"has_notes" bool, /* bool */
	"content" TEXT /* Option < & str > */
) RETURNS TEXT /* String */
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_audit_decision_link_wrapper';

-- What erasure leaves of an event's payload, now the library's.
CREATE OR REPLACE FUNCTION memory_fabric."_erased_payload"(
	"p" jsonb /* pgrx :: JsonB */
) RETURNS jsonb /* pgrx :: JsonB */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_erased_payload_wrapper';

-- src/api/verify_audit.rs: appending links, the triggers, verify_audit().
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

-- The rows already there, chained per tenant in the order they were written.
DO $$
DECLARE
    x record;
BEGIN
    FOR x IN SELECT a.source, a.id FROM (
                 SELECT 'events'::text AS source, e.tenant_id, e.created_at AS at, e.id FROM memory_fabric.events e
                 UNION ALL
                 SELECT 'decisions', d.tenant_id, d.decided_at, d.id FROM memory_fabric.decisions d) a
             ORDER BY a.tenant_id, a.at, a.source, a.id LOOP
        IF x.source = 'events' THEN
            PERFORM memory_fabric._audit_append_event(e) FROM memory_fabric.events e WHERE e.id = x.id;
        ELSE
            PERFORM memory_fabric._audit_append_decision(d) FROM memory_fabric.decisions d WHERE d.id = x.id;
        END IF;
    END LOOP;
END
$$;

-- The erasure rule takes an audit row's salt to its tombstone.
CREATE OR REPLACE FUNCTION memory_fabric._guard_write_once() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    o jsonb := to_jsonb(OLD);
    n jsonb := to_jsonb(NEW);
    k text;
    set_once boolean := false;
    erasing boolean := 'erased_at' = ANY (TG_ARGV) AND o ->> 'erased_at' IS NULL AND n ->> 'erased_at' IS NOT NULL;
    reembedding boolean := TG_TABLE_NAME = 'promoted_memory' AND NOT erasing AND o ->> 'erased_at' IS NULL
        AND o ->> 'embedding' IS NOT NULL AND n ->> 'embedding' IS NOT NULL
        AND n ->> 'embedding_model' <> '' AND n ->> 'embedding_model' IS DISTINCT FROM o ->> 'embedding_model';
    tombstone constant jsonb := '{"text": "[erased]", "value": null, "embedding": null, "metadata": {},
        "evidence_refs": [], "notes": "[erased]", "query_text": null, "retraction_reason": "[erased]",
        "revocation_reason": "[erased]", "audit_salt": null}';
    expected jsonb;
BEGIN
    FOR k IN SELECT jsonb_object_keys(n) ORDER BY 1 LOOP
        CONTINUE WHEN o -> k IS NOT DISTINCT FROM n -> k;
        -- a generated column (promoted_memory.embedding_bits): PostgreSQL computes it after this
        -- trigger, so NEW holds NULL for it here, and no statement can set it
        CONTINUE WHEN n -> k = 'null'::jsonb AND EXISTS (
            SELECT 1 FROM pg_catalog.pg_attribute a
            WHERE a.attrelid = TG_RELID AND a.attname = k AND a.attgenerated <> '');
        IF erasing AND (tombstone ? k OR k IN ('content_hash', 'payload'))
           AND NOT (k = ANY (TG_ARGV) AND o ->> k IS NULL) THEN
            -- a content hash becomes its keyed digest (a superuser's function: no other role can
            -- make one), a payload loses its free text
            expected := CASE k WHEN 'content_hash' THEN pg_catalog.to_jsonb(memory_fabric._erased_digest(o ->> k))
                               WHEN 'payload' THEN memory_fabric._erased_payload(o -> k)
                               ELSE tombstone -> k END;
            IF n -> k IS DISTINCT FROM expected THEN
                RAISE EXCEPTION 'cannot update column "%" of table "%.%"', k, TG_TABLE_SCHEMA, TG_TABLE_NAME
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = format('Rule: erasure may only replace %s with its tombstone %s.', k,
                                          CASE k WHEN 'content_hash' THEN 'digest' ELSE expected::text END);
            END IF;
        ELSIF reembedding AND k IN ('embedding', 'embedding_model') THEN
            NULL;  -- a new vector of another model, checked above
        ELSIF k <> ALL (TG_ARGV) THEN
            RAISE EXCEPTION 'cannot update column "%" of table "%.%"', k, TG_TABLE_SCHEMA, TG_TABLE_NAME
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = CASE WHEN k IN ('embedding', 'embedding_model') AND TG_TABLE_NAME = 'promoted_memory'
                          THEN 'Rule: a memory''s vector changes only with its embedding model, to another model, '
                               'and never after erasure.'
                          ELSE format('Rule: %s is append-only; only the write-once columns %s may be set.',
                                      TG_TABLE_NAME, array_to_string(TG_ARGV, ', ')) END;
        ELSIF o ->> k IS NOT NULL THEN
            RAISE EXCEPTION 'cannot update column "%" of table "%.%"', k, TG_TABLE_SCHEMA, TG_TABLE_NAME
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('Rule: %s is write-once; it may change from NULL to a value, never again.', k);
        END IF;
        set_once := true;
    END LOOP;
    IF NOT set_once THEN
        RAISE EXCEPTION 'cannot update table "%.%"', TG_TABLE_SCHEMA, TG_TABLE_NAME
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Rule: %s is append-only; an update must set a write-once column (%s) from NULL.',
                                  TG_TABLE_NAME, array_to_string(TG_ARGV, ', '));
    END IF;
    RETURN NEW;
END
$$;

-- The chain's links are append-only.
CREATE TRIGGER guard_update BEFORE UPDATE ON memory_fabric.audit_chain FOR EACH ROW
    EXECUTE FUNCTION memory_fabric._guard_append_only();
CREATE TRIGGER guard_delete BEFORE DELETE ON memory_fabric.audit_chain FOR EACH ROW
    EXECUTE FUNCTION memory_fabric._guard_append_only();
CREATE TRIGGER guard_truncate BEFORE TRUNCATE ON memory_fabric.audit_chain
    FOR EACH STATEMENT EXECUTE FUNCTION memory_fabric._guard_append_only();
ALTER TABLE memory_fabric.audit_chain ENABLE ALWAYS TRIGGER guard_update, ENABLE ALWAYS TRIGGER guard_delete,
    ENABLE ALWAYS TRIGGER guard_truncate;

GRANT SELECT ON memory_fabric.audit_chain TO memory_fabric_admin;
GRANT ALL ON memory_fabric.audit_chain, memory_fabric.audit_heads TO @extowner@;
ALTER TABLE memory_fabric.audit_chain ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_fabric.audit_heads ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON memory_fabric.audit_chain FOR SELECT
    USING (tenant_id = (SELECT memory_fabric._visible_tenant()));
CREATE POLICY owner_all ON memory_fabric.audit_chain FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.audit_heads FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT a.attrelid::pg_catalog.regclass AS rel, a.attname
             FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = ANY (ARRAY['memory_fabric.audit_chain', 'memory_fabric.audit_heads']::pg_catalog.regclass[])
               AND a.attnum > 0 AND NOT a.attisdropped
               AND a.atttypid = ANY (ARRAY['pg_catalog.text', 'pg_catalog.jsonb', 'pg_catalog.text[]',
                                           'pg_catalog.varbit']::pg_catalog.regtype[])
             ORDER BY 1, 2 LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS 0', c.rel, c.attname);
    END LOOP;
END
$$;
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.audit_chain', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.audit_heads', '');

-- The role that installed the extension may call every function (sql/finalize.sql).
GRANT EXECUTE ON FUNCTION memory_fabric._audit_event_content(uuid, jsonb),
    memory_fabric._audit_decision_content(uuid, text),
    memory_fabric._audit_event_link(text, bigint, text, text, text, text, text, text, timestamptz, jsonb, text),
    memory_fabric._audit_decision_link(text, bigint, text, text, text, text, text, text, text, timestamptz, text, boolean, text),
    memory_fabric._audit_append_event(memory_fabric.events), memory_fabric._audit_append_decision(memory_fabric.decisions),
    memory_fabric._audit_events(), memory_fabric._audit_decisions(), memory_fabric.verify_audit(text)
    TO @extowner@;
