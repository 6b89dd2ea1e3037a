-- memory_fabric 0.9.0 → 0.10.0: the bulk path for migrations, memory_fabric.promote_pending(), and
-- memory_fabric.create_embedding_index() for a caller's own embedding model.
-- Written by hand; tests/upgrade/run.sh checks that it ends with the catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.10.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

CREATE FUNCTION memory_fabric."_promote_pending_count"(
	"tenant_id" TEXT, /* Option < & str > */
	"batch_size" INT /* Option < i32 > */
) RETURNS bigint /* i64 */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_promote_pending_count_wrapper';
CREATE FUNCTION memory_fabric."_promote_pending_batch"(
	"tenant_id" TEXT, /* Option < & str > */
	"after_captured_at" timestamp with time zone, /* Option < TimestampWithTimeZone > */
	"after_id" TEXT, /* Option < & str > */
	"batch_size" INT /* Option < i32 > */
) RETURNS TABLE (
	"looked" INT,  /* i32 */
	"reviewed" INT,  /* i32 */
	"promoted" INT,  /* i32 */
	"last_captured_at" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"last_id" TEXT  /* Option < String > */
)
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_promote_pending_batch_wrapper';

-- A procedure that commits can be neither SECURITY DEFINER nor carry a SET clause: it runs as its
-- caller and names everything with its schema; each batch is a SECURITY DEFINER function that
-- checks the caller's tenant grant and pin on every call. CALL it outside a transaction block,
-- with the tenant pinned for the session (SET memory_fabric.tenant_id), since each COMMIT ends a
-- SET LOCAL. A cancelled run keeps every batch before the one it was in; calling it again
-- resumes: the candidates it finished are no longer open, or are reviewed already.
CREATE PROCEDURE memory_fabric.promote_pending(tenant_id text, batch_size integer DEFAULT 200)
LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    v_total    bigint;
    v_looked   bigint := 0;
    v_reviewed bigint := 0;
    v_promoted bigint := 0;
    v_at       timestamptz := '-infinity';
    v_id       text := '';
    b          record;
BEGIN
    v_total := memory_fabric._promote_pending_count(promote_pending.tenant_id, promote_pending.batch_size);
    IF v_total = 0 THEN
        RAISE NOTICE 'no candidate of tenant "%" is waiting for review or promotion', promote_pending.tenant_id;
        RETURN;
    END IF;
    LOOP
        SELECT x.looked, x.reviewed, x.promoted, x.last_captured_at, x.last_id INTO b
        FROM memory_fabric._promote_pending_batch(promote_pending.tenant_id, v_at, v_id, promote_pending.batch_size) AS x;
        EXIT WHEN b.looked = 0;
        v_looked := v_looked + b.looked;
        v_reviewed := v_reviewed + b.reviewed;
        v_promoted := v_promoted + b.promoted;
        v_at := b.last_captured_at;
        v_id := b.last_id;
        RAISE NOTICE '%', pg_catalog.format('%s of %s open candidates of tenant "%s" done (%s%%): %s reviewed, %s promoted',
            v_looked, greatest(v_total, v_looked), promote_pending.tenant_id, v_looked * 100 / greatest(v_total, v_looked),
            v_reviewed, v_promoted);
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE memory_fabric.promote_pending IS
    'Review a tenant''s unreviewed candidates and promote what needs no human, committing after every batch (resumable)';
REVOKE ALL ON FUNCTION memory_fabric._promote_pending_count(text, integer),
    memory_fabric._promote_pending_batch(text, timestamptz, text, integer) FROM PUBLIC;
REVOKE ALL ON PROCEDURE memory_fabric.promote_pending(text, integer) FROM PUBLIC;
-- the roles that may review and promote: the procedure, and the batch functions it calls as the caller
GRANT EXECUTE ON FUNCTION memory_fabric._promote_pending_count(text, integer),
    memory_fabric._promote_pending_batch(text, timestamptz, text, integer)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
GRANT EXECUTE ON PROCEDURE memory_fabric.promote_pending(text, integer)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin, @extowner@;
CREATE FUNCTION memory_fabric."_create_embedding_index"(
	"model" TEXT, /* Option < & str > */
	"dimensions" INT /* Option < i32 > */
) RETURNS TEXT /* String */
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_create_embedding_index_wrapper';

CREATE FUNCTION memory_fabric.create_embedding_index(model text, dimensions integer)
RETURNS text
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT memory_fabric._create_embedding_index(create_embedding_index.model, create_embedding_index.dimensions) $$;
COMMENT ON FUNCTION memory_fabric.create_embedding_index IS
    'Create the nearest-neighbour (HNSW) index for an embedding model''s vectors of a given dimension; returns its name';
REVOKE ALL ON FUNCTION memory_fabric.create_embedding_index(text, integer),
    memory_fabric._create_embedding_index(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.create_embedding_index(text, integer) TO memory_fabric_admin;

-- What a fresh install grants its owner on every function.
GRANT EXECUTE ON FUNCTION memory_fabric._promote_pending_count(text, integer),
    memory_fabric._promote_pending_batch(text, timestamptz, text, integer),
    memory_fabric._create_embedding_index(text, integer), memory_fabric.create_embedding_index(text, integer)
    TO @extowner@;
