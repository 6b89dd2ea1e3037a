"""memory-fabric-mcp over TLS, against a throwaway PostgreSQL instance of its own.

    MF_MCP_BIN=target/debug/memory-fabric-mcp MF_PG_BINDIR=/usr/lib/postgresql/15/bin MF_STATE=target/mf \\
        python -m unittest discover -s tests/mcp -p test_tls.py

The instance (initdb into a temporary folder under MF_STATE, run as the postgres OS user when we
are root) listens on 127.0.0.1 on a free port with ssl=on and a server certificate for "localhost"
only, signed by a throwaway CA made here with the openssl command; its pg_hba.conf accepts TCP
connections only over TLS (hostssl; one role only with a client certificate). The shared cluster is
not touched. The instance is stopped and its folder removed at the end, also when something fails.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import textwrap
import unittest
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import psycopg
from mcp import ClientSession, StdioServerParameters, stdio_client

BIN = os.environ.get("MF_MCP_BIN", "")
PG_BINDIR = os.environ.get("MF_PG_BINDIR", "/usr/lib/postgresql/15/bin")
STATE = os.environ.get("MF_STATE", "")
DB, AGENT, CERT_ROLE, TENANT = "mf_tls", "mf_tls_agent", "mf_tls_cert", "t_tls"
AS_ROOT = os.geteuid() == 0

# filled by setUpModule
BASE = CA = OTHER_CA = CLIENT_CRT = CLIENT_KEY = EMPTY_HOME = ""
PORT = 0


def as_pg(*cmd: str) -> list[str]:
    """initdb and pg_ctl refuse to run as root: as the postgres OS user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if AS_ROOT else list(cmd)


def sh(cmd: list[str], **kw: Any) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd="/", **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr or r.stdout}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certs(d: str) -> None:
    """A CA, another CA, a server certificate for localhost (DNS name only) and a client
    certificate for CERT_ROLE, all EC P-256, valid two days."""
    ssl = shutil.which("openssl")
    if not ssl:
        raise RuntimeError("the openssl command is not installed (Debian: apt-get install openssl)")
    ca_cnf = os.path.join(d, "ca.cnf")
    with open(ca_cnf, "w") as f:
        f.write(textwrap.dedent("""\
            [req]
            distinguished_name = dn
            x509_extensions = v3_ca
            prompt = no
            [dn]
            [v3_ca]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            """))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for name in ("ca", "other-ca"):
        sh([ssl, "req", "-x509", "-new", "-config", ca_cnf, *ec, "-days", "2", "-subj", f"/CN=memory_fabric test {name}",
            "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.crt"])
    for name, cn, ext in (("server", "localhost", "subjectAltName = DNS:localhost\nextendedKeyUsage = serverAuth\n"),
                          ("client", CERT_ROLE, "extendedKeyUsage = clientAuth\n")):
        with open(f"{d}/{name}.ext", "w") as f:
            f.write("basicConstraints = CA:FALSE\n" + ext)
        sh([ssl, "req", "-new", *ec, "-subj", f"/CN={cn}", "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr"])
        sh([ssl, "x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
            "-set_serial", "0x" + os.urandom(8).hex(), "-days", "2", "-extfile", f"{d}/{name}.ext",
            "-out", f"{d}/{name}.crt"])
    for name in os.listdir(d):
        if name.endswith(".key"):
            os.chmod(os.path.join(d, name), 0o600)


def admin(db: str = "postgres") -> psycopg.Connection:
    return psycopg.connect(host=BASE, port=PORT, user="postgres", dbname=db, autocommit=True)


def stop_and_remove(base: str, data: str) -> None:
    if os.path.exists(os.path.join(data, "postmaster.pid")):
        subprocess.run(as_pg(f"{PG_BINDIR}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"),
                       capture_output=True, timeout=60, cwd="/")
    shutil.rmtree(base, ignore_errors=True)


def setUpModule() -> None:
    global BASE, CA, OTHER_CA, CLIENT_CRT, CLIENT_KEY, EMPTY_HOME, PORT
    if not BIN or not os.access(BIN, os.X_OK):
        raise RuntimeError(f"MF_MCP_BIN does not name the built binary: {BIN!r}")
    if not STATE:
        raise RuntimeError("MF_STATE is not set (tests/mcp/run.sh sets it)")
    os.makedirs(STATE, exist_ok=True)
    BASE = tempfile.mkdtemp(prefix="tls-", dir=STATE)
    data, certs = os.path.join(BASE, "data"), os.path.join(BASE, "certs")
    unittest.addModuleCleanup(stop_and_remove, BASE, data)
    os.chmod(BASE, 0o755)
    os.makedirs(certs)
    make_certs(certs)
    CA, OTHER_CA = f"{certs}/ca.crt", f"{certs}/other-ca.crt"
    CLIENT_CRT, CLIENT_KEY = f"{certs}/client.crt", f"{certs}/client.key"
    EMPTY_HOME = os.path.join(BASE, "home")
    os.makedirs(EMPTY_HOME)
    if AS_ROOT:
        sh(["chown", "-R", "postgres:postgres", BASE])
    PORT = free_port()
    sh(as_pg(f"{PG_BINDIR}/initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
             "--locale=C.UTF-8", "--no-sync"))
    conf = textwrap.dedent(f"""\
        # memory_fabric TLS test instance
        listen_addresses = '127.0.0.1'
        port = {PORT}
        unix_socket_directories = '{BASE}'
        ssl = on
        ssl_cert_file = '{certs}/server.crt'
        ssl_key_file = '{certs}/server.key'
        ssl_ca_file = '{certs}/ca.crt'
        fsync = off
        max_connections = 20
        shared_buffers = 32MB
        """)
    with open(os.path.join(data, "postgresql.conf"), "a") as f:
        f.write(conf)
    with open(os.path.join(data, "pg_hba.conf"), "w") as f:
        f.write(textwrap.dedent(f"""\
            local   all  all                    trust
            hostssl all  {CERT_ROLE}  127.0.0.1/32  cert
            hostssl all  all          127.0.0.1/32  trust
            """))
    sh(["env", "-u", "RUST_BACKTRACE", "-u", "RUST_LIB_BACKTRACE",
        *as_pg(f"{PG_BINDIR}/pg_ctl", "-D", data, "-l", os.path.join(BASE, "postgres.log"), "-w", "-t", "60", "start")])
    with admin() as c:
        c.execute(f"CREATE DATABASE {DB}")
    with admin(DB) as c:
        c.execute("SET client_min_messages = warning")
        c.execute("CREATE EXTENSION memory_fabric CASCADE")
        for role in (AGENT, CERT_ROLE):
            c.execute(f"CREATE ROLE {role} LOGIN IN ROLE memory_fabric_agent")
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, TENANT))


def dsn(host: str = "localhost", **kw: str) -> str:
    parts = {"host": host, "port": str(PORT), "user": AGENT, "dbname": DB, **kw}
    if host == "localhost":
        parts.setdefault("hostaddr", "127.0.0.1")  # never ::1, where nothing listens
    return " ".join(f"{k}={v}" for k, v in parts.items())


def env_for(conninfo: str | None, home: str | None = None, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home or EMPTY_HOME, "MEMORY_FABRIC_TENANT": TENANT, **extra}
    if conninfo is not None:
        env["MEMORY_FABRIC_DSN"] = conninfo
    return env


def start(conninfo: str | None, home: str | None = None, **extra: str) -> subprocess.CompletedProcess:
    """Starts the server, initializes a session and closes stdin: 0 once connected, else 1 with
    the reason on stderr."""
    hello = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
             '"capabilities":{},"clientInfo":{"name":"tls-test","version":"0"}}}\n'
             '{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    return subprocess.run([BIN], env=env_for(conninfo, home, **extra), input=hello, capture_output=True, text=True,
                          timeout=30, cwd="/")


@asynccontextmanager
async def session(conninfo: str | None, home: str | None = None, **extra: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=BIN, args=[], env=env_for(conninfo, home, **extra))
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def backend_ssl(app: str) -> list[tuple[bool, str | None]]:
    """What the server says of the MCP server's connection (pg_stat_ssl), found by its
    application_name."""
    with admin() as c:
        return c.execute("SELECT s.ssl, s.version FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                         "WHERE a.application_name = %s", (app,)).fetchall()


class Tls(unittest.TestCase):
    def assert_refused(self, r: subprocess.CompletedProcess, *words: str, rc: int = 1) -> None:
        self.assertEqual((r.returncode, r.stdout), (rc, ""), r.stderr)
        self.assertNotIn("panicked", r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)

    def test_verify_full_with_the_ca_connects_encrypted_and_a_tool_works(self) -> None:
        app = "mf_tls_verify_full"

        async def go() -> None:
            async with session(dsn(sslmode="verify-full", sslrootcert=CA, application_name=app)) as s:
                names = {t.name for t in (await s.list_tools()).tools}
                self.assertEqual(names, {"remember", "recall", "review_status"})
                r = await s.call_tool("remember", {"text": "Customer t1 pays by card.", "user_id": "t1",
                                                     "evidence_refs": ["ticket:7"]})
                self.assertFalse(r.is_error, r.content)
                self.assertEqual(r.structured_content["outcome"], "promoted")
                r = await s.call_tool("recall", {"user_id": "t1", "query": "how does t1 pay?"})
                self.assertFalse(r.is_error, r.content)
                self.assertIn("Customer t1 pays by card.", [m["text"] for m in r.structured_content["memories"]])
                [(ssl, version)] = backend_ssl(app)
                self.assertTrue(ssl)
                self.assertIn(version, ("TLSv1.2", "TLSv1.3"))

        run(go())
        # the same from the environment, as libpq reads it
        r = start(None, PGHOST="localhost", PGPORT=str(PORT), PGUSER=AGENT, PGDATABASE=DB,
                  PGSSLMODE="verify-full", PGSSLROOTCERT=CA)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"connected to database {DB} as role {AGENT}", r.stderr)

    def test_verify_full_refuses_a_certificate_for_another_name(self) -> None:
        # the certificate names localhost only; 127.0.0.1 is not in it
        r = start(dsn("127.0.0.1", sslmode="verify-full", sslrootcert=CA))
        self.assert_refused(r, "cannot connect to PostgreSQL", "server certificate", '"127.0.0.1"',
                            "not valid", "verify-full")

    def test_verify_ca_checks_the_chain_but_not_the_name(self) -> None:
        r = start(dsn("127.0.0.1", sslmode="verify-ca", sslrootcert=CA))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("connected to database", r.stderr)
        r = start(dsn("localhost", sslmode="verify-ca", sslrootcert=OTHER_CA))
        self.assert_refused(r, "server certificate is not signed by", OTHER_CA, "verify-ca")
        r = start(dsn("localhost", sslmode="verify-full", sslrootcert=os.path.join(BASE, "missing.crt")))
        self.assert_refused(r, "cannot set up TLS", "missing.crt", "does not exist")

    def test_require_without_a_root_certificate_encrypts_without_verifying(self) -> None:
        async def go(app: str, **kw: str) -> None:
            async with session(dsn("127.0.0.1", application_name=app, **kw)) as s:
                r = await s.call_tool("recall", {})
                self.assertFalse(r.is_error, r.content)
                self.assertEqual([ssl for ssl, _ in backend_ssl(app)], [True])

        run(go("mf_tls_require", sslmode="require"))
        run(go("mf_tls_prefer"))  # prefer, the default: TLS, since the server offers it
        # a root certificate in ~/.postgresql/root.crt makes require check the chain, as libpq's
        home = os.path.join(BASE, "home-root")
        os.makedirs(os.path.join(home, ".postgresql"))
        shutil.copy(OTHER_CA, os.path.join(home, ".postgresql", "root.crt"))
        r = start(dsn("127.0.0.1", sslmode="require"), home=home)
        self.assert_refused(r, "not signed by", "root.crt")
        shutil.copy(CA, os.path.join(home, ".postgresql", "root.crt"))
        r = start(dsn("127.0.0.1", sslmode="require"), home=home)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_disable_is_refused_by_a_tls_only_server(self) -> None:
        r = start(dsn(sslmode="disable"))
        self.assert_refused(r, "cannot connect to PostgreSQL", "pg_hba.conf", "no encryption", "28000")

    def test_the_system_trust_store_does_not_know_a_private_ca(self) -> None:
        r = start(dsn(sslrootcert="system"))  # verify-full, with the system's roots
        self.assert_refused(r, "system")
        r = start(dsn(sslrootcert="system", sslmode="require"))
        self.assert_refused(r, 'weak sslmode "require"', rc=2)
        r = start(dsn(sslmode="verify-everything"))
        self.assert_refused(r, "invalid sslmode", rc=2)

    def test_a_client_certificate_authenticates(self) -> None:
        ok = dsn(user=CERT_ROLE, sslmode="verify-full", sslrootcert=CA, sslcert=CLIENT_CRT, sslkey=CLIENT_KEY)
        r = start(ok)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"as role {CERT_ROLE}", r.stderr)
        r = start(dsn(user=CERT_ROLE, sslmode="verify-full", sslrootcert=CA))
        self.assert_refused(r, "cannot connect to PostgreSQL", "certificate")
        loose = os.path.join(BASE, "loose.key")
        shutil.copy(CLIENT_KEY, loose)
        os.chmod(loose, 0o644)
        r = start(dsn(user=CERT_ROLE, sslmode="verify-full", sslrootcert=CA, sslcert=CLIENT_CRT, sslkey=loose))
        self.assert_refused(r, "group or world access")

    def test_a_socket_never_uses_tls(self) -> None:
        # the socket directory: no TLS, so not even the (missing) root certificate is read
        r = start(f"host={BASE} port={PORT} user={AGENT} dbname={DB} sslmode=verify-full "
                  f"sslrootcert={BASE}/missing.crt")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("connected to database", r.stderr)


if __name__ == "__main__":
    unittest.main()
