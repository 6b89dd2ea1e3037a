#!/usr/bin/env python3
"""Generates the router's and the shard companion's install scripts from the catalog of a
database where memory_fabric is installed (the version the fleet runs):

    python3 router/gen.py 'host=... port=... dbname=... user=postgres'

writes router/memory_fabric_router--0.1.0.sql and router/shard/memory_fabric_shard--0.1.0.sql.
Both are committed: the generator is run again only when the extension's public API changes, and
the diff is reviewed like any other change. It needs only psql (no Python packages).

What it generates is described in router/DESIGN.md. In short, for every public function f of
schema memory_fabric (and the batch functions its procedures call):

  shard side   memory_fabric_shard.f(pin text, <f's arguments>)   LANGUAGE sql, SECURITY INVOKER:
               set_config('memory_fabric.tenant_id', pin, true), then memory_fabric.f(...)
  router side  memory_fabric_router._p_f(shard int, pin text, <f's arguments>)  LANGUAGE plproxy:
               CLUSTER 'memory_fabric'; RUN ON shard; SELECT memory_fabric_shard.f(pin, ...)
               memory_fabric.f(<f's arguments, defaults and result, unchanged>)  LANGUAGE plpgsql,
               SECURITY INVOKER: checks the pin, finds the shard, calls _p_f, and gives the shard's
               error back as the shard raised it (or a clear 08006 when the shard is unreachable)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROLES = ("memory_fabric_agent", "memory_fabric_reviewer", "memory_fabric_admin")
# batch functions the maintenance procedures call (routed too, so the procedures can be copied)
BATCH = ("_promote_pending_count", "_promote_pending_batch", "_purge_expired_pending",
         "_purge_expired_batch", "_reembed_pending", "_reembed_batch")
# functions that act for every tenant when their tenant_id is '*': run on every shard
STAR_ALL = ("grant_tenant", "revoke_tenant", "set_policy")
# functions with no tenant and no id: run on every shard
RUN_ALL = ("my_tenants", "create_embedding_index")
# relations read directly: a router view of the same name shows the pinned tenant's rows
VIEWS = ("review_queue", "metrics", "candidates", "reviews", "decisions", "promoted_memory", "consents",
         "events", "policies", "embedding_models", "tenant_grants")

Q_FUNCS = r"""
SET search_path = pg_catalog;
SELECT json_agg(f ORDER BY f->>'name') FROM (
  SELECT json_build_object(
    'name', p.proname, 'kind', p.prokind,
    'args', pg_get_function_arguments(p.oid),
    'iargs', pg_get_function_identity_arguments(p.oid),
    'result', pg_get_function_result(p.oid),
    'argnames', p.proargnames, 'nin', p.pronargs,
    'intypes', (SELECT coalesce(json_agg(format_type(t, NULL) ORDER BY o), '[]')
                FROM unnest(p.proargtypes) WITH ORDINALITY u(t, o)),
    'retset', p.proretset, 'rettype', format_type(p.prorettype, NULL),
    'rettyp', (SELECT typtype FROM pg_type WHERE oid = p.prorettype),
    'retrel', (SELECT c.relname FROM pg_type t JOIN pg_class c ON c.oid = t.typrelid
               WHERE t.oid = p.prorettype AND c.relnamespace = 'memory_fabric'::regnamespace),
    'acl', (SELECT coalesce(json_agg(DISTINCT a.grantee::regrole::text), '[]')
            FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
            WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> 0),
    'def', CASE WHEN p.prokind = 'p' THEN pg_get_functiondef(p.oid) END) AS f
  FROM pg_proc p
  WHERE p.pronamespace = 'memory_fabric'::regnamespace
    AND (p.proname !~ '^_' OR p.proname = ANY (%s))
) s;
"""

Q_RELS = r"""
SET search_path = pg_catalog;
SELECT json_agg(r) FROM (
  SELECT json_build_object(
    'name', c.relname,
    'cols', (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod))
                             ORDER BY a.attnum)
             FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
    'acl', (SELECT coalesce(json_agg(DISTINCT a.grantee::regrole::text), '[]')
            FROM aclexplode(c.relacl) a WHERE a.privilege_type = 'SELECT' AND a.grantee <> 0)) AS r
  FROM pg_class c
  WHERE c.relnamespace = 'memory_fabric'::regnamespace AND c.relname = ANY (%s)
) s;
"""


def sqlarray(names) -> str:
    return "ARRAY[" + ",".join("'" + n + "'" for n in names) + "]::name[]"


def psql(dsn: str, sql: str):
    out = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    lines = [ln for ln in out.splitlines() if ln.strip() and ln.strip() != "SET"]
    return json.loads(lines[-1])


def roles_of(acl) -> list[str]:
    return sorted(r for r in acl if r in ROLES)


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"' if not name.isidentifier() or name.lower() != name else name


def main() -> None:
    # --check: write nothing, exit 1 if the committed scripts differ from what the catalog gives
    check = "--check" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "--check"]
    dsn = args[0] if args else ""
    funcs = psql(dsn, Q_FUNCS % sqlarray(BATCH))
    rels = {r["name"]: r for r in psql(dsn, Q_RELS % sqlarray(VIEWS))}
    ver = psql(dsn, "SELECT to_json(extversion) FROM pg_extension WHERE extname = 'memory_fabric'")
    shard, router = shard_sql(funcs, rels, ver), router_sql(funcs, rels, ver)
    files = {os.path.join(HERE, "shard", "memory_fabric_shard--0.1.0.sql"): shard,
             os.path.join(HERE, "memory_fabric_router--0.1.0.sql"): router}
    if check:
        stale = [p for p, text in files.items() if not os.path.exists(p) or open(p).read() != text]
        for p in stale:
            print(f"{os.path.relpath(p, HERE)} differs from what memory_fabric {ver}'s catalog gives: run router/gen.py")
        sys.exit(1 if stale else 0)
    os.makedirs(os.path.join(HERE, "shard"), exist_ok=True)
    for p, text in files.items():
        with open(p, "w") as f:
            f.write(text)
    print(f"generated from memory_fabric {ver}: {len(funcs)} functions, {len(rels)} relations")


def call_args(n: int, first: int) -> str:
    return ", ".join(f"${i}" for i in range(first, first + n))


def shard_sql(funcs, rels, ver) -> str:
    out = [f"""-- memory_fabric_shard 0.1.0: generated by router/gen.py from memory_fabric {ver}; do not edit.
-- The shard side of the router (router/DESIGN.md). Every function here is SECURITY INVOKER and
-- runs as the role the router connected as, which is the role that called the router: it pins the
-- transaction to the tenant the router's caller pinned (set_config(..., true), undone when the
-- function returns, because of its SET clause), then calls the real memory_fabric function, which
-- checks the grant, the pin, four eyes and row-level security as on one node. It adds no power:
-- a role may set memory_fabric.tenant_id itself and call the real function directly.
\\echo Use "CREATE EXTENSION memory_fabric_shard" to load this file. \\quit

CREATE SCHEMA memory_fabric_shard;
GRANT USAGE ON SCHEMA memory_fabric_shard TO PUBLIC;

-- which shard this is (set by the fleet); a routed call names the shard it was meant for
CREATE TABLE memory_fabric_shard.identity (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                                           shard integer NOT NULL, cluster text NOT NULL);
GRANT SELECT ON memory_fabric_shard.identity TO PUBLIC;
"""]
    for f in funcs:
        if f["kind"] != "f":
            continue
        name, types = f["name"], f["intypes"]
        params = ", ".join(["pin text"] + types)
        args = call_args(len(types), 2)
        if f["retset"] or f["rettyp"] == "c" or f["result"].startswith("TABLE("):
            sel = f"SELECT * FROM memory_fabric.{ident(name)}({args})"
        else:
            sel = f"SELECT memory_fabric.{ident(name)}({args})"
        out.append(f"""
CREATE FUNCTION memory_fabric_shard.{ident(name)}({params})
RETURNS {f['result']}
LANGUAGE sql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT pg_catalog.set_config('memory_fabric.tenant_id', coalesce($1, ''), true);
{sel};
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard.{ident(name)}({params}) FROM PUBLIC;""")
        roles = roles_of(f["acl"])
        if roles:
            out.append(f"GRANT EXECUTE ON FUNCTION memory_fabric_shard.{ident(name)}({params}) TO {', '.join(roles)};")
    for rel in VIEWS:
        r = rels[rel]
        out.append(f"""
CREATE FUNCTION memory_fabric_shard.read_{rel}(pin text)
RETURNS SETOF memory_fabric.{rel}
LANGUAGE sql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT pg_catalog.set_config('memory_fabric.tenant_id', coalesce($1, ''), true);
SELECT * FROM memory_fabric.{rel};
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard.read_{rel}(text) FROM PUBLIC;""")
        roles = roles_of(r["acl"])
        if roles:
            out.append(f"GRANT EXECUTE ON FUNCTION memory_fabric_shard.read_{rel}(text) TO {', '.join(roles)};")
    return "\n".join(out) + "\n"


ROUTER_HEAD = r"""-- memory_fabric_router 0.1.0: generated by router/gen.py from memory_fabric {ver}; do not edit.
-- The router (router/DESIGN.md): schema memory_fabric holds the same public functions, with the
-- same names, arguments, defaults and results, as the extension; each runs on the shard of its
-- tenant through PL/Proxy, as the role that called it.
\echo Use "CREATE EXTENSION memory_fabric_router" to load this file. \quit

-- the roles, as the extension creates them (the same names on the router and on every shard)
DO $roles$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_fabric_agent', 'memory_fabric_reviewer', 'memory_fabric_admin'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
END
$roles$;

CREATE SCHEMA memory_fabric_router;
CREATE SCHEMA memory_fabric;
GRANT USAGE ON SCHEMA memory_fabric_router, memory_fabric
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- The directory: where each tenant lives. A tenant not listed lives on the hash default,
-- abs(hashtext(tenant_id) % shards). Readable by its owner only (it names every tenant).
CREATE TABLE memory_fabric_router.tenants (
    tenant_id text PRIMARY KEY,
    shard     integer NOT NULL CHECK (shard >= 0),
    moved_at  timestamptz,
    paused    boolean NOT NULL DEFAULT false
);
SELECT pg_catalog.pg_extension_config_dump('memory_fabric_router.tenants', '');

-- The number of partitions of the plproxy server "memory_fabric" (p0 … pN-1).
CREATE FUNCTION memory_fabric_router.shard_count() RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT count(*)::integer FROM pg_catalog.pg_foreign_server s, pg_catalog.unnest(s.srvoptions) o
WHERE s.srvname = 'memory_fabric' AND o ~ '^p[0-9]+='
$fn$;

-- The shard of a tenant: the directory, else the hash default. A tenant being moved (paused) waits
-- until the move flips the directory (memory_fabric_router.pause_timeout, default 30 s), then 55000.
CREATE FUNCTION memory_fabric_router.shard_for(p_tenant text) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    n integer := memory_fabric_router.shard_count();
    s integer;
    p boolean;
    t0 timestamptz := pg_catalog.clock_timestamp();
    wait_ms integer := coalesce(nullif(pg_catalog.current_setting('memory_fabric_router.pause_timeout', true), '')::integer, 30000);
BEGIN
    IF n = 0 THEN
        RAISE EXCEPTION 'the memory_fabric cluster has no shards'
            USING ERRCODE = '55000', HINT = 'Create the plproxy server "memory_fabric" with its partitions (scripts/fleet.sh does).';
    END IF;
    LOOP
        SELECT t.shard, t.paused INTO s, p FROM memory_fabric_router.tenants t WHERE t.tenant_id = p_tenant;
        IF NOT FOUND THEN
            RETURN abs(hashtext(p_tenant) % n);
        END IF;
        EXIT WHEN NOT p;
        IF pg_catalog.clock_timestamp() - t0 > wait_ms * interval '1 millisecond' THEN
            RAISE EXCEPTION 'tenant "%" is being moved to another shard', p_tenant
                USING ERRCODE = '55000', DETAIL = 'Its writes are paused until the move completes; nothing was written.',
                      HINT = 'Retry in a moment.';
        END IF;
        PERFORM pg_catalog.pg_sleep(0.02);
    END LOOP;
    IF s >= n THEN
        RAISE EXCEPTION 'the directory places tenant "%" on shard %, and the cluster has % shards', p_tenant, s, n
            USING ERRCODE = 'XX000';
    END IF;
    RETURN s;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router.shard_for(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router.shard_for(text)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- The pin as the extension reads it: unset and empty both mean none.
CREATE FUNCTION memory_fabric_router._pin() RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$ SELECT nullif(pg_catalog.current_setting('memory_fabric.tenant_id', true), '') $fn$;

-- Checks the pin on the router and returns the shard to run on (-1: every shard).
--   keyed: the function names its tenant (p_tenant); otherwise it names an id, and the pin routes it.
CREATE FUNCTION memory_fabric_router._route(keyed boolean, p_tenant text, p_pin text, p_all boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE su boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user);
BEGIN
    IF keyed THEN
        IF p_all AND p_tenant = '*' THEN
            RETURN -1;     -- every tenant: every shard checks the caller may do it
        END IF;
        IF p_pin IS NULL THEN
            IF su THEN     -- a superuser acts without a pin, as on one node
                RETURN memory_fabric_router.shard_for(coalesce(p_tenant, ''));
            END IF;
            RAISE EXCEPTION 'memory_fabric.tenant_id is not set for role "%"', current_user
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('Acting for tenant "%s" needs the transaction pinned to it.', p_tenant),
                      HINT = pg_catalog.format('Run SET LOCAL memory_fabric.tenant_id = %L in the transaction first (or SET it for the session, before a CALL of a procedure that commits).', p_tenant);
        END IF;
        IF p_tenant IS DISTINCT FROM p_pin THEN
            RAISE EXCEPTION 'tenant "%" is not the pinned tenant', p_tenant
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('This transaction is pinned to tenant "%s".', p_pin);
        END IF;
        RETURN memory_fabric_router.shard_for(p_tenant);
    END IF;
    IF p_pin IS NULL THEN
        RAISE EXCEPTION 'memory_fabric.tenant_id is not set for role "%"', current_user
            USING ERRCODE = '42501',
                  DETAIL = 'The router finds the shard of a candidate, memory or consent by the tenant the transaction is pinned to.',
                  HINT = 'Run SET LOCAL memory_fabric.tenant_id = ''<tenant>'' in the transaction first.';
    END IF;
    RETURN memory_fabric_router.shard_for(p_pin);
END
$fn$;

-- Which partition a libpq connection error names (by the port of its socket or TCP address).
CREATE FUNCTION memory_fabric_router._shard_in_message(msg text) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT min(substring(o FROM '^p([0-9]+)=')::integer)
FROM pg_catalog.pg_foreign_server s, pg_catalog.unnest(s.srvoptions) o
WHERE s.srvname = 'memory_fabric' AND o ~ '^p[0-9]+=' AND substring(o FROM 'port=([0-9]+)') IS NOT NULL
  AND (strpos(msg, '.s.PGSQL.' || substring(o FROM 'port=([0-9]+)') || '"') > 0
       OR strpos(msg, 'port ' || substring(o FROM 'port=([0-9]+)') || ' ') > 0)
$fn$;

-- Gives a routed call's error back: a shard's own error as the shard raised it (its SQLSTATE,
-- message, DETAIL and HINT, without PL/Proxy's prefixes); a shard that cannot be reached as 08006
-- naming the shard and the caller's own tenant, and no other.
CREATE FUNCTION memory_fabric_router._rethrow(st text, msg text, det text, hnt text, p_shard integer, p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE unreachable boolean := false;
BEGIN
    IF msg ~ '^\S+\(\d+\): \[[^]]*\] REMOTE [A-Z]+: ' THEN
        msg := regexp_replace(msg, '^\S+\(\d+\): \[[^]]*\] REMOTE [A-Z]+: ', '');
        det := regexp_replace(det, '^Remote detail: ', '');
        hnt := regexp_replace(hnt, '^Remote hint: ', '');
        -- the shard's connection went away under the call (shut down, terminated, crashed)
        IF st IN ('57P01', '57P02', '57P03') OR st LIKE '08%' THEN
            unreachable := true;
        END IF;
    ELSIF st = 'XX000' AND msg LIKE 'PL/Proxy function %' THEN
        unreachable := true;
    END IF;
    IF unreachable THEN
        IF p_shard < 0 THEN
            p_shard := memory_fabric_router._shard_in_message(msg);
        END IF;
        RAISE LOG 'memory_fabric_router: shard % unreachable: %', p_shard, msg;
        RAISE EXCEPTION '%', CASE WHEN p_shard IS NULL OR p_shard < 0
                                  THEN 'a shard of the memory_fabric cluster is unavailable'
                                  ELSE pg_catalog.format('shard %s of the memory_fabric cluster is unavailable', p_shard) END
            USING ERRCODE = '08006',
                  DETAIL = CASE WHEN p_tenant IS NULL
                                THEN 'The call runs on every shard, and this one cannot be reached. The other shards keep serving.'
                                ELSE pg_catalog.format('Tenant "%s" is served by shard %s, which cannot be reached. The other shards keep serving.', p_tenant, p_shard) END,
                  HINT = 'Retry when the shard is back or has failed over; the router''s log has the connection error.';
    END IF;
    det := nullif(det, ''); hnt := nullif(hnt, '');
    IF det IS NULL AND hnt IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = st, MESSAGE = msg;
    ELSIF hnt IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = st, MESSAGE = msg, DETAIL = det;
    ELSIF det IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = st, MESSAGE = msg, HINT = hnt;
    ELSE
        RAISE EXCEPTION USING ERRCODE = st, MESSAGE = msg, DETAIL = det, HINT = hnt;
    END IF;
END
$fn$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA memory_fabric_router
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
REVOKE ALL ON FUNCTION memory_fabric_router.shard_count() FROM PUBLIC;
REVOKE ALL ON FUNCTION memory_fabric_router._shard_in_message(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._shard_in_message(text) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"""


def wrapper_body(call_rows: str, call_scalar: str, f, keyed: str, tenant_expr: str, star: str) -> str:
    """The plpgsql body of a router function: route, call the proxy, give errors back."""
    if f["retset"] or f["result"].startswith("TABLE("):
        ret = f"RETURN QUERY {call_rows};"
        decl = ""
    elif f["rettyp"] == "c":
        decl = f"\n    r {f['rettype']};"
        ret = f"{call_rows.replace('SELECT *', 'SELECT * INTO r', 1)};\n        RETURN r;"
    else:
        decl = ""
        ret = f"RETURN {call_scalar};"
    return f"""DECLARE
    v_pin text := memory_fabric_router._pin();
    v_shard integer;
    st text; msg text; det text; hnt text;{decl}
BEGIN
    v_shard := memory_fabric_router._route({keyed}, {tenant_expr}, v_pin{star});
    BEGIN
        {ret}
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, v_shard, coalesce({tenant_expr}, v_pin));
    END;
END"""


def router_sql(funcs, rels, ver) -> str:
    out = [ROUTER_HEAD.replace("{ver}", str(ver))]
    # views: the pinned tenant's rows of each relation read directly
    out.append("\n-- Relations read directly: the pinned tenant's rows, from its shard.")
    for rel in VIEWS:
        r = rels[rel]
        cols = ",\n    ".join('"' + c['name'].replace('"', '""') + '" ' + c['type'] for c in r["cols"])
        roles = roles_of(r["acl"])
        out.append(f"""
CREATE TYPE memory_fabric_router.{rel}_row AS (
    {cols});
CREATE FUNCTION memory_fabric_router._p_read_{rel}(part_no integer, pin_value text)
RETURNS SETOF memory_fabric_router.{rel}_row
LANGUAGE plproxy
AS $fn$
    CLUSTER 'memory_fabric';
    RUN ON part_no;
    SELECT * FROM memory_fabric_shard.read_{rel}(pin_value);
$fn$;
CREATE FUNCTION memory_fabric_router.read_{rel}()
RETURNS SETOF memory_fabric_router.{rel}_row
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
{wrapper_body(f"SELECT * FROM memory_fabric_router._p_read_{rel}(v_shard, v_pin)", "", {"retset": True, "result": ""}, "false", "NULL::text", "")}
$fn$;
CREATE VIEW memory_fabric.{rel} AS SELECT * FROM memory_fabric_router.read_{rel}();
REVOKE ALL ON memory_fabric.{rel} FROM PUBLIC;""")
        if roles:
            out.append(f"GRANT SELECT ON memory_fabric.{rel} TO {', '.join(roles)};")
    out.append("\n-- The functions.")
    procs = []
    for f in funcs:
        if f["kind"] == "p":
            procs.append(f)
            continue
        name, types = f["name"], f["intypes"]
        names = (f["argnames"] or [])[: f["nin"]]
        n = len(types)
        pparams = ", ".join(["part_no integer", "pin_value text"] + [f"arg{i} {t}" for i, t in enumerate(types, 1)])
        remote_args = ", ".join(["pin_value"] + [f"arg{i}" for i in range(1, n + 1)])
        if f["retset"] or f["rettyp"] == "c" or f["result"].startswith("TABLE("):
            remote = f"SELECT * FROM memory_fabric_shard.{ident(name)}({remote_args});"
        else:
            remote = f"SELECT memory_fabric_shard.{ident(name)}({remote_args});"
        pres = f["result"]
        allset = name in RUN_ALL or name in STAR_ALL
        out.append(f"""
CREATE FUNCTION memory_fabric_router._p_{name}({pparams})
RETURNS {pres}
LANGUAGE plproxy
AS $fn$
    CLUSTER 'memory_fabric';
    RUN ON part_no;
    {remote}
$fn$;""")
        if allset:
            sres = pres if (f["retset"] or pres.startswith("TABLE(")) else f"SETOF {pres}"
            out.append(f"""CREATE FUNCTION memory_fabric_router._pall_{name}({pparams})
RETURNS {sres}
LANGUAGE plproxy
AS $fn$
    CLUSTER 'memory_fabric';
    RUN ON ALL;
    {remote}
$fn$;""")
        pos = call_args(n, 1)
        sep = ", " if n else ""
        one_rows = f"SELECT * FROM memory_fabric_router._p_{name}(v_shard, v_pin{sep}{pos})"
        one_scalar = f"memory_fabric_router._p_{name}(v_shard, v_pin{sep}{pos})"
        if name in RUN_ALL:
            body = run_all_body(f, name, pos, sep)
        else:
            keyed = "tenant_id" in names
            tenant_expr = f"${names.index('tenant_id') + 1}" if keyed else "NULL::text"
            if name in STAR_ALL:
                all_rows = f"SELECT * FROM memory_fabric_router._pall_{name}(v_shard, v_pin{sep}{pos})"
                rows = (f"IF v_shard < 0 THEN\n            {star_ret(f, all_rows)}\n        END IF;\n        "
                        + ("RETURN QUERY " + one_rows + ";" if f["retset"] else
                           (f"SELECT * INTO r FROM memory_fabric_router._p_{name}(v_shard, v_pin{sep}{pos});\n        RETURN r;"
                            if f["rettyp"] == "c" else f"RETURN {one_scalar};")))
                body = wrapper_body("", "", f, "true", tenant_expr, ", true")
                # splice the '*' branch in
                start = body.index("    BEGIN\n        ") + len("    BEGIN\n        ")
                end = body.index("\n    EXCEPTION")
                body = body[:start] + rows + body[end:]
            else:
                body = wrapper_body(one_rows, one_scalar, f, "true" if keyed else "false", tenant_expr, "")
        out.append(f"""CREATE FUNCTION memory_fabric.{ident(name)}({f['args']})
RETURNS {pres}
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
{body}
$fn$;
REVOKE ALL ON FUNCTION memory_fabric.{ident(name)}({f['iargs']}) FROM PUBLIC;""")
        roles = roles_of(f["acl"])
        if roles:
            out.append(f"GRANT EXECUTE ON FUNCTION memory_fabric.{ident(name)}({f['iargs']}) TO {', '.join(roles)};")
    out.append("\n-- The procedures: the extension's own bodies, whose batch functions above run on the shard\n"
               "-- (each batch commits there; the pin must be set for the session, as on one node).")
    for f in procs:
        d = f["def"].rstrip()
        d = d.replace("CREATE OR REPLACE PROCEDURE", "CREATE PROCEDURE", 1)
        out.append(d + ";")
        out.append(f"REVOKE ALL ON PROCEDURE memory_fabric.{ident(f['name'])}({f['iargs']}) FROM PUBLIC;")
        roles = roles_of(f["acl"])
        if roles:
            out.append(f"GRANT EXECUTE ON PROCEDURE memory_fabric.{ident(f['name'])}({f['iargs']}) TO {', '.join(roles)};")
    out.append(ROLLUP)
    return "\n".join(out) + "\n"


def star_ret(f, all_rows: str) -> str:
    if f["retset"]:
        return f"RETURN QUERY {all_rows};\n            RETURN;"
    if f["rettyp"] == "c":
        return f"{all_rows.replace('SELECT *', 'SELECT * INTO r', 1)} LIMIT 1;\n            RETURN r;"
    return f"RETURN ({all_rows} LIMIT 1);"


def run_all_body(f, name: str, pos: str, sep: str) -> str:
    call = f"memory_fabric_router._pall_{name}(-1, memory_fabric_router._pin(){sep}{pos})"
    if name == "my_tenants":
        q = (f"SELECT DISTINCT ON (x.tenant_id, x.role_name) x.tenant_id, x.role_name, x.granted_at "
             f"FROM {call} x ORDER BY x.tenant_id, x.role_name, x.granted_at")
        ret = f"RETURN QUERY {q};"
    else:
        ret = f"RETURN (SELECT min(x) FROM {call} x);"
    return f"""DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    {ret}
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, -1, NULL);
END"""


ROLLUP = r"""
-- The cross-tenant metrics rollup for admins: the metrics of every tenant the caller may act for
-- ('*' is not expanded), each read on its own shard with the pin set to that tenant, so each
-- shard checks the grant. A shard that is down fails the rollup (08006).
CREATE FUNCTION memory_fabric_router.metrics_rollup()
RETURNS SETOF memory_fabric_router.metrics_row
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    t text;
    s integer;
    st text; msg text; det text; hnt text;
BEGIN
    FOR t IN SELECT DISTINCT m.tenant_id FROM memory_fabric.my_tenants() m WHERE m.tenant_id <> '*' ORDER BY 1 LOOP
        s := memory_fabric_router.shard_for(t);
        BEGIN
            RETURN QUERY SELECT * FROM memory_fabric_router._p_read_metrics(s, t);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
            PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, s, t);
        END;
    END LOOP;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router.metrics_rollup() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router.metrics_rollup() TO memory_fabric_admin;

-- The plproxy server is the deployment's (scripts/fleet.sh creates it); the roles need USAGE on it,
-- granted when it is created:
--   CREATE SERVER memory_fabric FOREIGN DATA WRAPPER plproxy OPTIONS (modular_mapping '1', p0 '…', …);
--   CREATE USER MAPPING FOR PUBLIC SERVER memory_fabric;
--   GRANT USAGE ON FOREIGN SERVER memory_fabric TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"""

if __name__ == "__main__":
    main()
