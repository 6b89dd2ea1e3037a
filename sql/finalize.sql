-- Runs last in the extension script, after every table (sql/schema.sql) and every function
-- (src/api/ and the modules below it) exists. Names are resolved under pg_catalog alone again,
-- as in schema.sql.
SET LOCAL search_path = pg_catalog, pg_temp;

-- The built-in default policy; its body comes from the Rust core (one source of defaults).
INSERT INTO memory_fabric.policies (tenant_id, version, body, created_by, note)
VALUES ('*', 1, memory_fabric._default_policy(), 'memory_fabric', 'built-in default');

-- Every function pins its search_path where it is declared, so that nothing a caller plants in
-- a schema can stand in for a built-in; this refuses to install one that does not. Exempt:
-- procedures that commit, which cannot carry a SET clause and name everything with its schema,
-- and SQL functions whose body was parsed at creation (BEGIN ATOMIC, RETURN), whose names
-- are bound already and which must carry no SET clause to be inlined.
DO $$
DECLARE
    bad text;
BEGIN
    SELECT pg_catalog.string_agg(p.oid::pg_catalog.regprocedure::text, ', ') INTO bad
    FROM pg_catalog.pg_proc p
    WHERE p.pronamespace = 'memory_fabric'::pg_catalog.regnamespace AND p.prokind <> 'p'
      AND p.prosqlbody IS NULL
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(p.proconfig) c WHERE c = 'search_path=pg_catalog, pg_temp');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'functions without SET search_path = pg_catalog, pg_temp: %', bad;
    END IF;
END
$$;

-- The key of the digests erasure keeps (sql/schema.sql, memory_fabric.secrets).
INSERT INTO memory_fabric.secrets (name, value) VALUES ('erasure_digest', memory_fabric._random_bytes(32));

-- The role that installed the extension may call every function (it administers the data;
-- each function still checks its tenant grant and pin), but for the erasure digest, which only
-- a superuser's function makes: with it, a guess at erased content could be checked.
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA memory_fabric TO @extowner@;
REVOKE ALL ON FUNCTION memory_fabric._erased_digest(text) FROM @extowner@;

-- The scopes of the promoted memories whose values fit a btree entry (_scope_fits; sql/schema.sql),
-- with each embedding quantised to a byte a dimension and the bounds of its rounding
-- (_embedding_sq8) instead of four bytes a dimension. Recall with a query vector
-- (_recall_candidates(), src/api/recall.rs) and review's exact search (_nearest_candidates(),
-- src/pipeline/review.rs) read a scope's entries and bound every memory's similarity, then read
-- only the memories that could be among their results by id. Keyed by the hash of the scope
-- (_scope_key: a tenant, a user, an intent; 128 bits of SHA-256, which no two scopes share), a
-- uuid that the scan compares at each entry instead of three texts (src/scope_scan.rs). Here
-- rather than in sql/schema.sql because its key calls functions of this library, created after
-- schema.sql.
CREATE INDEX promoted_scope_sq8 ON memory_fabric.promoted_memory
    (memory_fabric._scope_key(tenant_id, user_id, intent_scope), embedding_model,
     memory_fabric._embedding_sq8(embedding::real[]))
    INCLUDE (retracted_at, expires_at, promoted_at, classification, consent_id, priority, id)
    WHERE memory_fabric._scope_fits(tenant_id, user_id, intent_scope, embedding_model, id, classification,
                                    consent_id, embedding);
REVOKE ALL ON FUNCTION memory_fabric._embedding_sq8 FROM PUBLIC;
