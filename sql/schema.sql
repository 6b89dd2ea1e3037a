-- memory_fabric schema, as it is today: roles, tables, constraints, indexes, views, the visibility
-- rules, the append-only guards, table privileges and row-level security. Runs first in the
-- extension script (bootstrap); everything lives in schema memory_fabric. The public functions
-- follow, each declared in its src/api/ module; sql/finalize.sql ends the script.

-- The script runs as a superuser, also when a database owner installs this trusted extension,
-- and PostgreSQL runs it under search_path = memory_fabric, <pgvector's schema>: schemas a
-- database owner can create objects in before installing. So every name in the script is
-- resolved under pg_catalog alone (pg_temp last: never for functions and operators), and
-- everything of ours or of pgvector is named with its schema. An object planted in public can
-- then never be called, or bound into a view or a default, by the script. The one exception is
-- the part pgrx generates between this file and finalize.sql: CREATE FUNCTION statements that
-- name their functions without a schema and so need search_path = memory_fabric, pg_catalog.
-- They name types only, and the end of this file makes sure that memory_fabric holds nothing
-- but what this script created before they run. (The SQL the src/api/ modules add there names
-- everything with its schema all the same.)
-- The few statements that name pgvector's type or operator class write its schema @pgvector@
-- and run with it replaced by memory_fabric._pgvector_schema().
SET LOCAL search_path = pg_catalog, pg_temp;

CREATE FUNCTION memory_fabric._pgvector_schema() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e
    JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'
$$;
COMMENT ON FUNCTION memory_fabric._pgvector_schema() IS 'The schema pgvector is installed in, quoted';
REVOKE ALL ON FUNCTION memory_fabric._pgvector_schema() FROM PUBLIC;

-- The three roles, created if missing (roles are cluster-wide and outlive the extension):
-- agent captures, reviews, promotes and recalls; reviewer works the human queue; admin
-- governs. Each public function grants itself to the roles whose job needs it.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_fabric_agent', 'memory_fabric_reviewer', 'memory_fabric_admin'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
END
$$;
GRANT USAGE ON SCHEMA memory_fabric TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
-- Ids are readable text with a prefix (mc_ candidate, rv_ review, dc_ decision,
-- pm_ promoted memory, cns_ consent, ev_ event).

-- Policies: one row per version. The newest version of a tenant's policy is in force;
-- a tenant without one uses the newest '*' version.
CREATE TABLE memory_fabric.policies (
    tenant_id   text        NOT NULL CHECK (tenant_id <> ''),
    version     integer     NOT NULL CHECK (version > 0),
    body        jsonb       NOT NULL CHECK (jsonb_typeof(body) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    created_by  text        NOT NULL DEFAULT current_user,
    note        text,
    PRIMARY KEY (tenant_id, version),
    -- Versions are numbered across all tenants, so a version number alone names one policy.
    UNIQUE (version)
);
COMMENT ON TABLE memory_fabric.policies IS
    'Per-tenant policy versions (append-only); tenant ''*'' holds the default';

-- Every capture, as it was written (after redaction). Append-only.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE TABLE memory_fabric.candidates (
    id              text        PRIMARY KEY CHECK (id LIKE 'mc\_%'),
    tenant_id       text        NOT NULL CHECK (tenant_id <> '' AND tenant_id <> '*'),
    user_id         text,
    intent_id       text,
    source          text        NOT NULL CHECK (source IN ('agent', 'operator', 'system')),
    text            text        NOT NULL CHECK (text <> ''),
    evidence_refs   jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(evidence_refs) = 'array'),
    classification  text        NOT NULL CHECK (classification <> ''),
    captured_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    entity          text,
    predicate       text,
    value           jsonb,
    write_class     text        CHECK (write_class IN ('evidence_link', 'preference', 'decision_outcome', 'correction')),
    confidence      double precision CHECK (confidence >= 0 AND confidence <= 1),
    actor           text,
    -- NULL only after governed erasure replaced the content with a tombstone.
    embedding       @pgvector@.vector,
    embedding_model text        NOT NULL,
    content_hash    text        NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
    supersedes      text        CHECK (supersedes LIKE 'mc\_%' OR supersedes LIKE 'pm\_%'),
    metadata        jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    redaction_count integer     NOT NULL DEFAULT 0 CHECK (redaction_count >= 0),
    redaction_rules text[]      NOT NULL DEFAULT '{}',
    policy_version  integer     NOT NULL,
    -- The database role that captured it (the role before SECURITY DEFINER), beside the
    -- display name in actor.
    captured_by     text,
    -- Set when governed erasure replaced the content with its tombstone.
    erased_at       timestamptz,
    CHECK ((entity IS NULL) = (predicate IS NULL)),
    CHECK (value IS NULL OR predicate IS NOT NULL)
)
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
COMMENT ON TABLE memory_fabric.candidates IS
    'Every capture, redacted before write; append-only';
COMMENT ON COLUMN memory_fabric.candidates.captured_by IS 'The database role that captured it';
CREATE INDEX candidates_tenant_captured ON memory_fabric.candidates (tenant_id, captured_at);
CREATE INDEX candidates_tenant_user_hash ON memory_fabric.candidates (tenant_id, user_id, content_hash);
CREATE INDEX candidates_fact ON memory_fabric.candidates (tenant_id, entity, predicate)
    WHERE entity IS NOT NULL;
CREATE INDEX candidates_supersedes ON memory_fabric.candidates (supersedes)
    WHERE supersedes IS NOT NULL;
CREATE INDEX candidates_subject ON memory_fabric.candidates (tenant_id, user_id) WHERE user_id IS NOT NULL;

-- The embedding models of each tenant and their dimensions, fixed by the first vector. A caller's
-- vector of a model is accepted only once a tenant admin has registered the model
-- (memory_fabric.register_embedding_model(), which sets registered_by): review trusts those
-- vectors to compare memories, so an agent cannot name a model of its own choosing. A row without
-- registered_by only fixes a dimension: the model of memory_fabric.embedding_function, or a model
-- a capture used before 0.16.0.
CREATE TABLE memory_fabric.embedding_models (
    tenant_id     text        NOT NULL,
    model         text        NOT NULL CHECK (model <> ''),
    dimensions    integer     NOT NULL CHECK (dimensions > 0),
    registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- The database role of the tenant admin that registered it for callers' vectors.
    registered_by text,
    PRIMARY KEY (tenant_id, model)
);
COMMENT ON TABLE memory_fabric.embedding_models IS
    'Dimension of every embedding model seen per tenant, and which a tenant admin registered for callers'' vectors; append-only except write-once registered_by';
COMMENT ON COLUMN memory_fabric.embedding_models.registered_by IS
    'The role that registered the model for callers'' vectors (memory_fabric.register_embedding_model); NULL: dimension only';

-- Every verdict. The newest review of a candidate is its effective verdict.
CREATE TABLE memory_fabric.reviews (
    id                       text        PRIMARY KEY CHECK (id LIKE 'rv\_%'),
    tenant_id                text        NOT NULL,
    candidate_id             text        NOT NULL REFERENCES memory_fabric.candidates (id),
    status                   text        NOT NULL
        CHECK (status IN ('pending_promotion', 'duplicate_of', 'contradicts', 'rejected')),
    duplicate_of_id          text,
    contradicts_id           text,
    contradiction_resolution text        CHECK (contradiction_resolution IN ('supersede', 'coexist', 'block')),
    proposed_tier            text        NOT NULL
        CHECK (proposed_tier IN ('working', 'episodic', 'semantic', 'durable')),
    priority_score           numeric(3,2) NOT NULL CHECK (priority_score BETWEEN 0 AND 1),
    reviewer                 text        NOT NULL CHECK (reviewer IN ('auto', 'human')),
    reviewer_notes           text,
    reason                   text,
    similarity               double precision,
    consent_id               text,
    policy_version           integer     NOT NULL,
    reviewed_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
    reviewed_by              text,
    -- The operator-rejected candidate this one repeats.
    rejection_of_id          text        CHECK (rejection_of_id LIKE 'mc\_%'),
    -- What the verdict was decided on: the version of the scope's promoted memories read before
    -- they were searched (memory_fabric.scope_versions; NULL when the scope had none), the live
    -- memories compared with the candidate and the retracted ones. promote() decides again on
    -- these memories while the scope's version is unchanged, instead of searching the scope.
    scope_version            uuid,
    neighbour_ids            text[],
    retracted_ids            text[],
    -- What review's learned judge said (core/data/JUDGE.md): the SHA-256 of its file, NULL when
    -- review did not read it (not installed, off in the policy, or a judge function set), and
    -- its probabilities for each pair it read, both ways.
    judge_model              text        CHECK (judge_model ~ '^[0-9a-f]{64}$'),
    judge_scores             jsonb       CHECK (jsonb_typeof(judge_scores) = 'array'),
    CHECK (status <> 'duplicate_of' OR duplicate_of_id IS NOT NULL),
    CHECK (status <> 'contradicts' OR (contradicts_id IS NOT NULL AND contradiction_resolution IS NOT NULL))
);
COMMENT ON TABLE memory_fabric.reviews IS
    'Every review verdict; append-only, the newest per candidate is effective';
COMMENT ON COLUMN memory_fabric.reviews.reviewed_by IS 'The database role that ran the review';
COMMENT ON COLUMN memory_fabric.reviews.scope_version IS
    'The version of the scope''s promoted memories the verdict was decided on (memory_fabric.scope_versions)';
COMMENT ON COLUMN memory_fabric.reviews.neighbour_ids IS 'The live promoted memories the candidate was compared with';
COMMENT ON COLUMN memory_fabric.reviews.retracted_ids IS 'The retracted memories the candidate was compared with';
COMMENT ON COLUMN memory_fabric.reviews.judge_model IS 'The SHA-256 of the learned judge review read; NULL: it did not';
COMMENT ON COLUMN memory_fabric.reviews.judge_scores IS
    'The learned judge''s probabilities (entailment, neutral, contradiction) for each pair it read, both ways';
CREATE INDEX reviews_candidate ON memory_fabric.reviews (candidate_id, reviewed_at DESC, id DESC);
CREATE INDEX reviews_queue ON memory_fabric.reviews (tenant_id, reviewed_at)
    WHERE reviewer = 'human';
CREATE INDEX reviews_duplicate_of ON memory_fabric.reviews (duplicate_of_id)
    WHERE duplicate_of_id IS NOT NULL;

-- Operator actions on the review queue.
CREATE TABLE memory_fabric.decisions (
    id               text        PRIMARY KEY CHECK (id LIKE 'dc\_%'),
    tenant_id        text        NOT NULL,
    candidate_id     text        NOT NULL REFERENCES memory_fabric.candidates (id),
    review_id        text        REFERENCES memory_fabric.reviews (id),
    action           text        NOT NULL CHECK (action IN ('approve', 'reject', 'edit')),
    decided_by       text        NOT NULL CHECK (decided_by <> ''),
    notes            text,
    new_candidate_id text        REFERENCES memory_fabric.candidates (id),
    decided_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    decided_by_role  text,
    -- Set when the erasure of the candidate's subject replaced the notes with a tombstone.
    erased_at        timestamptz,
    -- The salt of the audit chain's commitment to the notes (audit_chain.content_digest); erasure
    -- removes it with them, so that the commitment tells nothing of what was erased.
    audit_salt       uuid        DEFAULT pg_catalog.gen_random_uuid(),
    -- What an approval did with the candidate's contradiction: the reviewer's choice
    -- (approve(resolution => ...)), or the review's own resolution when a rule resolved it.
    resolution       text        CHECK (resolution IS NULL OR (resolution IN ('supersede', 'coexist') AND action = 'approve'))
);
COMMENT ON TABLE memory_fabric.decisions IS
    'Approve / reject / edit decisions on queued candidates; append-only except the erasure of their notes';
COMMENT ON COLUMN memory_fabric.decisions.decided_by_role IS 'The database role that decided (decided_by is the name it gave)';
COMMENT ON COLUMN memory_fabric.decisions.resolution IS
    'What an approval did with the candidate''s contradiction: supersede (the memory it contradicts retracted) or coexist (both stand)';
CREATE INDEX decisions_candidate ON memory_fabric.decisions (candidate_id, decided_at DESC);
CREATE INDEX decisions_rejected ON memory_fabric.decisions (tenant_id, candidate_id) WHERE action = 'reject';

-- Consent records. Append-only except the write-once revocation columns.
CREATE TABLE memory_fabric.consents (
    id                      text        PRIMARY KEY CHECK (id LIKE 'cns\_%'),
    tenant_id               text        NOT NULL,
    subject                 text        NOT NULL CHECK (subject <> ''),
    purpose                 text        NOT NULL CHECK (purpose <> ''),
    predicates_allowed      text[]      NOT NULL DEFAULT '{}',
    classifications_allowed text[]      NOT NULL DEFAULT '{}',
    basis                   text        NOT NULL CHECK (basis <> ''),
    captured_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    valid_until             timestamptz,
    evidence_refs           jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(evidence_refs) = 'array'),
    auditor_id              text,
    -- No self-referencing foreign keys here or in promoted_memory: an extension's constraints
    -- exist before pg_restore loads data, and a write-once update can move the older row
    -- physically after the newer one that points at it. The writing functions check the link.
    supersedes              text        CHECK (supersedes LIKE 'cns\_%'),
    revoked_at              timestamptz,
    revoked_by              text,
    revocation_reason       text,
    -- Set when the erasure of its subject emptied its evidence refs and revocation reason.
    erased_at               timestamptz,
    CHECK (revoked_at IS NULL OR revoked_by IS NOT NULL)
);
COMMENT ON TABLE memory_fabric.consents IS
    'Consent records; append-only except write-once revoked_at, revoked_by, revocation_reason and their erasure';
CREATE INDEX consents_subject ON memory_fabric.consents (tenant_id, subject, purpose);

-- The table recall reads. promote() is the only way in.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE TABLE memory_fabric.promoted_memory (
    id                text        PRIMARY KEY CHECK (id LIKE 'pm\_%'),
    candidate_id      text        NOT NULL UNIQUE REFERENCES memory_fabric.candidates (id),
    review_id         text        NOT NULL REFERENCES memory_fabric.reviews (id),
    tenant_id         text        NOT NULL,
    user_id           text,
    intent_scope      text,
    text              text        NOT NULL,
    evidence_refs     jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(evidence_refs) = 'array'),
    classification    text        NOT NULL,
    source            text        NOT NULL CHECK (source IN ('agent', 'operator', 'system')),
    tier              text        NOT NULL CHECK (tier IN ('working', 'episodic', 'semantic', 'durable')),
    priority          numeric(3,2) NOT NULL CHECK (priority BETWEEN 0 AND 1),
    entity            text,
    predicate         text,
    value             jsonb,
    write_class       text,
    confidence        double precision,
    embedding         @pgvector@.vector,
    embedding_model   text        NOT NULL,
    content_hash      text        NOT NULL,
    consent_id        text        REFERENCES memory_fabric.consents (id),
    promoted_by       text        NOT NULL,
    promoted_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at        timestamptz,
    -- Set when promoted to coexist with a memory it contradicts (a different intent scope);
    -- recall reports both sides as in_contradiction while both are live.
    in_contradiction  boolean     NOT NULL DEFAULT false,
    contradicts_id    text        CHECK (contradicts_id LIKE 'pm\_%'),
    supersedes_id     text        CHECK (supersedes_id LIKE 'pm\_%'),
    retracted_at      timestamptz,
    retracted_by      text,
    retraction_reason text,
    promoted_by_role  text,
    erased_at         timestamptz,
    -- The embedding quantised to one bit a dimension (its signs), kept by PostgreSQL itself: 48
    -- bytes for 384 dimensions against 1536. Review ranks a large scope by it
    -- (promoted_scope_bits). NULL with the embedding, so erasure clears it too.
    embedding_bits    bit varying GENERATED ALWAYS AS (@pgvector@.binary_quantize(embedding)) STORED,
    CHECK (retracted_at IS NULL OR (retracted_by IS NOT NULL AND retraction_reason IS NOT NULL))
)
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
COMMENT ON TABLE memory_fabric.promoted_memory IS
    'Promoted memories, the only table recall reads; append-only except write-once retraction columns';
COMMENT ON COLUMN memory_fabric.promoted_memory.promoted_by_role IS 'The database role that promoted it (promoted_by is the approver''s name, or auto)';
-- Recall without a query: scope first, then priority and recency; the user's own memories from
-- promoted_recall, the user-less ones from promoted_recall_userless.
CREATE INDEX promoted_recall ON memory_fabric.promoted_memory
    (tenant_id, user_id, priority DESC, promoted_at DESC);
CREATE INDEX promoted_recall_userless ON memory_fabric.promoted_memory (tenant_id, priority DESC, promoted_at DESC)
    WHERE user_id IS NULL;
-- Review's exact search and recall with a query visit only the scope's rows of the intent or
-- cross-intent. Not partial, since recall as of a past instant reads retracted rows too;
-- retracted_at is included so that review can size its scope from the index alone.
CREATE INDEX promoted_scope ON memory_fabric.promoted_memory (tenant_id, user_id, intent_scope, embedding_model)
    INCLUDE (retracted_at);
-- They read their scope from covering indexes, not the heap: each scope is read as a few
-- contiguous index pages (index-only) instead of one heap page per row. Review's exact search and
-- recall with a query read promoted_scope_sq8 (sql/finalize.sql), which keys each row's embedding
-- quantised to a byte a dimension, and then only the rows that could be among their results, by
-- id. A btree entry cannot exceed 2704 bytes, so these indexes hold only rows whose values fit
-- (_scope_fits, a rule written for the full vector: embeddings up to about 580 dimensions with
-- short identifiers); promoted_scope_wide keys the rest, and every reader visits both.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE FUNCTION memory_fabric._scope_fits(tenant_id text, user_id text, intent_scope text, embedding_model text,
                                          id text, classification text, consent_id text, embedding @pgvector@.vector)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $body$
    SELECT coalesce($8 IS NOT NULL
        AND pg_catalog.octet_length($1) + coalesce(pg_catalog.octet_length($2), 0)
            + coalesce(pg_catalog.octet_length($3), 0) + pg_catalog.octet_length($4) + pg_catalog.octet_length($5)
            + pg_catalog.octet_length($6) + coalesce(pg_catalog.octet_length($7), 0)
            + 4 * @pgvector@.vector_dims($8) <= 2400, false)
$body$
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
COMMENT ON FUNCTION memory_fabric._scope_fits IS
    'Whether a promoted memory''s scope columns and embedding fit the covering scope indexes (promoted_scope_wide keys the rest)';
REVOKE ALL ON FUNCTION memory_fabric._scope_fits FROM PUBLIC;
CREATE INDEX promoted_scope_wide ON memory_fabric.promoted_memory (tenant_id, user_id, intent_scope, embedding_model)
    WHERE NOT memory_fabric._scope_fits(tenant_id, user_id, intent_scope, embedding_model, id, classification, consent_id, embedding);
-- Review's search of a scope above 2000 rows ranks the live rows by their quantised embeddings
-- (embedding_bits, 48 bytes for 384 dimensions against 1536) and compares only the first ones
-- exactly: it reads them from promoted_scope_bits, which holds what that ranking needs and is a
-- few percent of the size of an index of the full vectors. Only unretracted rows, so that recall (which
-- may read retracted ones, as of a past instant) cannot take it for promoted_scope_sq8;
-- every row that fits the one fits this one.
CREATE INDEX promoted_scope_bits ON memory_fabric.promoted_memory (tenant_id, user_id, intent_scope, embedding_model)
    INCLUDE (expires_at, id, embedding_bits)
    WHERE retracted_at IS NULL
      AND memory_fabric._scope_fits(tenant_id, user_id, intent_scope, embedding_model, id, classification, consent_id, embedding);
CREATE INDEX promoted_contradicts ON memory_fabric.promoted_memory (contradicts_id)
    WHERE contradicts_id IS NOT NULL;
-- Review compares a candidate with the retracted memories of its tenant and user; they are a
-- few of the scope's rows, kept apart so that review does not visit the live ones, and read
-- index-only: promoted_retracted holds what the comparison needs, the embedding included, for the
-- rows whose values fit a btree entry (_scope_fits, given the columns it holds);
-- promoted_retracted_wide keys the rest. Keyed by model too, so that review's look for memories of
-- other models (src/pipeline/review.rs, other_models()) is a range of each.
CREATE INDEX promoted_retracted ON memory_fabric.promoted_memory (tenant_id, user_id, embedding_model)
    INCLUDE (content_hash, id, embedding)
    WHERE retracted_at IS NOT NULL AND erased_at IS NULL
      AND memory_fabric._scope_fits(tenant_id, user_id, content_hash, embedding_model, id, '', NULL, embedding);
CREATE INDEX promoted_retracted_wide ON memory_fabric.promoted_memory (tenant_id, user_id, embedding_model)
    WHERE retracted_at IS NOT NULL AND erased_at IS NULL
      AND NOT memory_fabric._scope_fits(tenant_id, user_id, content_hash, embedding_model, id, '', NULL, embedding);
-- Review: exact and structured dedup, contradiction by (entity, predicate).
CREATE INDEX promoted_hash ON memory_fabric.promoted_memory (tenant_id, content_hash);
CREATE INDEX promoted_fact ON memory_fabric.promoted_memory (tenant_id, entity, predicate)
    WHERE entity IS NOT NULL;
-- Purging finds what expired and is not erased yet.
CREATE INDEX promoted_expired ON memory_fabric.promoted_memory (tenant_id, expires_at)
    WHERE expires_at IS NOT NULL AND erased_at IS NULL;
-- Re-embedding finds the models of a tenant's memories that have a vector, and a batch of one
-- model's memories in id order, from this index alone.
CREATE INDEX promoted_model ON memory_fabric.promoted_memory (tenant_id, embedding_model, id)
    WHERE erased_at IS NULL AND embedding IS NOT NULL;
-- No nearest-neighbour (HNSW) index by default. Review ranks a scope of more than 2000 rows by
-- the quantised embeddings (promoted_scope_bits), whatever its size, unless the model has an
-- HNSW index and the scope is above memory_fabric.exact_search_limit; recall scores its scope
-- exactly. An HNSW index is made for a model, built-in or a caller's own, by
-- memory_fabric.create_embedding_index(model, dimensions), for models whose scopes are too large
-- to rank (BENCHMARKS.md: on 1M memories an HNSW insert was most of a promotion's cost, and a
-- filtered HNSW search took longer than an exact scan of 20,000 rows).

-- Which roles may act for which tenants ('*': every tenant). Revocation is write-once, so the
-- history of who could see what is kept.
CREATE TABLE memory_fabric.tenant_grants (
    id         text        PRIMARY KEY CHECK (id LIKE 'tg\_%'),
    role_name  text        NOT NULL CHECK (role_name <> ''),
    tenant_id  text        NOT NULL CHECK (tenant_id <> ''),
    granted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    granted_by text        NOT NULL,
    revoked_at timestamptz,
    revoked_by text,
    -- A grant is bound to the role's OID: a role dropped and created again under the same name
    -- is another role and does not inherit the grant. role_name keeps the name it was granted under.
    role_oid   oid,
    CHECK (revoked_at IS NULL OR revoked_by IS NOT NULL)
);
COMMENT ON TABLE memory_fabric.tenant_grants IS
    'Tenant grants per role; append-only except write-once revoked_at, revoked_by';
COMMENT ON COLUMN memory_fabric.tenant_grants.role_oid IS 'The granted role''s OID, which the access check matches';
CREATE UNIQUE INDEX tenant_grants_active ON memory_fabric.tenant_grants (role_oid, tenant_id)
    WHERE revoked_at IS NULL;

-- Audit events. Append-only.
CREATE TABLE memory_fabric.events (
    id         text        PRIMARY KEY CHECK (id LIKE 'ev\_%'),
    tenant_id  text        NOT NULL,
    kind       text        NOT NULL CHECK (kind LIKE 'memory.%'),
    subject_id text,
    actor      text,
    payload    jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(payload) = 'object'),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor_role text,
    -- Set when the erasure of the subject of the candidate or memory it is about masked the free
    -- text in its payload (memory_fabric._erased_payload()).
    erased_at  timestamptz,
    -- The salt of the audit chain's commitment to the payload (audit_chain.content_digest);
    -- erasure removes it with the payload's free text.
    audit_salt uuid        DEFAULT pg_catalog.gen_random_uuid()
);
COMMENT ON TABLE memory_fabric.events IS 'Audit events; append-only except the erasure of their payload''s free text';
COMMENT ON COLUMN memory_fabric.events.actor_role IS 'The database role that acted (actor is the name it gave, else the role)';
CREATE INDEX events_tenant_created ON memory_fabric.events (tenant_id, created_at);
CREATE INDEX events_subject ON memory_fabric.events (subject_id) WHERE subject_id IS NOT NULL;

-- What each recall returned, when memory_fabric.log_recalls is on. Append-only.
CREATE TABLE memory_fabric.recall_log (
    id                     text        PRIMARY KEY CHECK (id LIKE 'rl\_%'),
    tenant_id              text        NOT NULL,
    recalled_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    role_name              text        NOT NULL,
    intent_id              text,
    user_id                text,
    classification_allowed text[]      NOT NULL,
    query_text             text,
    as_of                  timestamptz,
    max_recalls            integer     NOT NULL,
    memory_ids             text[]      NOT NULL,
    scores                 double precision[],
    -- Set when the erasure of the recall's user emptied its query text.
    erased_at              timestamptz
);
COMMENT ON TABLE memory_fabric.recall_log IS 'What each recall returned (memory_fabric.log_recalls); append-only except the erasure of the query text';
CREATE INDEX recall_log_tenant ON memory_fabric.recall_log (tenant_id, recalled_at);

-- Secrets of this database's memory_fabric: 'erasure_digest', the key of the digests that
-- erasure keeps of erased content (memory_fabric._erased_digest()), 32 random bytes made at
-- install. Only a superuser, and the functions that run as one, read it: no role is granted
-- anything on it, and row-level security, forced, has no policy. Not dumped: a restored database
-- gets a new key, and the digests written under the old one can no longer be checked there.
CREATE TABLE memory_fabric.secrets (name text PRIMARY KEY, value bytea NOT NULL CHECK (octet_length(value) >= 32));
COMMENT ON TABLE memory_fabric.secrets IS 'Keys no role may read (the erasure digest''s); superuser only';
REVOKE ALL ON memory_fabric.secrets FROM PUBLIC;

-- The locks the pipeline serialises on (src/xact.rs, lock()): one row per key's hash,
-- row-locked until the transaction ends. No role but the owner of the extension's functions
-- can read, write or lock it, so a role without rights on a tenant can neither take a
-- tenant's lock first nor learn its key.
CREATE TABLE memory_fabric.locks (key bigint PRIMARY KEY);
COMMENT ON TABLE memory_fabric.locks IS 'Keys the pipeline serialises on, as row locks; no role reads or locks them';
REVOKE ALL ON memory_fabric.locks FROM PUBLIC;

-- A version of each scope's promoted memories (a tenant and a user, keyed by 128 bits of the
-- SHA-256 of both, length-prefixed: memory_fabric._scope_version_key(), memory_fabric_core::keys;
-- no two scopes share a row), replaced by a new random one by
-- every statement that inserts or updates promoted memories of the scope: a promotion, a
-- retraction, an erasure, an expiry purge, a re-embedding, a restore. Review records the version
-- it read before searching; promote() compares it with the current one. Versions are random
-- (gen_random_uuid(), which no session can seed), so a scope's version never comes back to one
-- a review recorded, not after a restore either (this table is not dumped: a restored scope
-- has no version until it changes, and reviews of it are decided again in full).
CREATE TABLE memory_fabric.scope_versions (
    key     uuid   PRIMARY KEY,
    version uuid   NOT NULL,
    -- The scope's last changes, oldest first (at most 16): each the version it followed
    -- ("from", null for the scope's first) and the promoted memories it inserted ("ids"), or
    -- null ids for an update or for more than 16 memories at once. promote() reads the memories
    -- inserted since its review's version, when that is all that changed, instead of searching
    -- the scope again (src/pipeline/review.rs, verdict_again()).
    changes jsonb  NOT NULL DEFAULT '[]'
);
COMMENT ON TABLE memory_fabric.scope_versions IS
    'The version of each scope''s promoted memories, new at every change, and its last changes; no role reads or writes it';
REVOKE ALL ON memory_fabric.scope_versions FROM PUBLIC;
-- SECURITY DEFINER: the role that installed the extension restores promoted_memory, and writes
-- it under its own rights, which include nothing on scope_versions.
CREATE FUNCTION memory_fabric._scope_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- in key order, so that two statements changing the same scopes lock their rows alike
    INSERT INTO memory_fabric.scope_versions AS v (key, version, changes)
    SELECT s.key, pg_catalog.gen_random_uuid(),
           pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('from', NULL, 'ids',
               CASE WHEN TG_OP = 'INSERT' AND s.n <= 16 THEN pg_catalog.to_jsonb(s.ids) END))
    FROM (SELECT memory_fabric._scope_version_key(n.tenant_id, n.user_id) AS key,
                 pg_catalog.array_agg(n.id ORDER BY n.id) AS ids, count(*) AS n
          FROM changed n GROUP BY 1) s
    ORDER BY s.key
    ON CONFLICT (key) DO UPDATE SET version = excluded.version,
        changes = (SELECT coalesce(pg_catalog.jsonb_agg(a.e ORDER BY a.i), '[]')
                   FROM pg_catalog.jsonb_array_elements(v.changes || pg_catalog.jsonb_build_array(
                            pg_catalog.jsonb_build_object('from', v.version, 'ids', excluded.changes -> 0 -> 'ids')))
                        WITH ORDINALITY a(e, i)
                   WHERE a.i > pg_catalog.jsonb_array_length(v.changes) + 1 - 16);
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION memory_fabric._scope_changed() FROM PUBLIC;
CREATE TRIGGER scope_changed_insert AFTER INSERT ON memory_fabric.promoted_memory
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION memory_fabric._scope_changed();
CREATE TRIGGER scope_changed_update AFTER UPDATE ON memory_fabric.promoted_memory
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION memory_fabric._scope_changed();
ALTER TABLE memory_fabric.promoted_memory ENABLE ALWAYS TRIGGER scope_changed_insert,
    ENABLE ALWAYS TRIGGER scope_changed_update;

-- Policy versions are numbered from a sequence across all tenants, so that one tenant's
-- set_policy() never waits for another's (it locks its own tenant only). Version 1 is the
-- built-in default.
CREATE SEQUENCE memory_fabric.policy_versions AS integer START 2;

-- The human review queue: candidates whose effective review waits for a human decision.
CREATE VIEW memory_fabric.review_queue WITH (security_invoker = true) AS
SELECT r.tenant_id, r.candidate_id, r.id AS review_id, c.user_id, c.intent_id, r.proposed_tier,
       c.text AS proposed_text, c.evidence_refs, c.classification, c.source, c.actor,
       r.priority_score, r.reason, r.status, r.contradicts_id, r.contradiction_resolution,
       r.reviewed_at AS enqueued_at
FROM memory_fabric.reviews r
JOIN memory_fabric.candidates c ON c.id = r.candidate_id
WHERE (r.reviewer = 'human'
       -- a contradiction no rule resolved, reviewed before 0.21.0 queued it (reviewer auto)
       OR (r.status = 'contradicts' AND r.contradiction_resolution = 'block'))
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.reviews n
                  WHERE n.candidate_id = r.candidate_id AND (n.reviewed_at, n.id) > (r.reviewed_at, r.id))
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.decisions d
                  WHERE d.candidate_id = r.candidate_id AND d.decided_at >= r.reviewed_at)
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = r.candidate_id);
COMMENT ON VIEW memory_fabric.review_queue IS 'Candidates waiting for a human approve / reject / edit, among them every contradiction no rule resolved';

-- Cosine similarity of two vectors of one model. Its body is parsed here, with pgvector's
-- operator bound once, so it depends on no search_path; queries that call it (recall) get it
-- inlined, the operator itself, and need not name pgvector's schema.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE FUNCTION memory_fabric._cosine_similarity(a @pgvector@.vector, b @pgvector@.vector) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 1 - (a OPERATOR(@pgvector@.<=>) b)
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
COMMENT ON FUNCTION memory_fabric._cosine_similarity IS 'Cosine similarity of two vectors (1 - cosine distance)';
REVOKE ALL ON FUNCTION memory_fabric._cosine_similarity FROM PUBLIC;

-- The visibility rules, stated once: the promoted memories a recall for (tenant, user, intent,
-- classifications) may see at instant `at`. A memory is visible when it was promoted by then
-- and neither retracted nor expired yet, its classification is allowed, it is the user's or
-- user-less, of the intent or cross-intent, and the consent it depends on, if any, was recorded
-- by then and neither revoked nor past its validity. recall reads it (inlined, so each of its
-- queries keeps its own index), and so does explain_recall. Parsed here, so it depends on no
-- search_path; as the caller's, row-level security applies to a direct call. It returns the
-- columns its readers use.
-- What memory_fabric._visible_memories() returns: the columns its readers use, typed as in
-- promoted_memory. A function's own result columns lose their typmod, and priority as a plain
-- numeric no longer matches promoted_recall's order: recall would sort the scope.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE TYPE memory_fabric._visible_memory AS (
    id text, tenant_id text, user_id text, intent_scope text, classification text, consent_id text,
    priority numeric(3,2), promoted_at timestamptz, contradicts_id text, embedding_model text,
    embedding @pgvector@.vector)
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
CREATE FUNCTION memory_fabric._visible_memories(for_tenant text, for_user text, for_intent text,
                                                classifications text[], at timestamptz)
RETURNS SETOF memory_fabric._visible_memory
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT m.id, m.tenant_id, m.user_id, m.intent_scope, m.classification, m.consent_id, m.priority, m.promoted_at,
           m.contradicts_id, m.embedding_model, m.embedding
    FROM memory_fabric.promoted_memory m
    WHERE m.tenant_id = _visible_memories.for_tenant
      -- the user's own memories and the user-less ones, cross-intent or of the intent. Written
      -- without OR: recall adds user_id = for_user or user_id IS NULL, and intent_scope IS NULL
      -- or intent_scope = for_intent, to each of its queries; with an OR here its generic plans
      -- combined two bitmap scans and read the heap (or sorted the scope) instead of reading
      -- promoted_recall in order or the scope index-only.
      AND coalesce(m.user_id = _visible_memories.for_user, m.user_id IS NULL)
      AND coalesce(m.intent_scope = _visible_memories.for_intent, m.intent_scope IS NULL)
      AND m.promoted_at <= _visible_memories.at
      AND (m.retracted_at IS NULL OR m.retracted_at > _visible_memories.at)
      AND (m.expires_at IS NULL OR m.expires_at > _visible_memories.at)
      AND m.classification = ANY (_visible_memories.classifications)
      AND (m.consent_id IS NULL OR EXISTS (
            SELECT 1 FROM memory_fabric.consents k
            WHERE k.id = m.consent_id AND k.captured_at <= _visible_memories.at
              AND (k.revoked_at IS NULL OR k.revoked_at > _visible_memories.at)
              AND (k.valid_until IS NULL OR k.valid_until > _visible_memories.at)));
END;
COMMENT ON FUNCTION memory_fabric._visible_memories IS
    'The promoted memories a recall for a tenant, user, intent and classification set may see at an instant';
REVOKE ALL ON FUNCTION memory_fabric._visible_memories FROM PUBLIC;

-- Whether an identifier names a subject: it is the subject, or "<kind>:<subject>"
-- (customer:cus_77 names cus_77). The memories about a subject are those whose user or entity
-- names it: consent (src/consents.rs) and erasure (memory_fabric.forget_subject()) read them
-- alike. Inlined into their queries.
CREATE FUNCTION memory_fabric._names_subject(name text, subject text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN name = subject OR (pg_catalog.strpos(name, ':') > 0
                          AND pg_catalog.substr(name, pg_catalog.strpos(name, ':') + 1) = subject);
COMMENT ON FUNCTION memory_fabric._names_subject IS
    'Whether an identifier names a subject: the subject itself, or <kind>:<subject>';
REVOKE ALL ON FUNCTION memory_fabric._names_subject FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- The audit trail's hash chain. The append-only guards below are triggers, which a superuser can
-- disable; the chain makes what was altered behind them evident. Every event and decision gets
-- one link of its tenant's chain when its transaction commits: its place (seq), the digest of the
-- link before it, and its own digest, SHA-256 over that digest, the place, the row's fields that
-- never change (erasure included) and a salted commitment to its free text (an event's payload, a
-- decision's notes). memory_fabric.verify_audit(tenant) recomputes the chain from the rows and
-- reports the first link that does not hold. The salt (audit_salt) is in the row and erasure
-- removes it with the text: the commitment then stays in the chain, and no one can test a guess
-- at what was erased against it; an erased row's fields that never change are still checked.
-- Links are made at commit (a deferred constraint trigger), so a tenant's appends wait for each
-- other only while committing, after every other lock of their transactions is held.

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

-- What a link's digest is made of: memory_fabric_core::audit (core/src/audit.rs). The functions
-- that compute it, the trigger that appends the links and verify_audit() are in
-- src/api/verify_audit.rs.

-- ---------------------------------------------------------------------------------------------
-- Append-only guards. Row-level BEFORE UPDATE/DELETE and statement-level BEFORE TRUNCATE,
-- ENABLE ALWAYS so they fire under session_replication_role = replica as well. They hold for
-- every role, the owner and superusers included.

CREATE FUNCTION memory_fabric._guard_append_only() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'cannot % table "%.%"',
            CASE TG_OP WHEN 'DELETE' THEN 'delete from' ELSE lower(TG_OP) END,
            TG_TABLE_SCHEMA, TG_TABLE_NAME
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = format('Rule: %s is append-only; rows are never updated, deleted or truncated.',
                              TG_TABLE_NAME),
              HINT = CASE TG_TABLE_NAME
                  WHEN 'candidates' THEN 'Capture a new candidate that supersedes this one.'
                  WHEN 'policies' THEN 'Write a new policy version with memory_fabric.set_policy().'
                  ELSE 'Record a new row instead.'
              END;
END
$$;

-- Write-once columns (named as trigger arguments) may go from NULL to a value, never back
-- and never to another value; every other column is fixed. An UPDATE that sets no write-once
-- column is refused too. Two governed exceptions:
-- * Erasure: when a write-once erased_at is set, the columns that can hold a subject's data may
--   change, but only to their tombstone: text '[erased]'; value, embedding, metadata, evidence
--   refs and a recall's query text emptied; notes and a retraction's or revocation's reason
--   '[erased]'; an event's payload without its free text (memory_fabric._erased_payload()); a
--   content hash to its keyed digest (memory_fabric._erased_digest(), which only a superuser's
--   function can compute); an audit row's salt (audit_salt) removed. Ids, timestamps and everything
--   else stay.
-- * Re-embedding (promoted_memory): a memory that is not erased may get a new vector of
--   another embedding model: embedding_model changes to a different, non-empty name and
--   embedding to a non-null vector, together; the text and everything else stay. The vector is
--   derived from the text, and the candidate keeps the one it was captured with.
CREATE FUNCTION memory_fabric._guard_write_once() RETURNS trigger
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

REVOKE ALL ON FUNCTION memory_fabric._guard_append_only(), memory_fabric._guard_write_once() FROM PUBLIC;

-- Each table's guards. The write-once columns are the trigger's arguments; a table without
-- any is append-only.
DO $$
DECLARE
    t    text;
    once text[];
BEGIN
    FOR t, once IN VALUES
        ('policies', '{}'::text[]), ('candidates', '{erased_at}'), ('embedding_models', '{registered_by}'), ('reviews', '{}'),
        ('decisions', '{erased_at}'), ('consents', '{revoked_at,revoked_by,revocation_reason,erased_at}'),
        ('promoted_memory', '{retracted_at,retracted_by,retraction_reason,erased_at}'), ('events', '{erased_at}'),
        ('tenant_grants', '{revoked_at,revoked_by}'), ('recall_log', '{erased_at}'), ('audit_chain', '{}') LOOP
        IF once = '{}' THEN
            EXECUTE pg_catalog.format('CREATE TRIGGER guard_update BEFORE UPDATE ON memory_fabric.%I FOR EACH ROW '
                                      'EXECUTE FUNCTION memory_fabric._guard_append_only()', t);
        ELSE
            EXECUTE pg_catalog.format('CREATE TRIGGER guard_update BEFORE UPDATE ON memory_fabric.%I FOR EACH ROW '
                                      'EXECUTE FUNCTION memory_fabric._guard_write_once(%s)', t,
                                      (SELECT pg_catalog.string_agg(pg_catalog.quote_literal(c), ', ')
                                       FROM pg_catalog.unnest(once) c));
        END IF;
        EXECUTE pg_catalog.format('CREATE TRIGGER guard_delete BEFORE DELETE ON memory_fabric.%I FOR EACH ROW '
                                  'EXECUTE FUNCTION memory_fabric._guard_append_only()', t);
        EXECUTE pg_catalog.format('CREATE TRIGGER guard_truncate BEFORE TRUNCATE ON memory_fabric.%I '
                                  'FOR EACH STATEMENT EXECUTE FUNCTION memory_fabric._guard_append_only()', t);
        EXECUTE pg_catalog.format('ALTER TABLE memory_fabric.%I ENABLE ALWAYS TRIGGER guard_update, '
                                  'ENABLE ALWAYS TRIGGER guard_delete, ENABLE ALWAYS TRIGGER guard_truncate', t);
    END LOOP;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Who reads what. Ordinary roles hold no INSERT/UPDATE/DELETE/TRUNCATE on any table: every
-- write goes through the public functions, which run with the extension owner's rights.
GRANT SELECT ON memory_fabric.review_queue, memory_fabric.candidates, memory_fabric.reviews,
    memory_fabric.decisions, memory_fabric.promoted_memory
    TO memory_fabric_reviewer, memory_fabric_admin;
GRANT SELECT ON memory_fabric.policies, memory_fabric.embedding_models, memory_fabric.consents,
    memory_fabric.events, memory_fabric.tenant_grants, memory_fabric.recall_log, memory_fabric.audit_chain
    TO memory_fabric_admin;
-- The role that installed the extension administers its data (dump and restore, as a
-- non-superuser owner too): every privilege on the tables, the policy version sequence, and a
-- policy that lets it see and restore every row (src/security.rs). The append-only guards hold
-- for it as for everyone. It gets nothing on locks or scope_versions.
GRANT ALL ON memory_fabric.policies, memory_fabric.candidates, memory_fabric.embedding_models,
    memory_fabric.reviews, memory_fabric.decisions, memory_fabric.consents, memory_fabric.promoted_memory,
    memory_fabric.events, memory_fabric.tenant_grants, memory_fabric.recall_log, memory_fabric.review_queue,
    memory_fabric.audit_chain, memory_fabric.audit_heads
    TO @extowner@;
REVOKE ALL ON SEQUENCE memory_fabric.policy_versions FROM PUBLIC;
GRANT SELECT, UPDATE ON SEQUENCE memory_fabric.policy_versions TO @extowner@;

-- Row-level security, enabled and forced on every table; the policies, which call
-- memory_fabric._visible_tenant(), are in src/security.rs. locks, scope_versions and secrets
-- have none: nobody reads them; audit_heads only its owner's (restore).
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['policies', 'candidates', 'embedding_models', 'reviews', 'decisions', 'consents',
                             'promoted_memory', 'events', 'tenant_grants', 'recall_log', 'locks',
                             'scope_versions', 'secrets', 'audit_chain', 'audit_heads'] LOOP
        EXECUTE pg_catalog.format('ALTER TABLE memory_fabric.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', t);
    END LOOP;
END
$$;

-- No statistics of the values of the tables' text columns: the planner estimates a query's rows
-- from the statistics of all tenants' rows, also for a role whose rows row-level security
-- narrows to one tenant, whenever the query compares with an operator PostgreSQL deems leakproof
-- (text equality and order are). EXPLAIN SELECT * FROM memory_fabric.candidates WHERE
-- tenant_id = 'x' told whether tenant x exists and how many rows it has, and ordering estimates
-- on a text column could be walked to read another tenant's values a histogram bound at a time.
-- Without them every value of such a column is estimated alike. Numbers and times keep theirs
-- (what they show is the spread of all tenants' rows together; README, Security).
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT a.attrelid::pg_catalog.regclass AS rel, a.attname
             FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = ANY (ARRAY['memory_fabric.policies', 'memory_fabric.candidates', 'memory_fabric.embedding_models',
                                           'memory_fabric.reviews', 'memory_fabric.decisions', 'memory_fabric.consents',
                                           'memory_fabric.promoted_memory', 'memory_fabric.events',
                                           'memory_fabric.tenant_grants', 'memory_fabric.recall_log',
                                           'memory_fabric.audit_chain', 'memory_fabric.audit_heads']::pg_catalog.regclass[])
               AND a.attnum > 0 AND NOT a.attisdropped
               AND a.atttypid = ANY (ARRAY['pg_catalog.text', 'pg_catalog.jsonb', 'pg_catalog.text[]',
                                           'pg_catalog.varbit']::pg_catalog.regtype[])
             ORDER BY 1, 2 LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS 0', c.rel, c.attname);
    END LOOP;
END
$$;

-- pg_dump skips extension-owned tables unless registered. The built-in '*' version 1 policy
-- is created by CREATE EXTENSION, so the dump leaves it out to restore without a conflict.
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.policies',
                                           'WHERE NOT (tenant_id = ''*'' AND version = 1)');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.candidates', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.embedding_models', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.reviews', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.decisions', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.consents', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.promoted_memory', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.events', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.tenant_grants', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.recall_log', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.audit_chain', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.audit_heads', '');
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.policy_versions', '');

-- The part pgrx generates next creates our functions in the first schema of search_path, and
-- resolves their argument and result types there first. memory_fabric may have existed before
-- CREATE EXTENSION (a restore creates it; so can a database owner, who then owns it): it must
-- hold nothing this transaction did not create, or a type planted there could stand in for one
-- of pg_catalog's.
DO $$
DECLARE
    ns  oid := 'memory_fabric'::regnamespace;
    bad text;
BEGIN
    SELECT string_agg(o, ', ') INTO bad FROM (
        SELECT p.oid::regprocedure::text AS o FROM pg_proc p
        WHERE p.pronamespace = ns AND p.xmin::text::bigint <> pg_current_xact_id()::text::bigint
        UNION ALL SELECT t.oid::regtype::text FROM pg_type t
        WHERE t.typnamespace = ns AND t.xmin::text::bigint <> pg_current_xact_id()::text::bigint
        UNION ALL SELECT c.oid::regclass::text FROM pg_class c
        WHERE c.relnamespace = ns AND c.xmin::text::bigint <> pg_current_xact_id()::text::bigint
        UNION ALL SELECT o.oid::regoperator::text FROM pg_operator o
        WHERE o.oprnamespace = ns AND o.xmin::text::bigint <> pg_current_xact_id()::text::bigint
        UNION ALL SELECT k.collname::text FROM pg_collation k
        WHERE k.collnamespace = ns AND k.xmin::text::bigint <> pg_current_xact_id()::text::bigint
        LIMIT 5) x;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'schema "memory_fabric" already holds objects memory_fabric did not create'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Found: %s.', bad),
                  HINT = 'Install into an empty memory_fabric schema: drop or move those objects first.';
    END IF;
END
$$;
SET LOCAL search_path = memory_fabric, pg_catalog, pg_temp;
