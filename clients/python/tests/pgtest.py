"""What the Python tests share: a fresh database of their own with the extension, and login roles
that are members of memory_fabric's roles, made by the superuser of MF_TEST_CONNINFO; each test
module then grants its tenants and runs as those roles."""

from __future__ import annotations

import os
from typing import Iterable

import psycopg

ADMIN_INFO = os.environ.get("MF_TEST_CONNINFO", "")


def conninfo(db: str, user: str) -> str:
    return psycopg.conninfo.make_conninfo(ADMIN_INFO, dbname=db, user=user)


def fresh_database(db: str, roles: Iterable[tuple[str, str]]) -> psycopg.Connection:
    """Drops and makes `db` with the extension, and (role, kind) login roles in
    memory_fabric_<kind>; returns the superuser's autocommit connection to it, for the grants."""
    with psycopg.connect(ADMIN_INFO, dbname="postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {db}")
    c = psycopg.connect(ADMIN_INFO, dbname=db, autocommit=True)
    c.execute("SET client_min_messages = warning")
    c.execute("CREATE EXTENSION memory_fabric CASCADE")
    for role, kind in roles:
        c.execute(f"DROP ROLE IF EXISTS {role}")
        c.execute(f"CREATE ROLE {role} LOGIN IN ROLE memory_fabric_{kind}")
    return c


def drop_database(db: str, roles: Iterable[str]) -> None:
    with psycopg.connect(ADMIN_INFO, dbname="postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        for role in roles:
            c.execute(f"DROP ROLE IF EXISTS {role}")
