-- memory_fabric 0.6.0 → 0.7.0: the tenant boundary and the install hold against hostile roles.
-- Written by hand; tests/upgrade/run.sh checks that it ends with the catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.7.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone: nothing a database
-- owner planted in public or in memory_fabric runs here, and everything of ours is qualified.
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
GRANT EXECUTE ON FUNCTION memory_fabric._pgvector_schema() TO @extowner@;

-- Row-level security sees one tenant per statement: the pin as the statement first found it,
-- checked against the grant for that same value (was: the pin read on every row, the grant
-- checked once, so a pin changed inside a statement showed another tenant's rows).
CREATE FUNCTION memory_fabric."_visible_tenant"() RETURNS TEXT /* Option < String > */
STRICT STABLE SECURITY DEFINER PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_visible_tenant_wrapper';
ALTER FUNCTION memory_fabric._visible_tenant() SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION memory_fabric._visible_tenant() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._visible_tenant() TO PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._visible_tenant() TO @extowner@;
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['candidates', 'embedding_models', 'reviews', 'decisions', 'consents',
                             'promoted_memory', 'events', 'tenant_grants', 'policies', 'recall_log'] LOOP
        EXECUTE format('ALTER POLICY tenant_read ON memory_fabric.%I USING (%s)', t,
            CASE WHEN t = 'policies' THEN 'tenant_id = ''*'' OR ' ELSE '' END ||
            'tenant_id = (SELECT memory_fabric._visible_tenant())');
    END LOOP;
END
$$;
DROP FUNCTION memory_fabric._pin_allowed();

-- Serialisation: row locks on a table no role can read or lock (was: advisory locks on keys
-- any role could take first).
CREATE TABLE memory_fabric.locks (key bigint PRIMARY KEY);
COMMENT ON TABLE memory_fabric.locks IS 'Keys the pipeline serialises on, as row locks; no role reads or locks them';
ALTER TABLE memory_fabric.locks ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_fabric.locks FORCE ROW LEVEL SECURITY;
REVOKE ALL ON memory_fabric.locks FROM PUBLIC;

-- Policy versions from a sequence, so set_policy() locks its own tenant only.
CREATE SEQUENCE memory_fabric.policy_versions AS integer START 2;
REVOKE ALL ON SEQUENCE memory_fabric.policy_versions FROM PUBLIC;
-- the extension's owner dumps and restores its value with the data
GRANT SELECT, UPDATE ON SEQUENCE memory_fabric.policy_versions TO @extowner@;
SELECT pg_catalog.setval('memory_fabric.policy_versions', pg_catalog.max(p.version)) FROM memory_fabric.policies p;
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.policy_versions', '');
