"""The router's extensions: 0.1.0 updated to 0.2.0 is 0.2.0 installed fresh (router/DESIGN.md §1).

On the nodes of the fleet tests/fleet/run.sh started (the router's has PL/Proxy, a shard's has
memory_fabric), in scratch databases: each extension installed at 0.2.0, and installed at 0.1.0 then
ALTER EXTENSION ... UPDATE, described object by object (tests/fleet/describe_extension.sql: every
function's definition and privileges, relations, types, schemas, the dumped tables) and compared;
the router's directory keeps its rows through the update. And the install scripts' function bodies
compile (CREATE EXTENSION does not check them: check_function_bodies is off in extension scripts).
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess

from fleetlib import BASE, SOCK, SUPER, check, done

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PSQL = os.path.join(os.environ.get("MF_PG_BINDIR", "/usr/lib/postgresql/15/bin"), "psql")
PORTS = {"router": BASE, "shard0": BASE + 1}


def psql(node: str, db: str, *args: str, stdin: str | None = None) -> str:
    r = subprocess.run([PSQL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", SOCK, "-p", str(PORTS[node]), "-U", SUPER,
                        "-d", db, *args], input=stdin, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"psql {node}/{db} {args}: {r.stderr[-2000:]}")
    return r.stdout


def scratch(node: str, db: str, *sql: str) -> None:
    psql(node, "postgres", "-c", f"DROP DATABASE IF EXISTS {db}", "-c", f"CREATE DATABASE {db}")
    for s in sql:
        psql(node, db, "-c", "SET client_min_messages = warning", "-c", s)


def describe(node: str, db: str, ext: str) -> list[str]:
    return psql(node, db, "-v", f"ext={ext}", "-f", os.path.join(HERE, "describe_extension.sql")).splitlines()


def compare(what: str, fresh: list[str], updated: list[str]) -> None:
    diff = list(difflib.unified_diff(fresh, updated, "fresh", "updated", lineterm="", n=0))
    check(not diff and len(fresh) > 100, f"{what}: 0.1.0 updated to 0.2.0 describes as 0.2.0 installed fresh "
          f"({len(fresh)} lines{'; ' + ' '.join(diff[2:8]) if diff else ''})")


def main() -> None:
    # the router
    scratch("router", "mf_up_fresh", "CREATE EXTENSION memory_fabric_router CASCADE")
    scratch("router", "mf_up_updated", "CREATE EXTENSION memory_fabric_router VERSION '0.1.0' CASCADE",
            "INSERT INTO memory_fabric_router.tenants (tenant_id, shard, moved_at) VALUES ('up_t', 1, now())",
            "ALTER EXTENSION memory_fabric_router UPDATE TO '0.2.0'")
    compare("memory_fabric_router", describe("router", "mf_up_fresh", "memory_fabric_router"),
            describe("router", "mf_up_updated", "memory_fabric_router"))
    kept = psql("router", "mf_up_updated", "-c", "SELECT tenant_id, shard FROM memory_fabric_router.tenants").strip()
    check(kept == "up_t|1", f"the directory keeps its rows through the update ({kept!r})")
    # the shard companion
    scratch("shard0", "mf_up_fresh", "CREATE EXTENSION memory_fabric CASCADE", "CREATE EXTENSION memory_fabric_shard")
    scratch("shard0", "mf_up_updated", "CREATE EXTENSION memory_fabric CASCADE", "CREATE EXTENSION memory_fabric_shard VERSION '0.1.0'",
            "INSERT INTO memory_fabric_shard.retired (tenant_id, state, to_shard) VALUES ('up_t', 'moved', 1)",
            "ALTER EXTENSION memory_fabric_shard UPDATE TO '0.2.0'")
    compare("memory_fabric_shard", describe("shard0", "mf_up_fresh", "memory_fabric_shard"),
            describe("shard0", "mf_up_updated", "memory_fabric_shard"))
    # every function body of the install scripts compiles
    for node, path, prep in (("router", "router/memory_fabric_router--0.2.0.sql", "CREATE EXTENSION plproxy; CREATE EXTENSION vector"),
                             ("shard0", "router/shard/memory_fabric_shard--0.2.0.sql", "CREATE EXTENSION memory_fabric CASCADE")):
        text = open(os.path.join(ROOT, path)).read()
        body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("\\echo") and "pg_extension_config_dump" not in ln)
        scratch(node, "mf_up_compile", prep)
        try:
            psql(node, "mf_up_compile", "-c", "SET check_function_bodies = on", "-f", "-", stdin=body)
            err = None
        except RuntimeError as e:
            err = re.sub(r"\s+", " ", str(e))[-300:]
        n = len(re.findall(r"^CREATE (FUNCTION|PROCEDURE) ", text, re.M))
        check(err is None, f"{path}: its {n} functions and procedures compile with check_function_bodies on{': ' + err if err else ''}")
    for node in ("router", "shard0"):
        for db in ("mf_up_fresh", "mf_up_updated", "mf_up_compile"):
            psql(node, "postgres", "-c", f"DROP DATABASE IF EXISTS {db}")
    done("test_upgrade")


if __name__ == "__main__":
    main()
