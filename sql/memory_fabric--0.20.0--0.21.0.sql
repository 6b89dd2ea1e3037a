-- memory_fabric 0.20.0 → 0.21.0: review that holds on real traffic (issue 40).
-- Its statements are the install script's own; tests/upgrade/run.sh checks that it ends with the
-- catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.21.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

-- ---- What each review read a memory to claim (core/src/claim.rs) ----

-- ---- A contradiction that is not promoted waits for a person ----
