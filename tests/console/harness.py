"""What the console's browser tests (test_console.py) and screenshots.py share: a throwaway
PostgreSQL instance of their own, the console binary started against it, headless Chromium driven
by Selenium, and helpers that act as the test roles through psycopg.

The instance (initdb into a temporary folder under MF_STATE, run as the postgres OS user when we
are root) listens on 127.0.0.1 on a free port; its pg_hba.conf trusts the superuser on the socket
only and asks every TCP connection for a password (scram-sha-256), so that signing in to the
console really checks one (PostgreSQL 15 cannot tell the console how a role was authenticated).
The shared cluster is not touched. Everything is stopped and removed at the end.

Environment: MF_CONSOLE_BIN (the built console), MF_PG_BINDIR, MF_STATE (tests/console/run.sh
sets them).
"""

from __future__ import annotations

import http.client
import os
import re
import resource
import secrets
import shutil
import socket
import subprocess
import tempfile
import textwrap
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import psycopg

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("MF_CONSOLE_BIN") or os.path.join(ROOT, "target", "debug", "memory-fabric-console")
PG_BINDIR = os.environ.get("MF_PG_BINDIR", "/usr/lib/postgresql/15/bin")
STATE = os.environ.get("MF_STATE") or os.path.join(ROOT, "target", "mf")
AS_ROOT = os.geteuid() == 0

DB = "mf_console"
TENANT, OTHER = "t_con", "t_con_other"
# the roles: two reviewers (ana holds both tenants, bob only TENANT), an admin, an agent
ANA, BOB, ADMIN, AGENT = "mfc_ana", "mfc_bob", "mfc_admin", "mfc_agent"


def as_pg(*cmd: str) -> list[str]:
    """initdb and pg_ctl refuse to run as root: as the postgres OS user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if AS_ROOT else list(cmd)


def sh(cmd: list[str], timeout: float = 60, **kw: Any) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/", **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr or r.stdout}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    """A throwaway PostgreSQL instance with the extension, the tenants and the roles."""

    tenant: str = TENANT
    other: str = OTHER
    base: str = ""
    port: int = 0
    passwords: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> str:
        return os.path.join(self.base, "data")

    def start(self) -> None:
        os.makedirs(STATE, exist_ok=True)
        self.base = tempfile.mkdtemp(prefix="console-", dir=STATE)
        os.chmod(self.base, 0o755)
        if AS_ROOT:
            sh(["chown", "postgres:postgres", self.base])
        self.port = free_port()
        sh(as_pg(f"{PG_BINDIR}/initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                 "--locale=C.UTF-8", "--no-sync"))
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(textwrap.dedent(f"""\
                # memory_fabric console test instance
                listen_addresses = '127.0.0.1'
                port = {self.port}
                unix_socket_directories = '{self.base}'
                password_encryption = 'scram-sha-256'
                fsync = off
                synchronous_commit = off
                full_page_writes = off
                max_connections = 60
                shared_buffers = 64MB
                """))
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all postgres              trust\n"
                    "host  all all      127.0.0.1/32 scram-sha-256\n")
        self.pg_ctl("start")
        with self.admin("postgres") as c:
            c.execute(f"CREATE DATABASE {DB}")
        with self.admin() as c:
            c.execute("SET client_min_messages = warning")
            c.execute("CREATE EXTENSION memory_fabric CASCADE")
            c.execute("SET password_encryption = 'scram-sha-256'")
            for role, member, tenants in ((ANA, "memory_fabric_reviewer", (self.tenant, self.other)),
                                          (BOB, "memory_fabric_reviewer", (self.tenant,)),
                                          (ADMIN, "memory_fabric_admin", (self.tenant,)),
                                          (AGENT, "memory_fabric_agent", (self.tenant, self.other))):
                pw = self.passwords[role] = secrets.token_urlsafe(18)
                c.execute(f"CREATE ROLE {role} LOGIN IN ROLE {member} PASSWORD '{pw}'")
                for t in tenants:
                    c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, t))

    def make_role(self, role: str, member: str | None = "memory_fabric_reviewer", tenants: tuple[str, ...] = (),
                  attributes: str = "") -> str:
        """A login role with a password of its own (kept in passwords), a member of `member`,
        granted `tenants`; `attributes` such as SUPERUSER or BYPASSRLS. Returns the password."""
        pw = self.passwords[role] = secrets.token_urlsafe(18)
        with self.admin() as c:
            c.execute("SET password_encryption = 'scram-sha-256'")
            c.execute(f"CREATE ROLE {role} LOGIN {attributes} " + (f"IN ROLE {member} " if member else "")
                      + f"PASSWORD '{pw}'")
            for t in tenants:
                c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, t))
        return pw

    def pg_ctl(self, action: str) -> None:
        sh(["env", "-u", "RUST_BACKTRACE", "-u", "RUST_LIB_BACKTRACE",
            *as_pg(f"{PG_BINDIR}/pg_ctl", "-D", self.data, "-l", os.path.join(self.base, "postgres.log"),
                   "-m", "fast", "-w", "-t", "60", action)])

    def stop_and_remove(self) -> None:
        if self.base and os.path.exists(os.path.join(self.data, "postmaster.pid")):
            subprocess.run(as_pg(f"{PG_BINDIR}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"),
                           capture_output=True, timeout=60, cwd="/")
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)

    def admin(self, db: str = DB) -> psycopg.Connection:
        """The superuser, on the socket (trust)."""
        return psycopg.connect(host=self.base, port=self.port, user="postgres", dbname=db, autocommit=True)

    def connect(self, role: str) -> psycopg.Connection:
        """A test role over TCP, with its password (scram-sha-256)."""
        return psycopg.connect(host="127.0.0.1", port=self.port, user=role, password=self.passwords[role],
                               dbname=DB, autocommit=True)

    def capture(self, role: str, text: str, tenant: str | None = None, source: str = "operator", review: bool = True,
                **kw: Any) -> tuple[str, tuple | None]:
        """capture_memory (then review_candidate) as a role, pinned to the tenant (default: the
        first): the candidate's id and the review's (status, reviewer, reason,
        contradiction_resolution)."""
        tenant = tenant or self.tenant
        with self.connect(role) as c, c.transaction():
            c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
            names = ", ".join(f"{k} => %({k})s" for k in kw)
            args = {"tenant": tenant, "text": text, "source": source, **kw}
            cid = c.execute("SELECT id FROM memory_fabric.capture_memory(%(tenant)s, %(text)s, %(source)s, 'INTERNAL'"
                            + (", " + names if names else "") + ")", args).fetchone()[0]
            r = None
            if review:
                r = c.execute("SELECT status, reviewer, reason, contradiction_resolution "
                              "FROM memory_fabric.review_candidate(%s)", (cid,)).fetchone()
            return cid, r

    def queued(self, role: str, text: str, tenant: str | None = None, **kw: Any) -> str:
        """A candidate that waits for a human: an operator's capture (durable tier), reviewed."""
        cid, r = self.capture(role, text, tenant, **kw)
        assert r is not None and r[1] == "human", (cid, r)
        return cid

    def call(self, role: str, sql: str, *args: Any, tenant: str | None = None) -> list[tuple]:
        """A statement as a role, in a transaction pinned to the tenant (default: the first)."""
        with self.connect(role) as c, c.transaction():
            c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant or self.tenant,))
            cur = c.execute(sql, args)
            return cur.fetchall() if cur.description else []

    def recall(self, role: str, intent: str = "support", tenant: str | None = None, **kw: Any) -> list[str]:
        tenant = tenant or self.tenant
        with self.connect(role) as c, c.transaction():
            c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
            names = "".join(f", {k} => %({k})s" for k in kw)
            return [r[0] for r in c.execute(f"SELECT memory_id FROM memory_fabric.recall(%(t)s, %(i)s{names})",
                                            {"t": tenant, "i": intent, **kw})]


class Console:
    """The console binary, on a free loopback port, against the cluster (over TCP, where every
    role needs its password, unless `dsn` says otherwise). `settings` are its environment
    variables without the MEMORY_FABRIC_CONSOLE_ prefix (MAX_STREAMS=3, …); `open_files` limits
    its file descriptors (RLIMIT_NOFILE, soft and hard)."""

    def __init__(self, cluster: Cluster, dsn: str | None = None, settings: dict[str, str] | None = None,
                 open_files: int | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile("w+", prefix="console-", suffix=".log", dir=cluster.base, delete=False)
        if not os.access(BIN, os.X_OK):
            raise RuntimeError(f"MF_CONSOLE_BIN does not name the built console: {BIN!r}")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": cluster.base, "PGCONNECT_TIMEOUT": "5",
               **{f"MEMORY_FABRIC_CONSOLE_{k}": v for k, v in (settings or {}).items()}}

        def limit_files() -> None:
            if open_files:
                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        self.proc = subprocess.Popen(
            [BIN, "--listen", f"127.0.0.1:{self.port}", "--dsn",
             dsn or f"host=127.0.0.1 port={cluster.port} dbname={DB} sslmode=disable", "--tenants",
             f"{cluster.tenant},{cluster.other}"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd="/", preexec_fn=limit_files)
        deadline = time.monotonic() + 30
        while True:
            try:
                # any answer: a console started with --allowed-hosts refuses this Host (421)
                if self.get("/healthz")[0] in (200, 421):
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the console did not start: {self.output()}")
            time.sleep(0.05)

    def request(self, method: str, path: str, body: str | None = None, headers: dict[str, str] | None = None
                ) -> tuple[int, dict[str, str], str]:
        """One request on a connection of its own: the status, the headers (lower-case names; the
        Set-Cookie headers joined by newlines) and the body."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            hs: dict[str, str] = {}
            for k, v in r.getheaders():
                k = k.lower()
                hs[k] = f"{hs[k]}\n{v}" if k == "set-cookie" and k in hs else v
            return r.status, hs, r.read().decode("utf-8", "replace")
        finally:
            c.close()

    def get(self, path: str, **kw: Any) -> tuple[int, dict[str, str], str]:
        return self.request("GET", path, **kw)

    def sign_in(self, role: str, password: str, origin: str | None = "", fields: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, str | None, str]:
        """Signs in over HTTP as a browser would (the form's token and its cookie, Origin this
        console unless `origin` says otherwise; None sends none): the status, the session cookie
        (None when no session was made) and the page."""
        _, hs, page = self.get("/signin")
        token = re.search(r'name="login" value="([0-9a-f]+)"', page).group(1)  # type: ignore[union-attr]
        form = {"role": role, "password": password, "login": token, **(fields or {})}
        hs = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"mf_login={token}", **(headers or {})}
        if origin is not None:
            hs["Origin"] = origin or self.url
        status, out, page = self.request("POST", "/signin", body=urllib.parse.urlencode(form), headers=hs)
        cookie = re.search(r"(?:^|\n)mf_session=([0-9a-f]+)", out.get("set-cookie", ""))
        return status, cookie.group(1) if cookie else None, page

    def csrf(self, cookie: str) -> str:
        """The session's CSRF token, from a page (every page's header has the sign-out form)."""
        status, hs, page = self.get("/tenant", headers={"Cookie": f"mf_session={cookie}"})
        m = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
        if not m:
            raise AssertionError(f"no CSRF token: {status} {hs.get('location')} {page[:300]}")
        return m.group(1)

    def post(self, path: str, fields: dict[str, str], cookie: str, **headers: str) -> tuple[int, dict[str, str], str]:
        """A form post with the session's cookie, from this console's origin."""
        hs = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"mf_session={cookie}",
              "Origin": self.url, **headers}
        return self.request("POST", path, body=urllib.parse.urlencode(fields), headers=hs)

    def sign_out(self, cookie: str) -> None:
        """Ends a session, if it is still open."""
        status, hs, page = self.get("/tenant", headers={"Cookie": f"mf_session={cookie}"})
        m = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
        if m:
            self.post("/signout", {"csrf": m.group(1)}, cookie)

    def output(self) -> str:
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def browser(width: int = 1280, height: int = 900) -> Any:
    """Headless Chromium from Debian's packages, through Debian's chromedriver (Selenium Manager
    never runs: the driver's path is given and SE_OFFLINE is set)."""
    os.environ["SE_OFFLINE"] = "true"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="chromium-", dir=STATE)
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--disable-extensions", "--hide-scrollbars", "--force-device-scale-factor=1",
              f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        o.add_argument(a)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.profile_dir = profile  # removed by quit_browser
    return d


def quit_browser(d: Any) -> None:
    try:
        d.quit()
    finally:
        shutil.rmtree(getattr(d, "profile_dir", ""), ignore_errors=True)
