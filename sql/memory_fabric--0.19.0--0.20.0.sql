-- memory_fabric 0.19.0 → 0.20.0: the audit trail's hash chain and the intent boundary.
-- * Every event and decision gets a link of its tenant's hash chain when its transaction commits
--   (memory_fabric.audit_chain, audit_heads, a deferred constraint trigger); a salt for the
--   commitment to its free text (audit_salt), which erasure removes with the text. The rows
--   already there are chained here, per tenant, in the order they were written.
--   memory_fabric.verify_audit(tenant) reports the first link that does not hold.
-- * The append-only guard's erasure rule takes the salt to its tombstone (NULL).
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
CREATE TABLE memory_fabric.audit_heads (
    tenant_id text   PRIMARY KEY,
    seq       bigint NOT NULL CHECK (seq >= 0),
    digest    text   NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$')
);
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
    UNIQUE (source, row_id)
);
COMMENT ON TABLE memory_fabric.audit_chain IS
    'The hash chain over each tenant''s events and decisions, a link a row in commit order; append-only';

-- The fields of an audit row that never change, erasure included, as one JSON array: its kind,
-- its ids, who and when (microseconds since the epoch, whatever the session's time zone), and
-- what erasure leaves of its free text (an event's payload as memory_fabric._erased_payload()
-- masks it; whether a decision had notes).
CREATE FUNCTION memory_fabric._audit_fixed(source text, r jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE source
        WHEN 'events' THEN pg_catalog.jsonb_build_array('events', r -> 'id', r -> 'tenant_id', r -> 'kind',
            r -> 'subject_id', r -> 'actor', r -> 'actor_role',
            (pg_catalog.extract('epoch', (r ->> 'created_at')::timestamptz) * 1000000)::bigint,
            memory_fabric._erased_payload(r -> 'payload'))
        WHEN 'decisions' THEN pg_catalog.jsonb_build_array('decisions', r -> 'id', r -> 'tenant_id',
            r -> 'candidate_id', r -> 'review_id', r -> 'action', r -> 'decided_by', r -> 'new_candidate_id',
            (pg_catalog.extract('epoch', (r ->> 'decided_at')::timestamptz) * 1000000)::bigint,
            r -> 'decided_by_role', r ->> 'notes' IS NULL)
    END
$$;
-- The salted commitment to an audit row's free text; NULL once erasure removed the salt.
CREATE FUNCTION memory_fabric._audit_content(source text, r jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN r ->> 'audit_salt' IS NOT NULL THEN
        pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.jsonb_build_array(r -> 'audit_salt',
            CASE source WHEN 'events' THEN r -> 'payload' ELSE r -> 'notes' END)::text, 'UTF8')), 'hex') END
$$;
-- A link's digest: SHA-256 of the previous link's digest, the place, the fixed fields and the
-- commitment, written as one JSON array (unambiguous: every string quoted and escaped).
CREATE FUNCTION memory_fabric._audit_digest(prev text, seq bigint, fixed jsonb, content text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
        pg_catalog.jsonb_build_array(prev, seq, fixed, content)::text, 'UTF8')), 'hex')
$$;
-- Appends a row's link to its tenant's chain, holding the tenant's head until the transaction
-- ends. A tenant without a head starts at link 1, or after the newest link it has (a chain
-- restored or copied without its head).
CREATE FUNCTION memory_fabric._audit_chain_row(source text, r jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t        text := r ->> 'tenant_id';
    h_seq    bigint;
    h_digest text;
    c        text;
    d        text;
BEGIN
    SELECT h.seq, h.digest INTO h_seq, h_digest FROM memory_fabric.audit_heads h WHERE h.tenant_id = t FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO memory_fabric.audit_heads (tenant_id, seq, digest)
        SELECT t, coalesce(max(x.seq), 0),
               coalesce((SELECT y.digest FROM memory_fabric.audit_chain y WHERE y.tenant_id = t ORDER BY y.seq DESC LIMIT 1),
                        pg_catalog.repeat('0', 64))
        FROM memory_fabric.audit_chain x WHERE x.tenant_id = t
        ON CONFLICT (tenant_id) DO NOTHING;
        SELECT h.seq, h.digest INTO STRICT h_seq, h_digest FROM memory_fabric.audit_heads h WHERE h.tenant_id = t FOR UPDATE;
    END IF;
    c := memory_fabric._audit_content(source, r);
    d := memory_fabric._audit_digest(h_digest, h_seq + 1, memory_fabric._audit_fixed(source, r), c);
    UPDATE memory_fabric.audit_heads SET seq = h_seq + 1, digest = d WHERE tenant_id = t;
    INSERT INTO memory_fabric.audit_chain (tenant_id, seq, source, row_id, content_digest, prev_digest, digest)
    VALUES (t, h_seq + 1, source, r ->> 'id', c, h_digest, d);
END
$$;
-- The deferred constraint trigger on events and decisions. A row that arrives with its link
-- already in the chain (a restore, a tenant moved with its chain) keeps that link. Runs as the
-- extension's owner: the inserting role has no rights on the chain.
CREATE FUNCTION memory_fabric._audit_append() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM memory_fabric.audit_chain c WHERE c.source = TG_TABLE_NAME AND c.row_id = NEW.id) THEN
        PERFORM memory_fabric._audit_chain_row(TG_TABLE_NAME, pg_catalog.to_jsonb(NEW));
    END IF;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION memory_fabric._audit_fixed(text, jsonb), memory_fabric._audit_content(text, jsonb),
    memory_fabric._audit_digest(text, bigint, jsonb, text), memory_fabric._audit_chain_row(text, jsonb),
    memory_fabric._audit_append() FROM PUBLIC;
-- The rows already there, chained per tenant in the order they were written.
DO $$
DECLARE
    x record;
BEGIN
    FOR x IN SELECT a.source, a.r FROM (
                 SELECT 'events'::text AS source, e.tenant_id, e.created_at AS at, e.id, pg_catalog.to_jsonb(e) AS r
                 FROM memory_fabric.events e
                 UNION ALL
                 SELECT 'decisions', d.tenant_id, d.decided_at, d.id, pg_catalog.to_jsonb(d) FROM memory_fabric.decisions d) a
             ORDER BY a.tenant_id, a.at, a.source, a.id LOOP
        PERFORM memory_fabric._audit_chain_row(x.source, x.r);
    END LOOP;
END
$$;
CREATE CONSTRAINT TRIGGER audit_chain AFTER INSERT ON memory_fabric.events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION memory_fabric._audit_append();
CREATE CONSTRAINT TRIGGER audit_chain AFTER INSERT ON memory_fabric.decisions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION memory_fabric._audit_append();
ALTER TABLE memory_fabric.events ENABLE ALWAYS TRIGGER audit_chain;
ALTER TABLE memory_fabric.decisions ENABLE ALWAYS TRIGGER audit_chain;

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

-- memory_fabric.verify_audit(): src/api/verify_audit.rs
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
