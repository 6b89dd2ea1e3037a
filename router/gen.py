#!/usr/bin/env python3
"""Generates the router's and the shard companion's install scripts from the catalog of a
database where memory_fabric is installed (the version the fleet runs):

    python3 router/gen.py 'host=... port=... dbname=... user=postgres'     [--check]

writes router/memory_fabric_router--0.2.0.sql and router/shard/memory_fabric_shard--0.2.0.sql, and
the generated section of each hand-written upgrade script from 0.1.0 (see delta()). All are
committed: the generator is run again when the extension's public API changes, and the diff is
reviewed like any other change; --check writes nothing and fails when a file differs. It needs
only psql (no Python packages).

What it generates is described in router/DESIGN.md. In short, for every public function f of
schema memory_fabric (and the batch functions its procedures call):

  shard side   memory_fabric_shard.f(pin text, <f's arguments>)   LANGUAGE sql, SECURITY INVOKER:
               _serve(pin, tenant) (the move's gate and refusal), set_config('memory_fabric.tenant_id',
               pin, true), then memory_fabric.f(...)
  router side  memory_fabric_router._p_f(shard int, pin text, intent text, <f's arguments>)  LANGUAGE plproxy:
               CLUSTER 'memory_fabric'; RUN ON shard;
               SELECT memory_fabric_shard.f(memory_fabric_shard._intent(pin, intent), ...): the caller's
               intent pin (memory_fabric.intent_id) set on the shard as the tenant pin is
               and for a read (READS) _pro_f, the same run read-only on the shard
               (memory_fabric_shard._read_only(pin) as the pin argument)
               memory_fabric.f(<f's arguments, defaults and result, unchanged>)  LANGUAGE plpgsql,
               SECURITY INVOKER: refuses a write in a read-only transaction (25006), checks the pin,
               finds the shard, calls _p_f (or _pro_f), tries again when the shard refused a tenant
               being moved, and gives the shard's error back as the shard raised it (or a clear
               08006 when the shard is unreachable, 28000 when it refused the role)

and static sections: SHARD_MOVE (memory_fabric_shard.retired, the gates, _serve, which every wrapper
calls first, and the move_* functions), ROUTER_MOVE (memory_fabric_router.move_tenant(),
erase_moved_copy() and their PL/Proxy functions): moving a tenant, router/DESIGN.md §7; and
SHARD_ROLES / ROUTER_ROLES (sync_roles(): the router's roles on every shard, §3).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = "0.2.0"      # of both extensions; their install scripts are generated
PREVIOUS = "0.1.0"     # the version the hand-written upgrade scripts start from
ROLES = ("memory_fabric_agent", "memory_fabric_reviewer", "memory_fabric_admin")
# batch functions the maintenance procedures call (routed too, so the procedures can be copied)
BATCH = ("_promote_pending_count", "_promote_pending_batch", "_purge_expired_pending",
         "_purge_expired_batch", "_reembed_pending", "_reembed_batch")
# functions that act for every tenant when their tenant_id is '*': run on every shard
STAR_ALL = ("grant_tenant", "revoke_tenant", "set_policy")
# functions with no tenant and no id: run on every shard
RUN_ALL = ("my_tenants", "create_embedding_index")
# reads that may run on a shard's hot standby: with memory_fabric_router.read_from = 'standby', on
# the cluster memory_fabric_ro (_read_cluster), whose partitions prefer a standby
STANDBY_READS = ("recall", "recall_fact")
# The functions that read: on one node they run in a read-only transaction (recall and recall_fact
# write their log only when memory_fabric.log_recalls is on, and refuse then, as one node does).
# Through the router, in a read-only transaction, a read runs read-only on the shard as well (its
# _pro_ proxy) and every other function is refused before it is routed (25006): a function not
# listed here is taken for one that writes. The views read too.
READS = ("recall", "recall_fact", "explain_recall", "memory_history", "review_status", "candidate_evidence",
         "my_tenants", "verify_audit", "_promote_pending_count", "_purge_expired_pending", "_reembed_pending")
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
    missing = sorted(set(READS) - {f["name"] for f in funcs})
    if missing:
        print(f"note: READS names functions memory_fabric {ver} does not have: {', '.join(missing)}", file=sys.stderr)
    shard, router = shard_sql(funcs, rels, ver), router_sql(funcs, rels, ver)
    files = {}
    for ext, new in (("shard/memory_fabric_shard", shard), ("memory_fabric_router", router)):
        files[os.path.join(HERE, f"{ext}--{VERSION}.sql")] = new
        # the upgrade script: hand-written, with a section generated from the two install scripts
        up = os.path.join(HERE, f"{ext}--{PREVIOUS}--{VERSION}.sql")
        old = open(os.path.join(HERE, f"{ext}--{PREVIOUS}.sql")).read()
        files[up] = with_generated(open(up).read(), delta(old, new), up)
    if check:
        stale = [p for p, text in files.items() if not os.path.exists(p) or open(p).read() != text]
        for p in stale:
            print(f"{os.path.relpath(p, HERE)} differs from what memory_fabric {ver}'s catalog gives: run router/gen.py")
        sys.exit(1 if stale else 0)
    for p, text in files.items():
        with open(p, "w") as f:
            f.write(text)
    print(f"generated from memory_fabric {ver}: {len(funcs)} functions, {len(rels)} relations")


# ---------------------------------------------------------------------------------------------
# The upgrade from the previous version. Its script is written by hand (the tables, views and
# anything else that is not a function) around a section that this generator fills: every
# function or procedure of the new install script that the old one lacks is created, every one
# whose text changed is replaced (dropped and created when its result type changed), those the
# new one lacks are dropped, and each one's privileges are set as a fresh install sets them. A
# router row type whose table gained columns gains them too, and its view is made again. The
# fleet test compares the catalog an upgrade gives with a fresh install's.
BEGIN_GEN = "-- BEGIN generated by router/gen.py (do not edit between these lines)"
END_GEN = "-- END generated by router/gen.py"
ROLE_LIST = "PUBLIC, memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin"


def with_generated(text: str, section: str, path: str) -> str:
    if BEGIN_GEN not in text or END_GEN not in text:
        raise SystemExit(f"{path}: no generated section ({BEGIN_GEN!r} … {END_GEN!r})")
    head, rest = text.split(BEGIN_GEN, 1)
    _, tail = rest.split(END_GEN, 1)
    return head + BEGIN_GEN + "\n" + section + END_GEN + tail


def balanced(s: str, i: int) -> int:
    """The index of the parenthesis closing the one at s[i], past quotes."""
    depth, q = 0, None
    for j in range(i, len(s)):
        c = s[j]
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced: " + s[i:i + 80])


def split_top(s: str) -> list[str]:
    parts, depth, q, cur = [], 0, None, ""
    for c in s:
        if q:
            q = None if c == q else q
        elif c in "'\"":
            q = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += c
    if cur.strip():
        parts.append(cur)
    return parts


def no_defaults(params: str) -> str:
    """A parameter list as DROP and REVOKE take it: names, modes and types, no defaults."""
    out = []
    for p in split_top(params):
        p = " ".join(p.split())
        m = re.search(r" DEFAULT |\s*=\s", p)
        out.append(p[: m.start()] if m else p)
    return ", ".join(out)


def statements(text: str) -> list[tuple[str, str]]:
    """(kind, text) of the statements of an install script that this generator diffs: functions and
    procedures, router row types, views, and privilege statements."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"CREATE (FUNCTION|PROCEDURE|TYPE|VIEW) ", ln) or re.match(r"(REVOKE|GRANT) ", ln)
        if not m:
            i += 1
            continue
        kind, j, tag = m.group(1), i, None
        while True:
            cur = lines[j]
            if kind in ("FUNCTION", "PROCEDURE"):
                if tag is None:
                    t = re.search(r"\bAS (\$[A-Za-z_]*\$)", cur)
                    if t:
                        tag = t.group(1)
                        if cur[t.end():].rstrip().endswith(tag + ";"):
                            break
                elif cur.rstrip().endswith(tag + ";"):
                    break
            elif cur.rstrip().endswith(";"):
                break
            j += 1
        out.append((kind, "\n".join(lines[i:j + 1])))
        i = j + 1
    return out


def routine(stmt: str) -> tuple[tuple[str, str, str], str]:
    """((kind, name, parameters without defaults), result) of a CREATE FUNCTION/PROCEDURE."""
    m = re.match(r"CREATE (FUNCTION|PROCEDURE) (\S+?)\(", stmt)
    close = balanced(stmt, m.end() - 1)
    params = no_defaults(stmt[m.end():close])
    rest = stmt[close + 1:]
    res = re.match(r"\s*RETURNS (.*?)\s*(?:\n\s*LANGUAGE|\s+LANGUAGE|\n\s*AS |\s+AS )", rest, re.S)
    return (m.group(1), m.group(2), params), " ".join(res.group(1).split()) if res else ""


def delta(old: str, new: str) -> str:
    olds, news = statements(old), statements(new)
    old_fn = {routine(s)[0]: s for k, s in olds if k in ("FUNCTION", "PROCEDURE")}
    new_fn = [(routine(s)[0], routine(s)[1], s) for k, s in news if k in ("FUNCTION", "PROCEDURE")]
    old_types = {s.split()[2]: s for k, s in olds if k == "TYPE"}
    new_types = [(s.split()[2], s) for k, s in news if k == "TYPE"]
    privs = [s for k, s in news if k in ("REVOKE", "GRANT")]
    if any("ALL FUNCTIONS IN SCHEMA" in s for s in privs):
        raise SystemExit("a GRANT ... ON ALL FUNCTIONS cannot be diffed: grant each function")
    out = []
    # row types whose columns changed: a table of memory_fabric gained columns (at its end, as
    # ALTER TABLE adds them); the type gains them, and the view of the same name is made again
    # (SELECT * is expanded when a view is made: its new columns come last, which CREATE OR
    # REPLACE VIEW allows, and the functions that return the view's row type keep it)
    def cols(s: str) -> list[str]:
        return [" ".join(c.split()) for c in split_top(s[s.index("(") + 1: s.rindex(")")])]
    for name, s in new_types:
        if name not in old_types:
            out.append(s)
        elif old_types[name] != s:
            old_c, new_c = cols(old_types[name]), cols(s)
            if new_c[: len(old_c)] != old_c:
                raise SystemExit(f"{name}: columns other than new ones at the end changed; write that part of the upgrade by hand")
            out += [f"ALTER TYPE {name} ADD ATTRIBUTE {c};" for c in new_c[len(old_c):]]
            rel = name.split(".")[1][: -len("_row")]
            out += [s.replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1) for k, s in news
                    if k == "VIEW" and s.startswith(f"CREATE VIEW memory_fabric.{rel} ")]
    for key in old_fn:
        if key not in {k for k, _, _ in new_fn}:
            out.append(f"DROP {key[0]} {key[1]}({key[2]});")
    for key, res, stmt in new_fn:
        if key in old_fn:
            if old_fn[key] == stmt:
                continue
            if routine(old_fn[key])[1] != res:
                out.append(f"DROP {key[0]} {key[1]}({key[2]});")
            else:
                stmt = stmt.replace(f"CREATE {key[0]} ", f"CREATE OR REPLACE {key[0]} ", 1)
        out.append(stmt)
    # privileges: as a fresh install sets them, for every function (every revoke before any grant:
    # one GRANT statement may name several functions)
    grants: list[str] = []
    for key, _, _ in new_fn:
        mention = re.compile(rf"ON (FUNCTION|PROCEDURE) (.*\s)?{re.escape(key[1])}[\s(;]", re.S)
        mine = [s for s in privs if mention.search(s)]
        if not any(s.startswith("REVOKE ALL") for s in mine):
            raise SystemExit(f"{key[1]}: the install script does not revoke it from PUBLIC")
        out.append(f"REVOKE ALL ON {key[0]} {key[1]}({key[2]}) FROM {ROLE_LIST};")
        grants += [s for s in mine if s.startswith("GRANT") and s not in grants]
    return "\n".join(out + grants) + "\n"


def call_args(n: int, first: int) -> str:
    return ", ".join(f"${i}" for i in range(first, first + n))


def shard_sql(funcs, rels, ver) -> str:
    out = [f"""-- memory_fabric_shard {VERSION}: generated by router/gen.py from memory_fabric {ver}; do not edit.
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
""", SHARD_MOVE]
    for f in funcs:
        if f["kind"] != "f":
            continue
        name, types = f["name"], f["intypes"]
        params = ", ".join(["pin text"] + types)
        args = call_args(len(types), 2)
        names = (f["argnames"] or [])[: f["nin"]]
        tenant_arg = f"${names.index('tenant_id') + 2}" if "tenant_id" in names else "NULL"
        if f["retset"] or f["rettyp"] == "c" or f["result"].startswith("TABLE("):
            sel = f"SELECT * FROM memory_fabric.{ident(name)}({args})"
        else:
            sel = f"SELECT memory_fabric.{ident(name)}({args})"
        out.append(f"""
CREATE FUNCTION memory_fabric_shard.{ident(name)}({params})
RETURNS {f['result']}
LANGUAGE sql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT memory_fabric_shard._serve($1, {tenant_arg});
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
SELECT memory_fabric_shard._serve($1, NULL);
SELECT pg_catalog.set_config('memory_fabric.tenant_id', coalesce($1, ''), true);
SELECT * FROM memory_fabric.{rel};
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard.read_{rel}(text) FROM PUBLIC;""")
        roles = roles_of(r["acl"])
        if roles:
            out.append(f"GRANT EXECUTE ON FUNCTION memory_fabric_shard.read_{rel}(text) TO {', '.join(roles)};")
    out.append(SHARD_PIPELINE)
    out.append(SHARD_ROLES)
    return "\n".join(out) + "\n"


ROUTER_HEAD = r"""-- memory_fabric_router {rver}: generated by router/gen.py from memory_fabric {ver}; do not edit.
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
SELECT pg_catalog.count(*)::integer FROM pg_catalog.pg_foreign_server s, pg_catalog.unnest(s.srvoptions) o
WHERE s.srvname = 'memory_fabric' AND o OPERATOR(pg_catalog.~) '^p[0-9]+='
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router.shard_count() FROM PUBLIC;

-- The shard of a tenant: the directory, else the hash default. A tenant being moved (paused in
-- the directory) waits, polling every 20 ms, until the move flips the directory, or
-- memory_fabric_router.pause_timeout (ms, default 30000) passes: then 55000, nothing written.
-- It takes no lock: a move drains a tenant's calls on its shard (memory_fabric_shard._serve), so
-- the mode of the router transaction changes nothing. The owner's only: the directory names
-- every tenant; routed calls reach it through _pinned_shard(), for the pinned tenant.
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
            RETURN pg_catalog.abs(pg_catalog.hashtext(p_tenant) % n);
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

-- The pin as the extension reads it: unset and empty both mean none.
CREATE FUNCTION memory_fabric_router._pin() RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$ SELECT NULLIF(pg_catalog.current_setting('memory_fabric.tenant_id', true), '') $fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._pin() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._pin() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- The intent pin as the extension reads it (memory_fabric.intent_id; unset and empty mean none):
-- every routed call carries it to the shard.
CREATE FUNCTION memory_fabric_router._intent_pin() RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$ SELECT NULLIF(pg_catalog.current_setting('memory_fabric.intent_id', true), '') $fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._intent_pin() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._intent_pin() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- The shard of the tenant the transaction is pinned to, read from the pin itself (not from an
-- argument): what a routed call of a role that is not a superuser may learn of the directory.
CREATE FUNCTION memory_fabric_router._pinned_shard() RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE p text := memory_fabric_router._pin();
BEGIN
    IF p IS NULL THEN
        RAISE EXCEPTION 'memory_fabric.tenant_id is not set' USING ERRCODE = '42501';
    END IF;
    RETURN memory_fabric_router.shard_for(p);
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._pinned_shard() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._pinned_shard() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Checks the pin on the router and returns the shard to run on (-1: every shard).
--   keyed: the function names its tenant (p_tenant); otherwise it names an id, and the pin routes it.
CREATE FUNCTION memory_fabric_router._route(keyed boolean, p_tenant text, p_pin text, p_all boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE su boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) current_user);
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
        RETURN memory_fabric_router._pinned_shard();
    END IF;
    IF p_pin IS NULL THEN
        RAISE EXCEPTION 'memory_fabric.tenant_id is not set for role "%"', current_user
            USING ERRCODE = '42501',
                  DETAIL = 'The router finds the shard of a candidate, memory or consent by the tenant the transaction is pinned to.',
                  HINT = 'Run SET LOCAL memory_fabric.tenant_id = ''<tenant>'' in the transaction first.';
    END IF;
    RETURN memory_fabric_router._pinned_shard();
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._route(boolean, text, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._route(boolean, text, text, boolean) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Whether the router transaction is read-only (BEGIN READ ONLY, default_transaction_read_only,
-- a router that is a standby): its reads then run read-only on the shard as well.
CREATE FUNCTION memory_fabric_router._read_only() RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$ SELECT pg_catalog.current_setting('transaction_read_only') OPERATOR(pg_catalog.=) 'on' $fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._read_only() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._read_only() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Refuses a function that writes in a read-only router transaction, before it is routed, as one
-- node refuses it (25006, the extension's own message): PL/Proxy runs each call in a transaction
-- of its own on the shard, which the router's mode does not reach.
CREATE FUNCTION memory_fabric_router._writable() RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF pg_catalog.current_setting('transaction_read_only') = 'on' THEN
        IF pg_catalog.pg_is_in_recovery() THEN
            RAISE EXCEPTION 'memory_fabric cannot write in a read-only transaction'
                USING ERRCODE = '25006', DETAIL = 'This router is a standby in recovery.',
                      HINT = 'Capture, review and promote through the primary router; recall works through a standby.';
        END IF;
        RAISE EXCEPTION 'memory_fabric cannot write in a read-only transaction'
            USING ERRCODE = '25006', DETAIL = 'The transaction is read-only.', HINT = 'Run it in a read-write transaction.';
    END IF;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._writable() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._writable() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Whether a routed call is tried again: the shard refused a tenant it does not serve (being moved,
-- or moved away: memory_fabric_shard._serve, before the call did anything), the transaction reads
-- the directory afresh (read committed), and memory_fabric_router.pause_timeout has not passed since
-- the call began. A call that read the directory just before a move paused the tenant may reach
-- the old shard after the move froze it; it then waits for the move like any other call.
CREATE FUNCTION memory_fabric_router._again(st text, msg text, t0 timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE wait_ms integer := coalesce(nullif(pg_catalog.current_setting('memory_fabric_router.pause_timeout', true), '')::integer, 30000);
BEGIN
    IF st IS DISTINCT FROM '55000'
       OR msg OPERATOR(pg_catalog.!~) '^\S+\(\d+\): \[[^]]*\] REMOTE ERROR: tenant ".*" (has moved to shard [0-9]+|is being moved to another shard)$'
       OR pg_catalog.current_setting('transaction_isolation') <> 'read committed'
       OR pg_catalog.clock_timestamp() - t0 > wait_ms * interval '1 millisecond' THEN
        RETURN false;
    END IF;
    PERFORM pg_catalog.pg_sleep(0.02);
    RETURN true;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._again(text, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._again(text, text, timestamptz) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Which partition a libpq connection error names (by the port of its socket or TCP address).
CREATE FUNCTION memory_fabric_router._shard_in_message(msg text) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT pg_catalog.min(substring(o FROM '^p([0-9]+)=')::integer)
FROM pg_catalog.pg_foreign_server s, pg_catalog.unnest(s.srvoptions) o
WHERE s.srvname = 'memory_fabric' AND o OPERATOR(pg_catalog.~) '^p[0-9]+=' AND substring(o FROM 'port=([0-9,]+)') IS NOT NULL
  AND EXISTS (SELECT 1 FROM pg_catalog.regexp_split_to_table(substring(o FROM 'port=([0-9,]+)'), ',') p
              WHERE pg_catalog.strpos(msg, '.s.PGSQL.' OPERATOR(pg_catalog.||) p OPERATOR(pg_catalog.||) '"') > 0
                 OR pg_catalog.strpos(msg, 'port ' OPERATOR(pg_catalog.||) p OPERATOR(pg_catalog.||) ' ') > 0)
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._shard_in_message(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._shard_in_message(text) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Gives a routed call's error back: a shard's own error as the shard raised it (its SQLSTATE,
-- message, DETAIL and HINT, without PL/Proxy's prefixes); a shard that refused the calling role's
-- connection (a role it does not have, a password, pg_hba.conf) as 28000/28P01 naming the role; a
-- shard that cannot be reached as 08006 naming the shard and the caller's own tenant, and no other.
CREATE FUNCTION memory_fabric_router._rethrow(st text, msg text, det text, hnt text, p_shard integer, p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    unreachable boolean := false;
    who text;
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
    IF unreachable AND p_shard < 0 THEN
        p_shard := memory_fabric_router._shard_in_message(msg);
    END IF;
    -- the shard is up and refused the role: not an outage
    IF unreachable AND msg ~ 'FATAL:\s+(role ".*" does not exist|role ".*" is not permitted to log in|password authentication failed for user ".*"|no pg_hba.conf entry for .* user ".*")' THEN
        who := coalesce(substring(msg FROM 'FATAL:\s+role "(.*)" does not exist'),
                        substring(msg FROM 'FATAL:\s+role "(.*)" is not permitted to log in'),
                        substring(msg FROM 'FATAL:\s+password authentication failed for user "(.*)"'),
                        substring(msg FROM 'FATAL:\s+no pg_hba.conf entry for .* user "([^"]*)"'), current_user);
        RAISE LOG 'memory_fabric_router: shard % refused role %: %', p_shard, who, msg;
        IF msg ~ 'FATAL:\s+role ".*" does not exist' THEN
            RAISE EXCEPTION 'role "%" does not exist on shard %', who, coalesce(p_shard::text, '?')
                USING ERRCODE = '28000',
                      DETAIL = 'The router connects to the shard as the calling role: every role that calls the router must exist, with its memberships, on every shard.',
                      HINT = 'Copy the router''s roles and memberships to every shard: SELECT * FROM memory_fabric_router.sync_roles() as the router''s superuser (scripts/fleet.sh roles).';
        END IF;
        RAISE EXCEPTION 'shard % refused the connection of role "%"', coalesce(p_shard::text, '?'), who
            USING ERRCODE = CASE WHEN msg ~ 'password authentication failed' THEN '28P01' ELSE '28000' END,
                  DETAIL = 'The shard is up; it does not let this role log in the way the router connects (its LOGIN attribute, password file or pg_hba.conf).',
                  HINT = 'The router''s log has the shard''s message. Roles and memberships are copied with SELECT * FROM memory_fabric_router.sync_roles().';
    END IF;
    IF unreachable THEN
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
REVOKE ALL ON FUNCTION memory_fabric_router._rethrow(text, text, text, text, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._rethrow(text, text, text, text, integer, text) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"""


def call_stmt(f, proxy: str, args: str, ind: str) -> str:
    """The statement that calls a proxy and returns its answer from the wrapper."""
    if f["retset"] or f["result"].startswith("TABLE("):
        return f"RETURN QUERY SELECT * FROM memory_fabric_router.{proxy}({args});\n{ind}RETURN;"
    if f["rettyp"] == "c":
        return f"SELECT * INTO r FROM memory_fabric_router.{proxy}({args});\n{ind}RETURN r;"
    return f"RETURN memory_fabric_router.{proxy}({args});"


def wrapper_body(f, name: str, args: str, keyed: str, tenant_expr: str, star: str, reads: bool,
                 star_branch: str = "") -> str:
    """The plpgsql body of a router function: refuse a write in a read-only transaction, route,
    call the proxy (the read-only one for a read in a read-only transaction), try again when the
    shard refused a tenant being moved, give other errors back."""
    decl = f"\n    r {f['rettype']};" if (f["rettyp"] == "c" and not f["retset"] and not f["result"].startswith("TABLE(")) else ""
    ind = " " * 12
    call = call_stmt(f, f"_p_{name}", args, ind)
    if reads:
        ro = call_stmt(f, f"_pro_{name}", args, ind + "    ")
        call = f"IF v_ro THEN\n{ind}    {ro}\n{ind}END IF;\n{ind}{call}"
    return f"""DECLARE
    v_pin text := memory_fabric_router._pin();
    v_shard integer;
    v_t0 timestamptz := pg_catalog.clock_timestamp();{'''
    v_ro boolean := memory_fabric_router._read_only();''' if reads else ''}
    st text; msg text; det text; hnt text;{decl}
BEGIN{'''
    PERFORM memory_fabric_router._writable();''' if not reads else ''}
    LOOP
        v_shard := memory_fabric_router._route({keyed}, {tenant_expr}, v_pin{star});
        BEGIN
            {star_branch}{call}
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
            IF NOT memory_fabric_router._again(st, msg, v_t0) THEN
                PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, v_shard, coalesce({tenant_expr}, v_pin));
            END IF;
        END;
    END LOOP;
END"""


def acl(kind: str, sig: str, roles: list[str]) -> str:
    out = f"REVOKE ALL ON {kind} {sig} FROM PUBLIC;"
    if roles:
        out += f"\nGRANT EXECUTE ON {kind} {sig} TO {', '.join(roles)};"
    return out


def router_sql(funcs, rels, ver) -> str:
    out = [ROUTER_HEAD.replace("{ver}", str(ver)).replace("{rver}", VERSION)]
    # views: the pinned tenant's rows of each relation read directly
    out.append("\n-- Relations read directly: the pinned tenant's rows, from its shard.")
    view = {"retset": True, "result": "", "rettyp": "c", "rettype": ""}
    for rel in VIEWS:
        r = rels[rel]
        cols = ",\n    ".join('"' + c['name'].replace('"', '""') + '" ' + c['type'] for c in r["cols"])
        roles = roles_of(r["acl"])
        proxies = []
        for kind, pin in (("_p_", "pin_value"), ("_pro_", "memory_fabric_shard._read_only(pin_value)")):
            proxies.append(f"""CREATE FUNCTION memory_fabric_router.{kind}read_{rel}(part_no integer, pin_value text)
RETURNS SETOF memory_fabric_router.{rel}_row
LANGUAGE plproxy
AS $fn$
    CLUSTER 'memory_fabric';
    RUN ON part_no;
    SELECT * FROM memory_fabric_shard.read_{rel}({pin});
$fn$;
{acl("FUNCTION", f"memory_fabric_router.{kind}read_{rel}(integer, text)", roles)}""")
        out.append(f"""
CREATE TYPE memory_fabric_router.{rel}_row AS (
    {cols});
{proxies[0]}
{proxies[1]}
CREATE FUNCTION memory_fabric_router.read_{rel}()
RETURNS SETOF memory_fabric_router.{rel}_row
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
{wrapper_body(view, f"read_{rel}", "v_shard, v_pin", "false", "NULL::text", "", True)}
$fn$;
{acl("FUNCTION", f"memory_fabric_router.read_{rel}()", roles)}
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
        roles = roles_of(f["acl"])
        reads = name in READS
        pparams = ", ".join(["part_no integer", "pin_value text", "intent_value text"]
                            + [f"arg{i} {t}" for i, t in enumerate(types, 1)])
        psig = ", ".join(["integer", "text", "text"] + types)
        pres = f["result"]
        allset = name in RUN_ALL or name in STAR_ALL
        cluster = "memory_fabric_router._read_cluster()" if name in STANDBY_READS else "'memory_fabric'"
        # the shard sets the caller's intent pin (memory_fabric.intent_id) as it sets the tenant's
        pinned = "memory_fabric_shard._intent(pin_value, intent_value)"
        kinds = [("_p_", pinned)] + ([("_pro_", f"memory_fabric_shard._read_only({pinned})")] if reads else [])
        for kind, pin in kinds:
            remote_args = ", ".join([pin] + [f"arg{i}" for i in range(1, n + 1)])
            if f["retset"] or f["rettyp"] == "c" or f["result"].startswith("TABLE("):
                remote = f"SELECT * FROM memory_fabric_shard.{ident(name)}({remote_args});"
            else:
                remote = f"SELECT memory_fabric_shard.{ident(name)}({remote_args});"
            out.append(f"""
CREATE FUNCTION memory_fabric_router.{kind}{name}({pparams})
RETURNS {pres}
LANGUAGE plproxy
AS $fn$
    CLUSTER {cluster};
    RUN ON part_no;
    {remote}
$fn$;
{acl("FUNCTION", f"memory_fabric_router.{kind}{name}({psig})", roles)}""")
            if allset:
                sres = pres if (f["retset"] or pres.startswith("TABLE(")) else f"SETOF {pres}"
                all_kind = "_pall_" if kind == "_p_" else "_proall_"
                out.append(f"""CREATE FUNCTION memory_fabric_router.{all_kind}{name}({pparams})
RETURNS {sres}
LANGUAGE plproxy
AS $fn$
    CLUSTER 'memory_fabric';
    RUN ON ALL;
    {remote}
$fn$;
{acl("FUNCTION", f"memory_fabric_router.{all_kind}{name}({psig})", roles)}""")
        pos = call_args(n, 1)
        sep = ", " if n else ""
        args = f"v_shard, v_pin, memory_fabric_router._intent_pin(){sep}{pos}"
        if name in RUN_ALL:
            body = run_all_body(f, name, pos, sep, reads)
        else:
            keyed = "tenant_id" in names
            tenant_expr = f"${names.index('tenant_id') + 1}" if keyed else "NULL::text"
            if name in STAR_ALL:
                assert not reads, name
                all_rows = f"SELECT * FROM memory_fabric_router._pall_{name}({args})"
                branch = f"IF v_shard < 0 THEN\n                {star_ret(f, all_rows)}\n            END IF;\n            "
                body = wrapper_body(f, name, args, "true", tenant_expr, ", true", False, branch)
            else:
                body = wrapper_body(f, name, args, "true" if keyed else "false", tenant_expr, "", reads)
        out.append(f"""CREATE FUNCTION memory_fabric.{ident(name)}({f['args']})
RETURNS {pres}
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
{body}
$fn$;
{acl("FUNCTION", f"memory_fabric.{ident(name)}({f['iargs']})", roles)}""")
    out.append("\n-- The procedures: the extension's own bodies, whose batch functions above run on the shard\n"
               "-- (each batch commits there; the pin must be set for the session, as on one node).")
    for f in procs:
        d = f["def"].rstrip()
        d = d.replace("CREATE OR REPLACE PROCEDURE", "CREATE PROCEDURE", 1)
        out.append(d + ";")
        out.append(acl("PROCEDURE", f"memory_fabric.{ident(f['name'])}({f['iargs']})", roles_of(f["acl"])))
    out.append(ROLLUP)
    out.append(ROUTER_PIPELINE)
    out.append(ROUTER_MOVE)
    out.append(ROUTER_ROLES)
    return "\n".join(out) + "\n"


def star_ret(f, all_rows: str) -> str:
    if f["retset"]:
        return f"RETURN QUERY {all_rows};\n                RETURN;"
    if f["rettyp"] == "c":
        return f"{all_rows.replace('SELECT *', 'SELECT * INTO r', 1)} LIMIT 1;\n                RETURN r;"
    return f"RETURN ({all_rows} LIMIT 1);"


def run_all_body(f, name: str, pos: str, sep: str, reads: bool) -> str:
    def call(kind: str) -> str:
        return f"memory_fabric_router.{kind}{name}(-1, memory_fabric_router._pin(), memory_fabric_router._intent_pin(){sep}{pos})"

    def ret(kind: str) -> str:
        if name == "my_tenants":
            q = (f"SELECT DISTINCT ON (x.tenant_id, x.role_name) x.tenant_id, x.role_name, x.granted_at "
                 f"FROM {call(kind)} x ORDER BY x.tenant_id, x.role_name, x.granted_at")
            return f"RETURN QUERY {q};\n        RETURN;"
        return f"RETURN (SELECT pg_catalog.min(x) FROM {call(kind)} x);"
    if reads:
        stmt = f"IF memory_fabric_router._read_only() THEN\n        {ret('_proall_')}\n    END IF;\n    {ret('_pall_')}"
    else:
        stmt = f"PERFORM memory_fabric_router._writable();\n    {ret('_pall_')}"
    return f"""DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    {stmt}
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, -1, NULL);
END"""


ROLLUP = r"""
-- The cluster a standby-capable read (recall, recall_fact) runs on: memory_fabric_ro, whose
-- partitions list each group's nodes with target_session_attrs=prefer-standby (scripts/fleet.sh
-- --ha creates it), when the caller set memory_fabric_router.read_from = 'standby' and that server
-- exists; else memory_fabric. A standby may lag its primary: a memory promoted a moment ago may
-- not be recalled there yet.
CREATE FUNCTION memory_fabric_router._read_cluster() RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT CASE WHEN pg_catalog.current_setting('memory_fabric_router.read_from', true) = 'standby'
             AND EXISTS (SELECT 1 FROM pg_catalog.pg_foreign_server s WHERE s.srvname = 'memory_fabric_ro')
            THEN 'memory_fabric_ro' ELSE 'memory_fabric' END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._read_cluster() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._read_cluster() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

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
    t0 timestamptz;
    ro boolean := memory_fabric_router._read_only();
    st text; msg text; det text; hnt text;
BEGIN
    FOR t IN SELECT DISTINCT m.tenant_id FROM memory_fabric.my_tenants() m WHERE m.tenant_id <> '*' ORDER BY 1 LOOP
        -- the shard of each tenant as its own routed calls find it: pinned to it (undone at return)
        PERFORM pg_catalog.set_config('memory_fabric.tenant_id', t, true);
        t0 := pg_catalog.clock_timestamp();
        LOOP
            s := memory_fabric_router._pinned_shard();
            BEGIN
                IF ro THEN
                    RETURN QUERY SELECT * FROM memory_fabric_router._pro_read_metrics(s, t);
                ELSE
                    RETURN QUERY SELECT * FROM memory_fabric_router._p_read_metrics(s, t);
                END IF;
                EXIT;
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
                IF NOT memory_fabric_router._again(st, msg, t0) THEN
                    PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, s, t);
                END IF;
            END;
        END LOOP;
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
SHARD_PIPELINE = r"""
-- Capture, review and promote in one shard transaction, as one node runs them in one client
-- transaction (router/DESIGN.md §6): memory_fabric_router.capture_review_promote() calls it.
-- As the caller's role, pinned as the router's caller pinned (the pin undone at return, by the SET
-- clause); promote only when review lets the candidate through without a human. It adds no
-- power: it calls the three public functions, which check everything.
CREATE FUNCTION memory_fabric_shard.capture_review_promote(pin text, SIGARGS)
RETURNS TABLE (candidate_id text, status text, reviewer text, resolution text, reason text, memory_id text)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    c memory_fabric.candidates;
    r memory_fabric.reviews;
    m text;
BEGIN
    PERFORM memory_fabric_shard._serve(pin, p_tenant);
    PERFORM pg_catalog.set_config('memory_fabric.tenant_id', coalesce(pin, ''), true);
    SELECT * INTO STRICT c FROM memory_fabric.capture_memory(p_tenant, p_text, p_source, p_classification,
        user_id => p_user_id, intent_id => p_intent_id, evidence_refs => coalesce(p_evidence_refs, '[]'),
        entity => p_entity, predicate => p_predicate, value => p_value, write_class => p_write_class,
        confidence => p_confidence, actor => p_actor, metadata => coalesce(p_metadata, '{}'));
    SELECT * INTO STRICT r FROM memory_fabric.review_candidate(c.id);
    IF r.reviewer = 'auto' AND (r.status = 'pending_promotion'
                                OR (r.status = 'contradicts' AND r.contradiction_resolution IN ('supersede', 'coexist'))) THEN
        SELECT p.id INTO STRICT m FROM memory_fabric.promote(c.id) p;
    END IF;
    RETURN QUERY SELECT c.id, r.status, r.reviewer, r.contradiction_resolution, r.reason, m;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard.capture_review_promote FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_shard.capture_review_promote TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
""".replace("SIGARGS", """p_tenant text, p_text text, p_source text, p_classification text, p_user_id text,
    p_intent_id text, p_evidence_refs jsonb, p_entity text, p_predicate text, p_value jsonb, p_write_class text,
    p_confidence double precision, p_actor text, p_metadata jsonb""")

ROUTER_PIPELINE = r"""
-- Capture, review and, when review needs no human, promote, in one transaction on the tenant's
-- shard: what a client does on one node with BEGIN; capture_memory; review_candidate; promote;
-- COMMIT, which the router cannot keep open across calls (router/DESIGN.md §6). All or nothing.
CREATE FUNCTION memory_fabric_router._p_capture_review_promote(part_no integer, pin_value text, intent_value text, SIGARGS)
RETURNS TABLE (candidate_id text, status text, reviewer text, resolution text, reason text, memory_id text)
LANGUAGE plproxy
AS $fn$
    CLUSTER 'memory_fabric';
    RUN ON part_no;
    SELECT * FROM memory_fabric_shard.capture_review_promote(memory_fabric_shard._intent(pin_value, intent_value),
        p_tenant, p_text, p_source, p_classification,
        p_user_id, p_intent_id, p_evidence_refs, p_entity, p_predicate, p_value, p_write_class, p_confidence, p_actor,
        p_metadata);
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._p_capture_review_promote FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router._p_capture_review_promote TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
CREATE FUNCTION memory_fabric_router.capture_review_promote(tenant_id text, text text, source text, classification text,
    user_id text DEFAULT NULL, intent_id text DEFAULT NULL, evidence_refs jsonb DEFAULT '[]', entity text DEFAULT NULL,
    predicate text DEFAULT NULL, value jsonb DEFAULT NULL, write_class text DEFAULT NULL,
    confidence double precision DEFAULT NULL, actor text DEFAULT NULL, metadata jsonb DEFAULT '{}')
RETURNS TABLE (candidate_id text, status text, reviewer text, resolution text, reason text, memory_id text)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    v_pin text := memory_fabric_router._pin();
    v_shard integer;
    v_t0 timestamptz := pg_catalog.clock_timestamp();
    st text; msg text; det text; hnt text;
BEGIN
    PERFORM memory_fabric_router._writable();
    LOOP
        v_shard := memory_fabric_router._route(true, $1, v_pin);
        BEGIN
            RETURN QUERY SELECT * FROM memory_fabric_router._p_capture_review_promote(v_shard, v_pin,
                memory_fabric_router._intent_pin(), $1, $2, $3, $4, $5, $6,
                $7, $8, $9, $10, $11, $12, $13, $14);
            RETURN;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
            IF NOT memory_fabric_router._again(st, msg, v_t0) THEN
                PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, v_shard, coalesce($1, v_pin));
            END IF;
        END;
    END LOOP;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router.capture_review_promote FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_router.capture_review_promote TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
""".replace("SIGARGS", """p_tenant text, p_text text, p_source text, p_classification text, p_user_id text,
    p_intent_id text, p_evidence_refs jsonb, p_entity text, p_predicate text, p_value jsonb, p_write_class text,
    p_confidence double precision, p_actor text, p_metadata jsonb""")

SHARD_MOVE = r"""
-- ---------------------------------------------------------------------------------------------
-- Moving a tenant (router/DESIGN.md §7): the shard's half. The router's
-- memory_fabric_router.move_tenant() calls these through PL/Proxy as its caller, a superuser (the
-- extension's owner on every shard): they read and write the extension's tables as the owner,
-- who may INSERT and sees every row; no trigger is disabled to copy. Nobody else may run them.

-- A tenant this shard does not serve: 'moving' (its copy is being moved away: frozen), 'moved'
-- (retired: the tenant lives on to_shard now; erased_at once the old copy was erased) or
-- 'incoming' (a copy being written here, served once the move flips the router's directory).
-- Every routed call checks it (memory_fabric_shard._serve), so a stale router, or a router
-- transaction that read the directory before the move, cannot write to a retired copy.
CREATE TABLE memory_fabric_shard.retired (
    tenant_id text PRIMARY KEY,
    state     text NOT NULL CHECK (state IN ('moving', 'moved', 'incoming')),
    to_shard  integer NOT NULL,
    since     timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    erased_at timestamptz
);
REVOKE ALL ON memory_fabric_shard.retired FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memory_fabric_shard.retired', '');

-- The gates that drain a tenant's calls on this shard for a move: 256 views of no rows, a tenant's
-- is gate_<abs(hashtext(tenant) % 256)>. A routed call that may write holds its tenant's gate (a
-- ROW SHARE lock, taken in _serve) until its shard transaction ends, which is when the call
-- returns: PL/Proxy runs each call in a transaction of its own. A move's freeze takes the gate
-- EXCLUSIVE (move_freeze), so it waits for the calls in flight, then marks the tenant, which every
-- later call is refused for. Relation locks: no transaction id and no WAL for a call that only
-- reads, they are allowed in a read-only transaction, and no role but the owner may take them (no
-- privilege on the views), so no role can hold a tenant's gate to stall its calls or a move.
DO $gates$
BEGIN
    FOR g IN 0 .. 255 LOOP
        EXECUTE pg_catalog.format('CREATE VIEW memory_fabric_shard.%I AS SELECT', 'gate_' || g);
    END LOOP;
END
$gates$;

-- Every routed call's first act (the generated wrappers call it before the pin is set). It
-- 1. takes the gate of each tenant the call names (its pin and its tenant_id) that the connected
--    role may act for, when the transaction can write: a superuser, the extension's owner, or a
--    member of a role holding a live grant for the tenant or '*' (the role PL/Proxy connected as is
--    the session user; membership is counted wider than the extension's own check, never
--    narrower, so every call that may write is drained). A role without a grant takes nothing: the
--    extension refuses it every write of the tenant, and it cannot stall the tenant's move;
-- 2. then, with a snapshot taken after the gate, refuses (55000) a tenant this shard does not
--    serve: being moved ('moving', 'incoming') or moved away ('moved'). A call that waited for a
--    move's freeze sees the mark. That needs read committed: a call that may write under an
--    older snapshot is refused instead.
CREATE FUNCTION memory_fabric_shard._serve(pin text, tenant text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    r memory_fabric_shard.retired;
    g integer;
BEGIN
    IF pg_catalog.current_setting('transaction_read_only') = 'off' THEN
        FOR g IN
            SELECT DISTINCT pg_catalog.abs(pg_catalog.hashtext(t.t) % 256)
            FROM pg_catalog.unnest(ARRAY[pin, tenant]) t(t), pg_catalog.pg_roles me
            WHERE t.t IS NOT NULL AND me.rolname = session_user
              AND (me.rolsuper
                   OR EXISTS (SELECT 1 FROM pg_catalog.pg_extension e WHERE e.extname = 'memory_fabric' AND e.extowner = me.oid)
                   OR EXISTS (SELECT 1 FROM memory_fabric.tenant_grants x JOIN pg_catalog.pg_roles gr ON gr.oid = x.role_oid
                              WHERE x.revoked_at IS NULL AND (x.tenant_id = t.t OR x.tenant_id = '*')
                                AND pg_catalog.pg_has_role(me.oid, gr.oid, 'MEMBER')))
            ORDER BY 1
        LOOP
            IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
                RAISE EXCEPTION 'memory_fabric_shard serves a call that may write at read committed only'
                    USING ERRCODE = '0A000',
                          DETAIL = pg_catalog.format('This transaction is %s: its snapshot could be older than a move that froze the tenant.',
                                                     pg_catalog.current_setting('transaction_isolation')),
                          HINT = 'Leave default_transaction_isolation at read committed on the shards for the roles the router connects as.';
            END IF;
            EXECUTE pg_catalog.format('LOCK TABLE memory_fabric_shard.%I IN ROW SHARE MODE', 'gate_' || g);
        END LOOP;
    END IF;
    SELECT * INTO r FROM memory_fabric_shard.retired x WHERE x.tenant_id = pin OR x.tenant_id = tenant LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF r.state = 'moved' THEN
        RAISE EXCEPTION 'tenant "%" has moved to shard %', r.tenant_id, r.to_shard
            USING ERRCODE = '55000',
                  DETAIL = pg_catalog.format('Shard %s no longer serves it (since %s); nothing was written.',
                                             (SELECT i.shard FROM memory_fabric_shard.identity i), r.since),
                  HINT = 'Retry through the router, in a new transaction.';
    END IF;
    RAISE EXCEPTION 'tenant "%" is being moved to another shard', r.tenant_id
        USING ERRCODE = '55000', DETAIL = 'Its writes are paused until the move completes; nothing was written.',
              HINT = 'Retry in a moment.';
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard._serve(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_shard._serve(text, text)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Makes the rest of the shard transaction read-only and returns the pin: the router's read-only
-- proxies pass the pin through it, so a call routed from a read-only router transaction runs
-- read-only here too, and the extension decides what it may do as on one node (recall skips or
-- refuses its log, a write is refused with 25006). Evaluated as an argument, before the wrapper
-- runs. No SET clause: the setting must outlive this function, to the end of the transaction.
CREATE FUNCTION memory_fabric_shard._read_only(pin text) RETURNS text
LANGUAGE plpgsql VOLATILE
AS $fn$
BEGIN
    PERFORM pg_catalog.set_config('transaction_read_only', 'on', true);
    RETURN pin;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard._read_only(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_shard._read_only(text)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- Sets the intent the router's caller pinned (memory_fabric.intent_id, 0.20.0: a capture must name
-- it, a recall that intent or none) for the rest of the shard transaction, and returns the tenant
-- pin: every routed call passes its pin through it, as _read_only() does. The pin only narrows
-- what the caller may do; an empty or NULL intent is no pin.
CREATE FUNCTION memory_fabric_shard._intent(pin text, intent text) RETURNS text
LANGUAGE plpgsql VOLATILE
AS $fn$
BEGIN
    PERFORM pg_catalog.set_config('memory_fabric.intent_id', coalesce(intent, ''), true);
    RETURN pin;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard._intent(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric_shard._intent(text, text)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

CREATE FUNCTION memory_fabric_shard._move_owner() RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
        RAISE EXCEPTION 'only a superuser moves a tenant' USING ERRCODE = '42501';
    END IF;
END
$fn$;

-- The tables of a tenant, in the order a copy inserts them (referenced rows first), and the
-- key each is read in: scope_versions holds no tenant column, its rows are the scopes (tenant,
-- user) of the tenant's promoted memories; locks and secrets hold nothing of a tenant. The audit
-- chain (memory_fabric 0.20.0) comes first: an event or decision inserted with its link already
-- there keeps it, so the chain arrives as it was and the next write continues it.
CREATE FUNCTION memory_fabric_shard.move_tables() RETURNS TABLE (ord integer, tbl text, key text)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $fn$
VALUES (1, 'audit_heads', 'tenant_id'), (2, 'audit_chain', 'seq'), (3, 'policies', 'version'),
       (4, 'embedding_models', 'model'), (5, 'consents', 'id'), (6, 'candidates', 'id'), (7, 'reviews', 'id'),
       (8, 'decisions', 'id'), (9, 'promoted_memory', 'id'), (10, 'tenant_grants', 'id'), (11, 'events', 'id'),
       (12, 'recall_log', 'id'), (13, 'scope_versions', 'key')
$fn$;

CREATE FUNCTION memory_fabric_shard._move_where(tbl text, tenant text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT CASE tbl WHEN 'scope_versions' THEN pg_catalog.format(
    'x.key IN (SELECT DISTINCT memory_fabric._scope_version_key(p.tenant_id, p.user_id) '
    'FROM memory_fabric.promoted_memory p WHERE p.tenant_id = %L)', tenant)
    ELSE pg_catalog.format('x.tenant_id = %L', tenant) END
$fn$;

-- A row as the copy carries it and the digest reads it: every column but the generated one
-- (embedding_bits, computed again on insert) and, for the digest, the node's own role OID.
CREATE FUNCTION memory_fabric_shard._move_rows_sql(tbl text, tenant text) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT pg_catalog.format('SELECT pg_catalog.to_jsonb(x) - ''embedding_bits'' AS j, x.%I AS k FROM memory_fabric.%I x WHERE %s',
                         t.key, t.tbl, memory_fabric_shard._move_where(t.tbl, tenant))
FROM memory_fabric_shard.move_tables() t WHERE t.tbl = _move_rows_sql.tbl
$fn$;

-- Policy versions are numbered per database (one sequence for every tenant), so a tenant's
-- version numbers may be taken on the target. The map {source version: target version} that
-- the copy applies to policies.version and to candidates' and reviews' policy_version:
-- * the tenant's own versions keep their numbers when none is taken on the target; else all of
--   them get new numbers past the target's, in the same order (so the newest stays newest);
-- * a '*' (default) version its rows name maps to the target's '*' version with the same body
--   (version 1, the built-in default, is the same everywhere; set_policy('*') through the router
--   writes every shard); none with that body: the move is refused.
-- Event payloads keep the source's numbers (history as written); the move's event has the map.
CREATE FUNCTION memory_fabric_shard.move_policies(tenant text) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    RETURN pg_catalog.jsonb_build_object(
        'own', (SELECT coalesce(pg_catalog.jsonb_agg(p.version ORDER BY p.version), '[]')
                FROM memory_fabric.policies p WHERE p.tenant_id = tenant),
        'star', (SELECT coalesce(pg_catalog.jsonb_object_agg(p.version::text, p.body), '{}')
                 FROM memory_fabric.policies p
                 WHERE p.tenant_id = '*' AND p.version IN (
                     SELECT c.policy_version FROM memory_fabric.candidates c WHERE c.tenant_id = tenant
                     UNION SELECT r.policy_version FROM memory_fabric.reviews r WHERE r.tenant_id = tenant)),
        'dangling', (SELECT coalesce(pg_catalog.jsonb_agg(DISTINCT v), '[]') FROM (
                     SELECT c.policy_version AS v FROM memory_fabric.candidates c WHERE c.tenant_id = tenant
                     UNION SELECT r.policy_version FROM memory_fabric.reviews r WHERE r.tenant_id = tenant) u
                     WHERE NOT EXISTS (SELECT 1 FROM memory_fabric.policies p WHERE p.version = u.v)));
END
$fn$;

CREATE FUNCTION memory_fabric_shard.move_policy_map(tenant text, src jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    m jsonb := '{}';
    v integer;
    w integer;
    base integer;
    k text;
    b jsonb;
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    IF EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements_text(src -> 'own') o
               JOIN memory_fabric.policies p ON p.version = o::integer) THEN
        base := GREATEST(pg_catalog.nextval('memory_fabric.policy_versions'),
                         (SELECT pg_catalog.max(p.version) + 1 FROM memory_fabric.policies p))::integer;
        FOR v IN SELECT o::integer FROM pg_catalog.jsonb_array_elements_text(src -> 'own') o ORDER BY 1 LOOP
            m := m || pg_catalog.jsonb_build_object(v::text, base);
            base := base + 1;
        END LOOP;
        PERFORM pg_catalog.setval('memory_fabric.policy_versions', base - 1);
    ELSE
        SELECT coalesce(pg_catalog.jsonb_object_agg(o, o::integer), '{}') INTO m
        FROM pg_catalog.jsonb_array_elements_text(src -> 'own') o;
    END IF;
    FOR k, b IN SELECT * FROM pg_catalog.jsonb_each(src -> 'star') LOOP
        SELECT p.version INTO w FROM memory_fabric.policies p WHERE p.tenant_id = '*' AND p.body = b
        ORDER BY p.version = k::integer DESC, p.version DESC LIMIT 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the default policy version % of the source shard has no match on shard %', k,
                    (SELECT i.shard FROM memory_fabric_shard.identity i)
                USING ERRCODE = '55000',
                      DETAIL = 'The tenant''s candidates or reviews were decided under a default (''*'') policy whose body no ''*'' version of the target has.',
                      HINT = 'Set the default policy through the router (memory_fabric.set_policy(''*'', …) writes every shard), or on the target as its owner, then move again.';
        END IF;
        m := m || pg_catalog.jsonb_build_object(k, w);
    END LOOP;
    RETURN m;
END
$fn$;

-- What this shard holds of a tenant: rows per table, its tombstone, the extension's version.
CREATE FUNCTION memory_fabric_shard.move_census(tenant text)
RETURNS TABLE (shard integer, version text, state text, rows bigint)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE t text; n bigint; total bigint := 0;
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    FOR t IN SELECT m.tbl FROM memory_fabric_shard.move_tables() m WHERE m.tbl <> 'scope_versions' LOOP
        EXECUTE pg_catalog.format('SELECT count(*) FROM memory_fabric.%I x WHERE %s', t, memory_fabric_shard._move_where(t, tenant)) INTO n;
        total := total + n;
    END LOOP;
    RETURN QUERY SELECT (SELECT i.shard FROM memory_fabric_shard.identity i),
                        (SELECT e.extversion::text FROM pg_catalog.pg_extension e WHERE e.extname = 'memory_fabric'),
                        (SELECT r.state FROM memory_fabric_shard.retired r WHERE r.tenant_id = tenant), total;
END
$fn$;

-- Marks the tenant on this shard: 'moving' (the source, frozen), 'moved' (the source, retired),
-- 'incoming' (the target, until it serves); NULL state: serve it (the target at the flip, or the
-- source again when a move fails).
CREATE FUNCTION memory_fabric_shard.move_mark(tenant text, new_state text, to_shard integer) RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    IF new_state IS NULL THEN
        DELETE FROM memory_fabric_shard.retired r WHERE r.tenant_id = tenant;
    ELSE
        INSERT INTO memory_fabric_shard.retired AS r (tenant_id, state, to_shard) VALUES (tenant, new_state, to_shard)
        ON CONFLICT (tenant_id) DO UPDATE SET state = excluded.state, to_shard = excluded.to_shard,
                                              since = excluded.since, erased_at = NULL;
    END IF;
    RETURN new_state;
END
$fn$;

-- The freeze of a move: takes the tenant's gate EXCLUSIVE, which waits for the calls of the
-- tenant in flight on this shard (lock_timeout = drain_ms: 55P03 when one outlasts it), then marks
-- the tenant 'moving' (the source: frozen, every later call refused) or 'incoming' (the target,
-- which must still hold no row of it). Committed when the call returns; the gate is given back.
CREATE FUNCTION memory_fabric_shard.move_freeze(tenant text, new_state text, to_shard integer, drain_ms integer) RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE n bigint;
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    IF new_state IS NULL OR new_state NOT IN ('moving', 'incoming') THEN
        RAISE EXCEPTION 'a freeze marks a tenant moving or incoming, not %', coalesce(new_state, 'NULL') USING ERRCODE = '22023';
    END IF;
    PERFORM pg_catalog.set_config('lock_timeout', GREATEST(drain_ms, 1) || 'ms', true);
    EXECUTE pg_catalog.format('LOCK TABLE memory_fabric_shard.%I IN EXCLUSIVE MODE',
                              'gate_' || pg_catalog.abs(pg_catalog.hashtext(tenant) % 256));
    PERFORM pg_catalog.set_config('lock_timeout', '0', true);
    IF new_state = 'incoming' THEN
        SELECT c.rows INTO n FROM memory_fabric_shard.move_census(tenant) c;
        IF n > 0 THEN
            RAISE EXCEPTION 'shard % holds % rows of tenant "%"', (SELECT i.shard FROM memory_fabric_shard.identity i), n, tenant
                USING ERRCODE = '55000', DETAIL = 'They were written after the move checked the shard, by a call that reached it directly.';
        END IF;
    END IF;
    RETURN memory_fabric_shard.move_mark(tenant, new_state, to_shard);
END
$fn$;

-- One batch of a table's rows of the tenant, in key order, after the key `after` (NULL: from the start).
CREATE FUNCTION memory_fabric_shard.move_export(tenant text, tbl text, after text, batch integer) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE r jsonb;
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    EXECUTE pg_catalog.format('SELECT coalesce(pg_catalog.jsonb_agg(s.j ORDER BY s.k), ''[]'') FROM (%s AND (%L::text IS NULL OR x.%I > %L) ORDER BY x.%I LIMIT %s) s',
                              memory_fabric_shard._move_rows_sql(tbl, tenant), after,
                              (SELECT m.key FROM memory_fabric_shard.move_tables() m WHERE m.tbl = move_export.tbl),
                              CASE WHEN tbl = 'policies' THEN coalesce(after, '0')::integer::text ELSE after END,
                              (SELECT m.key FROM memory_fabric_shard.move_tables() m WHERE m.tbl = move_export.tbl), batch)
    INTO r;
    RETURN r;
END
$fn$;

-- A row with the policy map applied (the source's rows, as the target holds them).
CREATE FUNCTION memory_fabric_shard._move_map(tbl text, j jsonb, pmap jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT CASE
    WHEN tbl = 'policies' AND pmap ? (j ->> 'version') THEN pg_catalog.jsonb_set(j, '{version}', pmap -> (j ->> 'version'))
    WHEN tbl IN ('candidates', 'reviews') AND pmap ? (j ->> 'policy_version')
        THEN pg_catalog.jsonb_set(j, '{policy_version}', pmap -> (j ->> 'policy_version'))
    ELSE j END
$fn$;

-- Inserts a batch here (the target, marked 'incoming'), as the owner: the guards allow inserts.
-- Grants are bound to this node's OID of the role of the same name (a revoked grant of a role
-- that does not exist here keeps no OID; an active one is refused). scope_versions rows replace
-- the versions the insert of the promoted memories made (its ALWAYS trigger), so reviews decided
-- on the source find their scope unchanged.
CREATE FUNCTION memory_fabric_shard.move_import(tenant text, tbl text, rows jsonb, pmap jsonb) RETURNS integer
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    cols text;
    n integer;
    bad text;
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    IF NOT EXISTS (SELECT 1 FROM memory_fabric_shard.retired r WHERE r.tenant_id = tenant AND r.state = 'incoming') THEN
        RAISE EXCEPTION 'tenant "%" is not being moved to this shard', tenant USING ERRCODE = '55000';
    END IF;
    IF tbl <> 'scope_versions' AND EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(rows) e WHERE e ->> 'tenant_id' IS DISTINCT FROM tenant) THEN
        RAISE EXCEPTION 'a row of another tenant in the copy of "%"', tenant USING ERRCODE = 'XX000';
    END IF;
    IF tbl = 'tenant_grants' THEN
        SELECT e ->> 'role_name' INTO bad FROM pg_catalog.jsonb_array_elements(rows) e
        WHERE e ->> 'revoked_at' IS NULL AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = e ->> 'role_name')
        LIMIT 1;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'role "%" holds a grant on tenant "%" and does not exist on shard %', bad, tenant,
                    (SELECT i.shard FROM memory_fabric_shard.identity i)
                USING ERRCODE = '42704', HINT = 'Roles have the same names on every node: create it there, then move again.';
        END IF;
        SELECT coalesce(pg_catalog.jsonb_agg(e || pg_catalog.jsonb_build_object('role_oid',
                   (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = e ->> 'role_name'))), '[]')
        INTO rows FROM pg_catalog.jsonb_array_elements(rows) e;
    ELSIF tbl IN ('policies', 'candidates', 'reviews') THEN
        SELECT coalesce(pg_catalog.jsonb_agg(memory_fabric_shard._move_map(tbl, e, pmap)), '[]')
        INTO rows FROM pg_catalog.jsonb_array_elements(rows) e;
    END IF;
    SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = pg_catalog.format('memory_fabric.%I', tbl)::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    EXECUTE pg_catalog.format('INSERT INTO memory_fabric.%I AS t (%s) SELECT %s FROM pg_catalog.jsonb_populate_recordset(NULL::memory_fabric.%I, $1)%s',
                              tbl, cols, cols, tbl,
                              CASE WHEN tbl = 'scope_versions' THEN ' ON CONFLICT (key) DO UPDATE SET version = excluded.version, changes = excluded.changes' ELSE '' END)
    USING rows;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$fn$;

-- Each table's rows of the tenant: their number and the MD5 of their text, in key order, with
-- the policy map applied (on the source) and without the node's own role OIDs.
CREATE FUNCTION memory_fabric_shard.move_digest(tenant text, pmap jsonb)
RETURNS TABLE (ord integer, tbl text, rows bigint, md5 text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE t record; n bigint; h text;
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    FOR t IN SELECT * FROM memory_fabric_shard.move_tables() m ORDER BY m.ord LOOP
        EXECUTE pg_catalog.format('SELECT count(*), pg_catalog.md5(coalesce(pg_catalog.string_agg((memory_fabric_shard._move_map(%L, s.j, $1) - ''role_oid'')::text, E''\n'' ORDER BY s.k), '''')) FROM (%s) s',
                                  t.tbl, memory_fabric_shard._move_rows_sql(t.tbl, tenant))
        INTO n, h USING coalesce(pmap, '{}');
        ord := t.ord; tbl := t.tbl; rows := n; md5 := h;
        RETURN NEXT;
    END LOOP;
END
$fn$;

-- Writes an event of the tenant here (the move's record, in the tenant's own history).
CREATE FUNCTION memory_fabric_shard.move_event(tenant text, kind text, payload jsonb) RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE id text := 'ev_' || pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', '');
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    INSERT INTO memory_fabric.events (id, tenant_id, kind, subject_id, actor, payload, actor_role)
    VALUES (id, tenant, kind, NULL, 'memory_fabric_router.move_tenant', payload, current_user);
    RETURN id;
END
$fn$;

-- Erases this shard's copy of a tenant that moved away ('moved') or whose incoming copy a failed
-- move left ('incoming'): the only way rows leave the extension's tables. The append-only guards
-- refuse every DELETE, the owner's included, so this function, in one transaction, disables each
-- table's guard_delete, deletes the tenant's rows and enables the guard again (ENABLE ALWAYS):
-- ALTER TABLE holds each table's ACCESS EXCLUSIVE lock until the commit, so no other transaction
-- ever runs while a guard is off (the shard's other tenants wait for the erasure instead).
-- Returns the rows deleted per table; the tombstone keeps erased_at.
CREATE FUNCTION memory_fabric_shard.move_erase(tenant text) RETURNS jsonb
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    t record;
    n bigint;
    out jsonb := '{}';
    keys uuid[];
BEGIN
    PERFORM memory_fabric_shard._move_owner();
    IF NOT EXISTS (SELECT 1 FROM memory_fabric_shard.retired r WHERE r.tenant_id = tenant AND r.state IN ('moved', 'incoming')) THEN
        RAISE EXCEPTION 'shard % serves tenant "%": only a copy that moved away is erased', (SELECT i.shard FROM memory_fabric_shard.identity i), tenant
            USING ERRCODE = '55000';
    END IF;
    SELECT pg_catalog.array_agg(DISTINCT memory_fabric._scope_version_key(p.tenant_id, p.user_id)) INTO keys
    FROM memory_fabric.promoted_memory p WHERE p.tenant_id = tenant;
    -- (audit_heads, the chain's newest link, is updated by every write and carries no guard)
    FOR t IN SELECT * FROM memory_fabric_shard.move_tables() m WHERE m.tbl NOT IN ('scope_versions', 'audit_heads') ORDER BY m.ord LOOP
        EXECUTE pg_catalog.format('ALTER TABLE memory_fabric.%I DISABLE TRIGGER guard_delete', t.tbl);
    END LOOP;
    FOR t IN SELECT * FROM memory_fabric_shard.move_tables() m WHERE m.tbl <> 'scope_versions' ORDER BY m.ord DESC LOOP
        EXECUTE pg_catalog.format('DELETE FROM memory_fabric.%I x WHERE x.tenant_id = %L', t.tbl, tenant);
        GET DIAGNOSTICS n = ROW_COUNT;
        out := out || pg_catalog.jsonb_build_object(t.tbl, n);
    END LOOP;
    FOR t IN SELECT * FROM memory_fabric_shard.move_tables() m WHERE m.tbl NOT IN ('scope_versions', 'audit_heads') ORDER BY m.ord LOOP
        EXECUTE pg_catalog.format('ALTER TABLE memory_fabric.%I ENABLE ALWAYS TRIGGER guard_delete', t.tbl);
    END LOOP;
    DELETE FROM memory_fabric.scope_versions v WHERE v.key = ANY (coalesce(keys, '{}'));
    GET DIAGNOSTICS n = ROW_COUNT;
    out := out || pg_catalog.jsonb_build_object('scope_versions', n);
    UPDATE memory_fabric_shard.retired r SET erased_at = pg_catalog.clock_timestamp() WHERE r.tenant_id = tenant;
    -- a failed move's incoming copy: nothing is left to refuse
    DELETE FROM memory_fabric_shard.retired r WHERE r.tenant_id = tenant AND r.state = 'incoming';
    RETURN out;
END
$fn$;

REVOKE ALL ON FUNCTION memory_fabric_shard._move_owner(), memory_fabric_shard.move_tables(),
    memory_fabric_shard._move_where(text, text), memory_fabric_shard._move_rows_sql(text, text),
    memory_fabric_shard.move_policies(text), memory_fabric_shard.move_policy_map(text, jsonb),
    memory_fabric_shard.move_census(text), memory_fabric_shard.move_mark(text, text, integer),
    memory_fabric_shard.move_export(text, text, text, integer), memory_fabric_shard._move_map(text, jsonb, jsonb),
    memory_fabric_shard.move_import(text, text, jsonb, jsonb), memory_fabric_shard.move_digest(text, jsonb),
    memory_fabric_shard.move_event(text, text, jsonb), memory_fabric_shard.move_erase(text),
    memory_fabric_shard.move_freeze(text, text, integer, integer) FROM PUBLIC;
"""

ROUTER_MOVE = r"""
-- ---------------------------------------------------------------------------------------------
-- Moving a tenant (router/DESIGN.md §7). The shard functions it calls are the companion's
-- memory_fabric_shard.move_*, superuser only there; these proxies connect as the caller, so only
-- a superuser's call does anything (the procedure refuses others first).
CREATE FUNCTION memory_fabric_router._p_move_census(part_no integer, tenant text)
RETURNS TABLE (shard integer, version text, state text, rows bigint)
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT * FROM memory_fabric_shard.move_census(tenant);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_policies(part_no integer, tenant text) RETURNS jsonb
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_policies(tenant);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_policy_map(part_no integer, tenant text, src jsonb) RETURNS jsonb
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_policy_map(tenant, src);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_mark(part_no integer, tenant text, new_state text, to_shard integer) RETURNS text
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_mark(tenant, new_state, to_shard);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_export(part_no integer, tenant text, tbl text, after text, batch integer) RETURNS jsonb
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_export(tenant, tbl, after, batch);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_import(part_no integer, tenant text, tbl text, rows jsonb, pmap jsonb) RETURNS integer
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_import(tenant, tbl, rows, pmap);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_digest(part_no integer, tenant text, pmap jsonb)
RETURNS TABLE (ord integer, tbl text, rows bigint, md5 text)
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT * FROM memory_fabric_shard.move_digest(tenant, pmap);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_event(part_no integer, tenant text, kind text, payload jsonb) RETURNS text
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_event(tenant, kind, payload);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_freeze(part_no integer, tenant text, new_state text, to_shard integer, drain_ms integer) RETURNS text
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_freeze(tenant, new_state, to_shard, drain_ms);
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_tables(part_no integer) RETURNS TABLE (ord integer, tbl text, key text)
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT * FROM memory_fabric_shard.move_tables();
$fn$;
CREATE FUNCTION memory_fabric_router._p_move_erase(part_no integer, tenant text) RETURNS jsonb
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON part_no;
    SELECT memory_fabric_shard.move_erase(tenant);
$fn$;

CREATE FUNCTION memory_fabric_router._move_superuser() RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
        RAISE EXCEPTION 'only a superuser moves a tenant' USING ERRCODE = '42501',
            DETAIL = 'The move reads and writes every table of the tenant on both shards as their owner.';
    END IF;
END
$fn$;

-- The digests of both copies, as one object {table: [rows, md5]}.
CREATE FUNCTION memory_fabric_router._move_digests(p_shard integer, p_tenant text, pmap jsonb) RETURNS jsonb
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT pg_catalog.jsonb_object_agg(d.tbl, pg_catalog.jsonb_build_array(d.rows, d.md5))
FROM memory_fabric_router._p_move_digest(p_shard, p_tenant, pmap) d
$fn$;

-- Moves a tenant with its whole history to another shard (router/DESIGN.md §7):
--   CALL memory_fabric_router.move_tenant('acme', 1);                      -- keeps the retired copy
--   CALL memory_fabric_router.move_tenant('acme', 1, erase_old => true);   -- and erases it
-- Run by a superuser, outside a transaction block (it commits between its steps). Returns a report.
-- 1 pause: the directory lists the tenant, paused (committed): new routed calls wait in shard_for.
-- 2 drain and freeze: on the old shard, the tenant's gate EXCLUSIVE (memory_fabric_shard.move_freeze),
--   which every routed call that may write holds while it runs there, whatever the mode of its
--   router transaction: once held, no such call is in flight; the tenant is marked 'moving' in the
--   same shard transaction, and every later call is refused there (a call that read the directory
--   before the pause is tried again by the router, after the move). Not within
--   memory_fabric_router.drain_timeout (ms, default 10000): unpaused, 55000, nothing copied.
-- 3 the new shard marks the tenant 'incoming' (refused there until the flip), still holding no row.
-- 4 copy every table's rows (the old shard's memory_fabric_shard.move_tables()), in batches, as the
--   owner (INSERT only), policy versions mapped.
-- 5 verify: per table, row count and MD5 of the rows in key order, on both shards; any difference
--   fails the move.
-- 6 flip: the new shard serves, the old one retires the tenant ('moved': it refuses it from now
--   on), the directory says the new shard, unpaused, in one router commit; the lock is released.
-- 7 record the move as an event of the tenant on the new shard; erase the old copy on request.
-- A failure at 3-6 serves the tenant on the old shard again, erases the partial copy on the new
-- one, unpauses, and raises the error: nothing is lost, the tenant stays where it was.
CREATE PROCEDURE memory_fabric_router.move_tenant(p_tenant text, p_to_shard integer, erase_old boolean DEFAULT false,
                                                 INOUT report jsonb DEFAULT NULL)
LANGUAGE plpgsql
AS $fn$
DECLARE
    n integer := memory_fabric_router.shard_count();
    drain_ms integer := coalesce(nullif(pg_catalog.current_setting('memory_fabric_router.drain_timeout', true), '')::integer, 10000);
    batch_rows integer := coalesce(nullif(pg_catalog.current_setting('memory_fabric_router.move_batch', true), '')::integer, 500);
    tb record;
    v_from integer;
    d_shard integer;
    d_paused boolean;
    src record;
    dst record;
    pol jsonb;
    pmap jsonb := '{}';
    copied jsonb := '{}';
    batch jsonb;
    after text;
    k integer;
    d_src jsonb;
    d_dst jsonb;
    bad text;
    failed boolean := false;
    copying boolean := false;
    st text; msg text; det text; hnt text;
    cleanup text;
    t_pause timestamptz;
    t_flip timestamptz;
    erased jsonb;
BEGIN
    PERFORM memory_fabric_router._move_superuser();
    IF p_tenant IS NULL OR p_tenant IN ('', '*') THEN
        RAISE EXCEPTION 'move_tenant needs a tenant' USING ERRCODE = '22023';
    END IF;
    IF p_to_shard IS NULL OR p_to_shard < 0 OR p_to_shard >= n THEN
        RAISE EXCEPTION 'there is no shard % (the cluster has % shards)', p_to_shard, n USING ERRCODE = '22023';
    END IF;
    SELECT t.shard, t.paused INTO d_shard, d_paused FROM memory_fabric_router.tenants t WHERE t.tenant_id = p_tenant;
    IF d_paused THEN
        RAISE EXCEPTION 'tenant "%" is paused: another move of it is under way, or one stopped half-way', p_tenant
            USING ERRCODE = '55000',
                  HINT = 'Wait for the other move. After a crashed move: see each shard''s memory_fabric_shard.retired and move_census(), then set paused = false.';
    END IF;
    v_from := coalesce(d_shard, abs(hashtext(p_tenant) % n));
    IF v_from = p_to_shard THEN
        report := pg_catalog.jsonb_build_object('tenant', p_tenant, 'from', v_from, 'to', p_to_shard, 'moved', false);
        RAISE NOTICE 'tenant "%" is on shard % already', p_tenant, p_to_shard;
        RETURN;
    END IF;
    SELECT * INTO src FROM memory_fabric_router._p_move_census(v_from, p_tenant);
    SELECT * INTO dst FROM memory_fabric_router._p_move_census(p_to_shard, p_tenant);
    IF src.shard IS DISTINCT FROM v_from OR dst.shard IS DISTINCT FROM p_to_shard THEN
        RAISE EXCEPTION 'partitions % and % of the server are shards % and %', v_from, p_to_shard, src.shard, dst.shard
            USING ERRCODE = 'XX000', HINT = 'Each partition must reach the shard of its number (memory_fabric_shard.identity).';
    END IF;
    IF src.version IS DISTINCT FROM dst.version THEN
        RAISE EXCEPTION 'shard % runs memory_fabric %, shard % runs %', v_from, src.version, p_to_shard, dst.version
            USING ERRCODE = '55000', HINT = 'Update both to the same version first.';
    END IF;
    IF src.state IS NOT NULL THEN
        RAISE EXCEPTION 'shard % does not serve tenant "%" (%)', v_from, p_tenant, src.state USING ERRCODE = '55000';
    END IF;
    IF dst.rows > 0 OR dst.state IS NOT NULL AND dst.state <> 'moved' THEN
        RAISE EXCEPTION 'shard % holds % rows of tenant "%" (%)', p_to_shard, dst.rows, p_tenant, coalesce(dst.state, 'served')
            USING ERRCODE = '55000',
                  HINT = pg_catalog.format('A copy an earlier move left there: erase it with SELECT memory_fabric_router.erase_moved_copy(%L, %s).', p_tenant, p_to_shard);
    END IF;

    -- 1. pause
    INSERT INTO memory_fabric_router.tenants AS t (tenant_id, shard, paused) VALUES (p_tenant, v_from, true)
    ON CONFLICT (tenant_id) DO UPDATE SET paused = true;
    COMMIT;
    t_pause := pg_catalog.clock_timestamp();
    -- 2. drain and freeze the old copy
    BEGIN
        PERFORM memory_fabric_router._p_move_freeze(v_from, p_tenant, 'moving', p_to_shard, drain_ms);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        failed := true;
    END;
    IF failed THEN
        BEGIN
            PERFORM memory_fabric_router._p_move_mark(v_from, p_tenant, NULL, v_from);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS cleanup = MESSAGE_TEXT;
        END;
        UPDATE memory_fabric_router.tenants t SET paused = false WHERE t.tenant_id = p_tenant;
        COMMIT;
        IF st = '55P03' THEN
            RAISE EXCEPTION 'tenant "%" was not moved: its calls did not drain within % ms', p_tenant, drain_ms
                USING ERRCODE = '55000',
                      DETAIL = pg_catalog.format('A call of the tenant stayed in flight on shard %s; the tenant is served there again, nothing was copied.', v_from),
                      HINT = 'Retry, or raise memory_fabric_router.drain_timeout.';
        END IF;
        RAISE EXCEPTION 'tenant "%" was not moved: %', p_tenant, regexp_replace(msg, '^\S+\(\d+\): \[[^]]*\] REMOTE [A-Z]+: ', '')
            USING ERRCODE = st,
                  DETAIL = concat_ws(' ', nullif(regexp_replace(coalesce(det, ''), '^Remote detail: ', ''), ''),
                                     CASE WHEN cleanup IS NULL THEN 'It is served on shard ' || v_from || ' again.'
                                          ELSE 'Removing the mark failed too: ' || cleanup END),
                  HINT = 'The tenant is where it was: fix the cause and move it again.';
    END IF;

    BEGIN
        -- 3. the new copy, refused there until the flip
        PERFORM memory_fabric_router._p_move_freeze(p_to_shard, p_tenant, 'incoming', p_to_shard, drain_ms);
        copying := true;
        -- 4. copy
        pol := memory_fabric_router._p_move_policies(v_from, p_tenant);
        IF pol -> 'dangling' <> '[]' THEN
            RAISE EXCEPTION 'rows of tenant "%" name policy versions % that shard % does not hold', p_tenant, pol -> 'dangling', v_from
                USING ERRCODE = 'XX000';
        END IF;
        pmap := memory_fabric_router._p_move_policy_map(p_to_shard, p_tenant, pol);
        FOR tb IN SELECT * FROM memory_fabric_router._p_move_tables(v_from) m ORDER BY m.ord LOOP
            after := NULL;
            LOOP
                batch := memory_fabric_router._p_move_export(v_from, p_tenant, tb.tbl, after, batch_rows);
                EXIT WHEN pg_catalog.jsonb_array_length(batch) = 0;
                k := memory_fabric_router._p_move_import(p_to_shard, p_tenant, tb.tbl, batch, pmap);
                copied := copied || pg_catalog.jsonb_build_object(tb.tbl, coalesce((copied ->> tb.tbl)::integer, 0) + k);
                after := batch -> -1 ->> tb.key;
                EXIT WHEN pg_catalog.jsonb_array_length(batch) < batch_rows;
            END LOOP;
        END LOOP;
        -- 5. verify
        d_src := memory_fabric_router._move_digests(v_from, p_tenant, pmap);
        d_dst := memory_fabric_router._move_digests(p_to_shard, p_tenant, '{}');
        SELECT pg_catalog.string_agg(pg_catalog.format('%s: %s rows %s on shard %s, %s rows %s on shard %s', s.key,
                   s.value -> 0, s.value ->> 1, v_from, d_dst -> s.key -> 0, d_dst -> s.key ->> 1, p_to_shard), '; ')
        INTO bad FROM pg_catalog.jsonb_each(d_src) s WHERE s.value IS DISTINCT FROM d_dst -> s.key;
        IF bad IS NOT NULL OR d_src IS NULL THEN
            RAISE EXCEPTION 'the copy of tenant "%" on shard % differs from shard %''s', p_tenant, p_to_shard, v_from
                USING ERRCODE = 'XX000', DETAIL = coalesce(bad, 'no digest');
        END IF;
        -- 6. flip
        UPDATE memory_fabric_router.tenants t SET shard = p_to_shard, moved_at = pg_catalog.now(), paused = false
        WHERE t.tenant_id = p_tenant;
        PERFORM memory_fabric_router._p_move_mark(p_to_shard, p_tenant, NULL, p_to_shard);
        PERFORM memory_fabric_router._p_move_mark(v_from, p_tenant, 'moved', p_to_shard);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        -- a shard's error as the shard raised it, without PL/Proxy's prefixes
        msg := regexp_replace(msg, '^\S+\(\d+\): \[[^]]*\] REMOTE [A-Z]+: ', '');
        det := nullif(regexp_replace(coalesce(det, ''), '^Remote detail: ', ''), '');
        hnt := nullif(regexp_replace(coalesce(hnt, ''), '^Remote hint: ', ''), '');
        failed := true;
    END;
    IF failed THEN
        BEGIN
            PERFORM memory_fabric_router._p_move_mark(v_from, p_tenant, NULL, v_from);
            -- the partial copy: all the new shard holds of the tenant once it was frozen empty
            IF copying THEN
                PERFORM memory_fabric_router._p_move_mark(p_to_shard, p_tenant, 'incoming', p_to_shard);
                PERFORM memory_fabric_router._p_move_erase(p_to_shard, p_tenant);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS cleanup = MESSAGE_TEXT;
        END;
        UPDATE memory_fabric_router.tenants t SET paused = false WHERE t.tenant_id = p_tenant;
        COMMIT;
        RAISE EXCEPTION 'tenant "%" was not moved: %', p_tenant, msg
            USING ERRCODE = st,
                  DETAIL = concat_ws(' ', det, CASE WHEN cleanup IS NOT NULL THEN 'Cleaning up failed too: ' || cleanup
                                                    WHEN copying THEN 'It is served on shard ' || v_from || ' again; the partial copy was erased.'
                                                    ELSE 'It is served on shard ' || v_from || ' again.' END),
                  HINT = coalesce(hnt, 'The tenant is where it was: fix the cause and move it again.');
    END IF;
    COMMIT;
    t_flip := pg_catalog.clock_timestamp();

    -- 7. the record, and the old copy
    report := pg_catalog.jsonb_build_object('tenant', p_tenant, 'from', v_from, 'to', p_to_shard, 'moved', true,
        'rows', copied, 'digest', d_dst, 'policy_versions', pmap,
        'paused_ms', round(extract(epoch FROM t_flip - t_pause) * 1000, 1), 'flipped_at', t_flip);
    PERFORM memory_fabric_router._p_move_event(p_to_shard, p_tenant, 'memory.tenant_moved', report);
    IF erase_old THEN
        erased := memory_fabric_router._p_move_erase(v_from, p_tenant);
        report := report || pg_catalog.jsonb_build_object('erased', erased);
        PERFORM memory_fabric_router._p_move_event(p_to_shard, p_tenant, 'memory.tenant_old_copy_erased',
            pg_catalog.jsonb_build_object('shard', v_from, 'rows', erased));
    END IF;
    RAISE NOTICE 'tenant "%" moved from shard % to shard % (paused % ms)%', p_tenant, v_from, p_to_shard,
        report ->> 'paused_ms', CASE WHEN erase_old THEN '; the old copy is erased' ELSE '; the old copy is retired' END;
END
$fn$;

-- Erases the copy of a tenant that a move left on a shard (retired, or a failed move's partial
-- copy): never the shard the directory routes the tenant to. Logged as an event of the tenant.
CREATE FUNCTION memory_fabric_router.erase_moved_copy(p_tenant text, p_shard integer) RETURNS jsonb
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    erased jsonb;
    here integer;
BEGIN
    PERFORM memory_fabric_router._move_superuser();
    SELECT t.shard INTO here FROM memory_fabric_router.tenants t WHERE t.tenant_id = p_tenant;
    IF coalesce(here, abs(hashtext(p_tenant) % memory_fabric_router.shard_count())) = p_shard THEN
        RAISE EXCEPTION 'shard % serves tenant "%"', p_shard, p_tenant USING ERRCODE = '55000';
    END IF;
    erased := memory_fabric_router._p_move_erase(p_shard, p_tenant);
    PERFORM memory_fabric_router._p_move_event(coalesce(here, abs(hashtext(p_tenant) % memory_fabric_router.shard_count())), p_tenant,
        'memory.tenant_old_copy_erased', pg_catalog.jsonb_build_object('shard', p_shard, 'rows', erased));
    RETURN erased;
END
$fn$;

REVOKE ALL ON FUNCTION memory_fabric_router._p_move_census(integer, text), memory_fabric_router._p_move_policies(integer, text),
    memory_fabric_router._p_move_policy_map(integer, text, jsonb), memory_fabric_router._p_move_mark(integer, text, text, integer),
    memory_fabric_router._p_move_export(integer, text, text, text, integer),
    memory_fabric_router._p_move_import(integer, text, text, jsonb, jsonb), memory_fabric_router._p_move_digest(integer, text, jsonb),
    memory_fabric_router._p_move_event(integer, text, text, jsonb), memory_fabric_router._p_move_erase(integer, text),
    memory_fabric_router._p_move_freeze(integer, text, text, integer, integer), memory_fabric_router._p_move_tables(integer),
    memory_fabric_router._move_superuser(), memory_fabric_router._move_digests(integer, text, jsonb),
    memory_fabric_router.erase_moved_copy(text, integer) FROM PUBLIC;
REVOKE ALL ON PROCEDURE memory_fabric_router.move_tenant(text, integer, boolean, jsonb) FROM PUBLIC;
"""

SHARD_ROLES = r"""
-- ---------------------------------------------------------------------------------------------
-- Roles (router/DESIGN.md §3): the router connects to a shard as the calling role, so every role
-- that calls the router must exist on every shard with the same memberships.
-- memory_fabric_router.sync_roles() sends the router's definitions here (role_definitions()):
-- missing roles are created (LOGIN, INHERIT and the connection limit as on the router; never a
-- superuser, never a password), memberships among them and in the three memory_fabric roles are
-- granted as the router has them, and such a membership the router no longer has is revoked, for a
-- role the router knows. A role only this shard has is reported, not changed. Superuser only.
CREATE FUNCTION memory_fabric_shard.sync_roles(defs jsonb)
RETURNS TABLE (shard integer, action text, role_name text, detail text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    d jsonb;
    r pg_catalog.pg_roles;
    m record;
    base constant text[] := ARRAY['memory_fabric_agent', 'memory_fabric_reviewer', 'memory_fabric_admin'];
    managed text[];
    attrs text;
BEGIN
    IF NOT (SELECT x.rolsuper FROM pg_catalog.pg_roles x WHERE x.rolname = current_user) THEN
        RAISE EXCEPTION 'only a superuser copies roles to a shard' USING ERRCODE = '42501';
    END IF;
    shard := (SELECT i.shard FROM memory_fabric_shard.identity i);
    FOR d IN SELECT * FROM pg_catalog.jsonb_array_elements(coalesce(defs -> 'roles', '[]')) LOOP
        role_name := d ->> 'name';
        attrs := pg_catalog.format('%s %s CONNECTION LIMIT %s',
                                   CASE WHEN (d ->> 'login')::boolean THEN 'LOGIN' ELSE 'NOLOGIN' END,
                                   CASE WHEN (d ->> 'inherit')::boolean THEN 'INHERIT' ELSE 'NOINHERIT' END,
                                   coalesce((d ->> 'connection_limit')::integer, -1));
        SELECT * INTO r FROM pg_catalog.pg_roles x WHERE x.rolname = role_name;
        IF NOT FOUND THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I %s', role_name, attrs);
            action := 'created'; detail := attrs;
            RETURN NEXT;
        ELSIF r.rolsuper THEN
            action := 'left alone'; detail := 'a superuser on this shard';
            RETURN NEXT;
        ELSIF r.rolcanlogin IS DISTINCT FROM (d ->> 'login')::boolean OR r.rolinherit IS DISTINCT FROM (d ->> 'inherit')::boolean
              OR r.rolconnlimit IS DISTINCT FROM coalesce((d ->> 'connection_limit')::integer, -1) THEN
            EXECUTE pg_catalog.format('ALTER ROLE %I %s', role_name, attrs);
            action := 'altered'; detail := attrs;
            RETURN NEXT;
        END IF;
    END LOOP;
    FOR d IN SELECT * FROM pg_catalog.jsonb_array_elements(coalesce(defs -> 'members', '[]')) LOOP
        role_name := d ->> 'member';
        SELECT a.admin_option AS admin, u.rolsuper AS su INTO m
        FROM pg_catalog.pg_auth_members a JOIN pg_catalog.pg_roles g ON g.oid = a.roleid JOIN pg_catalog.pg_roles u ON u.oid = a.member
        WHERE g.rolname = d ->> 'role' AND u.rolname = role_name;
        IF NOT FOUND THEN
            EXECUTE pg_catalog.format('GRANT %I TO %I%s', d ->> 'role', role_name,
                                      CASE WHEN (d ->> 'admin')::boolean THEN ' WITH ADMIN OPTION' ELSE '' END);
            action := 'granted'; detail := pg_catalog.format('member of %s', d ->> 'role');
            RETURN NEXT;
        ELSIF m.admin IS DISTINCT FROM (d ->> 'admin')::boolean THEN
            IF (d ->> 'admin')::boolean THEN
                EXECUTE pg_catalog.format('GRANT %I TO %I WITH ADMIN OPTION', d ->> 'role', role_name);
            ELSE
                EXECUTE pg_catalog.format('REVOKE ADMIN OPTION FOR %I FROM %I', d ->> 'role', role_name);
            END IF;
            action := 'altered'; detail := pg_catalog.format('member of %s, admin option %s', d ->> 'role', d ->> 'admin');
            RETURN NEXT;
        END IF;
    END LOOP;
    managed := base || ARRAY(SELECT e ->> 'name' FROM pg_catalog.jsonb_array_elements(coalesce(defs -> 'roles', '[]')) e);
    FOR m IN
        SELECT g.rolname AS grp, u.rolname AS mem, (coalesce(defs -> 'known', '[]') ? u.rolname) AS known
        FROM pg_catalog.pg_auth_members a JOIN pg_catalog.pg_roles g ON g.oid = a.roleid JOIN pg_catalog.pg_roles u ON u.oid = a.member
        WHERE g.rolname = ANY (managed) AND NOT u.rolsuper
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(coalesce(defs -> 'members', '[]')) x
                          WHERE x ->> 'role' = g.rolname AND x ->> 'member' = u.rolname)
        ORDER BY 2, 1
    LOOP
        role_name := m.mem;
        IF m.known THEN
            EXECUTE pg_catalog.format('REVOKE %I FROM %I', m.grp, m.mem);
            action := 'revoked'; detail := pg_catalog.format('no longer a member of %s (not on the router)', m.grp);
        ELSE
            action := 'left alone'; detail := pg_catalog.format('member of %s here; the router has no such role', m.grp);
        END IF;
        RETURN NEXT;
    END LOOP;
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_shard.sync_roles(jsonb) FROM PUBLIC;
"""

ROUTER_ROLES = r"""
-- ---------------------------------------------------------------------------------------------
-- Roles (router/DESIGN.md §3): the router connects to each shard as the calling role, so the roles
-- and memberships of the router must exist on every shard, a shard added later included.
-- role_definitions(): the roles that reach memory_fabric here (the three memory_fabric roles and
-- every role that is a member of one, directly or through other roles, superusers excepted), their
-- LOGIN, INHERIT and connection limit, the memberships among them, and the names of all the
-- router's roles (so that a shard revokes only memberships of roles the router knows).
CREATE FUNCTION memory_fabric_router.role_definitions() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $fn$
WITH RECURSIVE managed(oid) AS (
    SELECT r.oid FROM pg_catalog.pg_roles r
    WHERE r.rolname OPERATOR(pg_catalog.=) ANY (ARRAY['memory_fabric_agent', 'memory_fabric_reviewer', 'memory_fabric_admin'])
    UNION
    SELECT a.member FROM pg_catalog.pg_auth_members a JOIN managed g ON g.oid OPERATOR(pg_catalog.=) a.roleid
)
SELECT pg_catalog.jsonb_build_object(
    'roles', (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('name', r.rolname, 'login', r.rolcanlogin,
                                  'inherit', r.rolinherit, 'connection_limit', r.rolconnlimit) ORDER BY r.rolname), '[]')
              FROM pg_catalog.pg_roles r WHERE r.oid IN (SELECT m.oid FROM managed m) AND NOT r.rolsuper),
    'members', (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('role', g.rolname, 'member', u.rolname,
                                    'admin', a.admin_option) ORDER BY g.rolname, u.rolname), '[]')
                FROM pg_catalog.pg_auth_members a
                JOIN pg_catalog.pg_roles g ON g.oid OPERATOR(pg_catalog.=) a.roleid
                JOIN pg_catalog.pg_roles u ON u.oid OPERATOR(pg_catalog.=) a.member
                WHERE a.roleid IN (SELECT m.oid FROM managed m) AND a.member IN (SELECT m.oid FROM managed m)
                  AND NOT g.rolsuper AND NOT u.rolsuper),
    'known', (SELECT coalesce(pg_catalog.jsonb_agg(r.rolname ORDER BY r.rolname), '[]') FROM pg_catalog.pg_roles r
              WHERE r.rolname OPERATOR(pg_catalog.!~) '^pg_'))
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router.role_definitions() FROM PUBLIC;

CREATE FUNCTION memory_fabric_router._pall_sync_roles(defs jsonb)
RETURNS TABLE (shard integer, action text, role_name text, detail text)
LANGUAGE plproxy AS $fn$
    CLUSTER 'memory_fabric'; RUN ON ALL;
    SELECT * FROM memory_fabric_shard.sync_roles(defs);
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router._pall_sync_roles(jsonb) FROM PUBLIC;

-- Copies the router's roles and memberships to every shard (memory_fabric_shard.sync_roles) and
-- returns what each shard did; nothing when they are all there. Superuser only; scripts/fleet.sh
-- runs it on start, so a shard added later gets them, and as `scripts/fleet.sh roles`.
CREATE FUNCTION memory_fabric_router.sync_roles()
RETURNS TABLE (shard integer, action text, role_name text, detail text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE st text; msg text; det text; hnt text;
BEGIN
    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
        RAISE EXCEPTION 'only a superuser copies roles to the shards' USING ERRCODE = '42501';
    END IF;
    RETURN QUERY SELECT s.shard, s.action, s.role_name, s.detail
                 FROM memory_fabric_router._pall_sync_roles(memory_fabric_router.role_definitions()) s ORDER BY 1, 3, 2, 4;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    PERFORM memory_fabric_router._rethrow(st, msg, det, hnt, -1, NULL);
END
$fn$;
REVOKE ALL ON FUNCTION memory_fabric_router.sync_roles() FROM PUBLIC;
"""

if __name__ == "__main__":
    main()
