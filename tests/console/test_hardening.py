"""The console's walls over HTTP (issue 39, items 5 to 8): the Host and Origin checks, the header
timer and the connection caps, the live-queue stream caps, the database connection caps, sessions
that end when the role may no longer sign in, decisions recorded under the role's own name, and
no sign-in for superusers. Plain HTTP (http.client and sockets) against the console binary and
a PostgreSQL instance of this module's own (harness.py) that asks every TCP connection for a
password. The caps are set through the environment (MEMORY_FABRIC_CONSOLE_*), small, per test.
"""

from __future__ import annotations

import http.client
import re
import secrets
import socket
import time
import unittest
from typing import Any

import harness as h
from harness import ADMIN, AGENT, ANA, BOB, DB, TENANT

CLUSTER = h.Cluster()
CONSOLE: h.Console


def setUpModule() -> None:
    global CONSOLE
    unittest.addModuleCleanup(CLUSTER.stop_and_remove)
    CLUSTER.start()
    CONSOLE = h.Console(CLUSTER)
    unittest.addModuleCleanup(CONSOLE.stop)


def uniq(text: str) -> str:
    return f"{text} [{secrets.token_hex(3)}]"


def stage(cid: str) -> str:
    with CLUSTER.admin() as c:
        return c.execute("SELECT stage FROM memory_fabric.review_status(%s)", (cid,)).fetchone()[0]


def console_connections(role: str) -> int:
    with CLUSTER.admin() as c:
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND application_name = "
                         "'memory-fabric-console'", (role,)).fetchone()[0]


def wait_for(cond: Any, timeout: float = 5, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or cond}")
        time.sleep(0.05)


def connect(con: h.Console, source: str = "127.0.0.1", timeout: float = 10) -> socket.socket:
    return socket.create_connection(("127.0.0.1", con.port), timeout=timeout, source_address=(source, 0))


def read_all(s: socket.socket) -> bytes:
    """What the server sends until it closes the connection (or the socket's timeout)."""
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except (ConnectionResetError, TimeoutError, socket.timeout):
        pass
    return out


def raw(con: h.Console, request: str, source: str = "127.0.0.1") -> str:
    """One request written as given, on a connection of its own from `source`: the answer."""
    with connect(con, source) as s:
        s.sendall(request.encode())
        return read_all(s).decode("utf-8", "replace")


def get_close(con: h.Console, path: str = "/healthz") -> str:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{con.port}\r\nConnection: close\r\n\r\n"


def signed_in(con: h.Console, role: str, tenant: str | None = TENANT) -> str:
    status, cookie, page = con.sign_in(role, CLUSTER.passwords[role])
    assert status == 303 and cookie, (status, page[-600:])
    if tenant and con.get("/queue", headers={"Cookie": f"mf_session={cookie}"})[0] != 200:
        con.post("/tenant", {"csrf": con.csrf(cookie), "tenant": tenant}, cookie)
    return cookie


class Walls(unittest.TestCase):
    # ------------------------------------------------------------------------------------------
    # item 5: Host

    def test_a_request_for_another_host_is_refused(self) -> None:
        port = CONSOLE.port
        # after DNS rebinding the browser sends the attacker's name; another port is not this console
        for host in ("rebound.example", f"rebound.example:{port}", f"127.0.0.1:{port + 1}", f"localhost:{port + 1}",
                     f"127.0.0.1.nip.io:{port}"):
            for path in ("/signin", "/healthz", "/static/console.js", "/queue", "/nowhere"):
                with self.subTest(host=host, path=path):
                    status, _, body = CONSOLE.get(path, headers={"Host": host})
                    self.assertEqual(status, 421, body)
                    self.assertIn("--allowed-hosts", body)
        # a sign-in through the rebound name, with a real password and the form's token: no session
        status, cookie, _ = CONSOLE.sign_in(BOB, CLUSTER.passwords[BOB], origin=f"http://rebound.example:{port}",
                                            headers={"Host": f"rebound.example:{port}"})
        self.assertEqual((status, cookie), (421, None))
        # an absolute-form target names the host too; a request without Host is malformed
        self.assertRegex(raw(CONSOLE, f"GET http://rebound.example:{port}/signin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                                      "Connection: close\r\n\r\n"), r"^HTTP/1\.1 421 ")
        self.assertRegex(raw(CONSOLE, "GET /healthz HTTP/1.0\r\n\r\n"), r"^HTTP/1\.[01] 400 ")
        # the names it serves by default: the listen address and localhost, with its port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
            self.assertEqual(CONSOLE.get("/signin", headers={"Host": host})[0], 200, host)

    def test_allowed_hosts_replace_the_defaults(self) -> None:
        con = h.Console(CLUSTER, settings={"ALLOWED_HOSTS": "console.example.com, review.internal:9000"})
        try:
            self.assertEqual(con.get("/healthz", headers={"Host": "console.example.com"})[0], 200)
            self.assertEqual(con.get("/healthz", headers={"Host": f"console.example.com:{con.port}"})[0], 200)
            self.assertEqual(con.get("/healthz", headers={"Host": "review.internal:9000"})[0], 200)
            self.assertEqual(con.get("/healthz", headers={"Host": "review.internal"})[0], 421)
            self.assertEqual(con.get("/healthz")[0], 421)  # 127.0.0.1 is no longer named
        finally:
            con.stop()

    # ------------------------------------------------------------------------------------------
    # item 8: Origin on every POST, the sign-in included (login CSRF)

    def test_a_sign_in_from_another_origin_is_refused(self) -> None:
        pw, port = CLUSTER.passwords[BOB], CONSOLE.port
        for origin, headers in ((f"http://127.0.0.1:{port + 1}", {}), (f"http://127.0.0.1:{port + 1}", {"Sec-Fetch-Site": "same-site"}),
                                ("http://evil.example", {}), ("null", {}),
                                (None, {"Sec-Fetch-Site": "same-site"}), (None, {"Sec-Fetch-Site": "cross-site"})):
            with self.subTest(origin=origin, headers=headers):
                status, cookie, page = CONSOLE.sign_in(BOB, pw, origin=origin, headers=headers)
                self.assertEqual((status, cookie), (403, None), page[-400:])
                self.assertIn("<h1>Refused</h1>", page)
        # from this console: its own origin, another allowed name, or a browser that says same-origin
        for origin, headers in ((f"http://127.0.0.1:{port}", {}), (f"http://localhost:{port}", {}),
                                (None, {"Sec-Fetch-Site": "same-origin"})):
            with self.subTest(origin=origin, headers=headers):
                status, cookie, _ = CONSOLE.sign_in(BOB, pw, origin=origin, headers=headers)
                self.assertEqual(status, 303)
                self.assertIsNotNone(cookie)
                CONSOLE.sign_out(cookie)

    def test_a_decision_from_another_origin_is_refused(self) -> None:
        cid = CLUSTER.queued(ANA, uniq("Posted from elsewhere."), actor="op:ana")
        cookie = signed_in(CONSOLE, BOB)
        token = CONSOLE.csrf(cookie)
        form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"mf_session={cookie}"}
        for headers in ({"Origin": f"http://127.0.0.1:{CONSOLE.port + 1}"}, {"Origin": "null"},
                        {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"}):
            with self.subTest(headers=headers):
                status, _, body = CONSOLE.request("POST", f"/candidates/{cid}/approve", body=f"csrf={token}",
                                                  headers={**form, **headers})
                self.assertEqual(status, 403, body)
        self.assertEqual(stage(cid), "waiting_for_human")
        CONSOLE.sign_out(cookie)

    # ------------------------------------------------------------------------------------------
    # item 6: header reads, connections, streams

    def test_half_open_connections_do_not_starve_a_request(self) -> None:
        # as the review found it: the console with few file descriptors, more half-open
        # connections than it has descriptors, then a real request
        con = h.Console(CLUSTER, open_files=128, settings={
            "MAX_CONNECTIONS": "48", "MAX_CONNECTIONS_PER_IP": "48", "MAX_STREAMS": "8", "HEADER_TIMEOUT": "3"})
        held: list[socket.socket] = []
        try:
            for _ in range(150):
                s = connect(con)
                s.sendall(f"GET /signin HTTP/1.1\r\nHost: 127.0.0.1:{con.port}\r\nUser-Agent: slow".encode())
                held.append(s)
            started = time.monotonic()
            c = http.client.HTTPConnection("127.0.0.1", con.port, timeout=5)
            c.request("GET", "/healthz")
            self.assertEqual(c.getresponse().status, 200)
            c.close()
            self.assertLess(time.monotonic() - started, 2.0)
            # a sign-in (its database connection needs a descriptor too) and a page
            cookie = signed_in(con, BOB)
            self.assertEqual(con.get("/queue", headers={"Cookie": f"mf_session={cookie}"})[0], 200)
            con.sign_out(cookie)
            # a header that never ends is cut off by the header timer (hyper answers 408 or closes)
            s = connect(con)
            s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{con.port}\r\n".encode())
            started = time.monotonic()
            s.settimeout(8)
            answer = read_all(s)
            s.close()
            self.assertLess(time.monotonic() - started, 5.0)
            self.assertTrue(answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:100])
            # and so is a kept-alive connection left idle
            c = http.client.HTTPConnection("127.0.0.1", con.port, timeout=8)
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            self.assertEqual(r.getheader("connection"), None)  # kept alive
            started = time.monotonic()
            answer = read_all(c.sock)
            self.assertTrue(answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:100])
            self.assertLess(time.monotonic() - started, 5.0)
            c.close()
        finally:
            for s in held:
                s.close()
            con.stop()

    def test_busy_connections_are_capped_per_address_and_in_all(self) -> None:
        con = h.Console(CLUSTER, settings={
            "MAX_CONNECTIONS": "12", "MAX_CONNECTIONS_PER_IP": "4", "MAX_STREAMS": "4", "HEADER_TIMEOUT": "4"})
        slow: list[socket.socket] = []

        def slow_post(source: str) -> None:
            # a whole header, then a body that never comes: the request is in flight
            s = connect(con, source)
            s.sendall(f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{con.port}\r\nOrigin: {con.url}\r\n"
                      "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nrole=".encode())
            slow.append(s)

        try:
            for _ in range(4):
                slow_post("127.0.0.2")
            time.sleep(0.3)
            # the address has its 4 connections, all busy: a fifth is answered 429 at once
            self.assertRegex(raw(con, get_close(con), "127.0.0.2"), r"^HTTP/1\.1 429 Too Many Requests\r\n(.|\r\n)*retry-after: 5")
            # another address gets in
            self.assertRegex(raw(con, get_close(con), "127.0.0.3"), r"^HTTP/1\.1 200 ")
            for source in ("127.0.0.3",) * 4 + ("127.0.0.4",) * 4:
                slow_post(source)
            time.sleep(0.3)
            # 12 busy connections: a new address gets 503
            self.assertRegex(raw(con, get_close(con), "127.0.0.5"), r"^HTTP/1\.1 503 Service Unavailable\r\n")
            # the bodies never came: each request ends 408 within the header timeout
            for s in slow:
                s.settimeout(8)
                self.assertTrue(read_all(s).startswith(b"HTTP/1.1 408 "))
            self.assertRegex(raw(con, get_close(con), "127.0.0.5"), r"^HTTP/1\.1 200 ")
        finally:
            for s in slow:
                s.close()
            con.stop()

    def test_an_oversized_body_is_refused(self) -> None:
        # as before the console read bodies itself: at most 2 MiB (axum's limit), then 413
        cid = CLUSTER.queued(ANA, uniq("Not decided by a huge form."), actor="op:ana")
        cookie = signed_in(CONSOLE, BOB)
        token = CONSOLE.csrf(cookie)
        status, headers, body = CONSOLE.post(f"/candidates/{cid}/approve", {"csrf": token, "notes": "x" * (3 << 20)}, cookie)
        self.assertEqual((status, headers.get("connection")), (413, "close"), body[:200])
        self.assertEqual(stage(cid), "waiting_for_human")
        # under the limit the form is read, and the database's own limit on notes applies
        status, headers, _ = CONSOLE.post(f"/candidates/{cid}/reject", {"csrf": token, "reason": "x" * (1 << 20)}, cookie)
        self.assertEqual((status, headers.get("location")), (303, f"/candidates/{cid}"))
        self.assertEqual(stage(cid), "waiting_for_human")
        page = CONSOLE.get(f"/candidates/{cid}", headers={"Cookie": f"mf_session={cookie}"})[2]
        self.assertIn('data-sqlstate="54000"', page)
        CONSOLE.sign_out(cookie)

    def test_live_queue_streams_are_capped_per_session_and_in_all(self) -> None:
        con = h.Console(CLUSTER, settings={"MAX_STREAMS": "5", "MAX_STREAMS_PER_SESSION": "3"})
        opened: list[http.client.HTTPConnection] = []

        def stream(cookie: str) -> int:
            c = http.client.HTTPConnection("127.0.0.1", con.port, timeout=10)
            c.request("GET", "/queue/events", headers={"Cookie": f"mf_session={cookie}", "Accept": "text/event-stream"})
            r = c.getresponse()
            if r.status == 200:
                seen = b""
                while b"event: ready" not in seen:
                    seen += r.read1(4096)
                opened.append(c)
            else:
                r.read()
                c.close()
            return r.status

        try:
            bob, ana = signed_in(con, BOB), signed_in(con, ANA)
            self.assertEqual([stream(bob) for _ in range(4)], [200, 200, 200, 429])
            self.assertEqual([stream(ana) for _ in range(3)], [200, 200, 503])
            # a stream closed by the browser gives its place back (the console notices when it
            # next writes to it: a notification here)
            opened.pop(0).close()
            deadline = time.monotonic() + 20
            while True:
                CLUSTER.queued(ANA, uniq("Wakes the streams."), actor="op:ana")
                if stream(bob) == 200:
                    break
                self.assertLess(time.monotonic(), deadline, "the closed stream's place was not given back")
                time.sleep(0.5)
            con.sign_out(bob)
            con.sign_out(ana)
        finally:
            for c in opened:
                c.close()
            con.stop()

    # ------------------------------------------------------------------------------------------
    # item 7: database connections per role and in all

    def test_sign_ins_over_the_database_connection_caps_are_refused(self) -> None:
        con = h.Console(CLUSTER, settings={"MAX_DB_CONNECTIONS": "5", "MAX_DB_CONNECTIONS_PER_ROLE": "3"})
        try:
            before = console_connections(BOB)
            bobs = [con.sign_in(BOB, CLUSTER.passwords[BOB])[1] for _ in range(3)]
            self.assertNotIn(None, bobs)
            self.assertEqual(console_connections(BOB), before + 3)
            status, cookie, page = con.sign_in(BOB, CLUSTER.passwords[BOB])
            self.assertEqual((status, cookie), (503, None))
            self.assertIn("too many console connections for role &quot;mfc_bob&quot;", page)
            self.assertIn("--max-db-connections-per-role", page)
            self.assertEqual(console_connections(BOB), before + 3)
            # the agent still connects and works
            cid, _ = CLUSTER.capture(AGENT, uniq("The agent still gets in."), source="agent")
            self.assertTrue(cid.startswith("mc_"))
            # two more roles' sessions fill the console's total; the next is refused
            anas = [con.sign_in(ANA, CLUSTER.passwords[ANA])[1] for _ in range(2)]
            self.assertNotIn(None, anas)
            status, cookie, page = con.sign_in(ADMIN, CLUSTER.passwords[ADMIN])
            self.assertEqual((status, cookie), (503, None))
            self.assertIn("too many console connections", page)
            self.assertIn("--max-db-connections)", page)
            # signing out gives the connection back at once
            con.sign_out(bobs.pop())
            wait_for(lambda: console_connections(BOB) == before + 2, what="the connection closed")
            status, cookie, _ = con.sign_in(BOB, CLUSTER.passwords[BOB])
            self.assertEqual(status, 303)
            for c in bobs + anas + [cookie]:
                con.sign_out(c)
            wait_for(lambda: console_connections(BOB) == before, what="every connection closed")
        finally:
            con.stop()

    # ------------------------------------------------------------------------------------------
    # item 8: sessions end with the role's right to sign in; decisions under the role's name

    def test_nologin_and_a_password_change_end_an_open_session(self) -> None:
        for change in ("NOLOGIN", "PASSWORD", "VALID UNTIL", "BYPASSRLS"):
            with self.subTest(change=change):
                role = f"mfc_tmp_{secrets.token_hex(3)}"
                CLUSTER.make_role(role, tenants=(TENANT,))
                cid = CLUSTER.queued(BOB, uniq("Decided after the change?"), actor="op:bob")
                cookie = signed_in(CONSOLE, role)
                token = CONSOLE.csrf(cookie)
                self.assertEqual(CONSOLE.get(f"/candidates/{cid}", headers={"Cookie": f"mf_session={cookie}"})[0], 200)
                self.assertEqual(console_connections(role), 1)
                sql = {"NOLOGIN": f"ALTER ROLE {role} NOLOGIN",
                       "PASSWORD": f"ALTER ROLE {role} PASSWORD '{secrets.token_urlsafe(12)}'",
                       "VALID UNTIL": f"ALTER ROLE {role} VALID UNTIL '2000-01-01'",
                       "BYPASSRLS": f"ALTER ROLE {role} BYPASSRLS"}[change]
                with CLUSTER.admin() as c:
                    c.execute(sql)
                # the next decision is refused and nothing is recorded; the session is over
                status, headers, _ = CONSOLE.post(f"/candidates/{cid}/approve", {"csrf": token}, cookie)
                self.assertEqual((status, headers.get("location")), (303, "/signin?why=ended"))
                self.assertEqual(stage(cid), "waiting_for_human")
                status, headers, _ = CONSOLE.get("/queue", headers={"Cookie": f"mf_session={cookie}"})
                self.assertEqual((status, headers.get("location")), (303, "/signin"))
                wait_for(lambda: console_connections(role) == 0, what="the session's connection closed")
                if change != "PASSWORD":
                    continue
                # with the new password: signed in again, and the decision is recorded
                with CLUSTER.admin() as c:
                    pw = secrets.token_urlsafe(12)
                    c.execute(f"ALTER ROLE {role} PASSWORD '{pw}'")
                CLUSTER.passwords[role] = pw
                cookie = signed_in(CONSOLE, role)
                status, headers, _ = CONSOLE.post(f"/candidates/{cid}/approve", {"csrf": CONSOLE.csrf(cookie)}, cookie)
                self.assertEqual((status, headers.get("location")), (303, "/queue"))
                self.assertEqual(stage(cid), "promoted")
                CONSOLE.sign_out(cookie)
        # reads see NOLOGIN at once too (the role is checked on every request)
        role = f"mfc_tmp_{secrets.token_hex(3)}"
        CLUSTER.make_role(role, tenants=(TENANT,))
        cookie = signed_in(CONSOLE, role)
        with CLUSTER.admin() as c:
            c.execute(f"ALTER ROLE {role} NOLOGIN")
        status, headers, _ = CONSOLE.get("/queue", headers={"Cookie": f"mf_session={cookie}"})
        self.assertEqual((status, headers.get("location")), (303, "/signin?why=ended"))

    def test_an_idle_session_ends_when_its_password_changes_or_it_loses_login(self) -> None:
        # no request at all after the change: the sweep checks every session's role, and its
        # password once it was last checked longer ago than --reauth-seconds (5 here)
        con = h.Console(CLUSTER, settings={"REAUTH_SECONDS": "5"})
        try:
            roles = {f"mfc_tmp_{secrets.token_hex(3)}": sql for sql in ("PASSWORD 'changed-elsewhere'", "NOLOGIN")}
            cookies = {}
            for role in roles:
                CLUSTER.make_role(role, tenants=(TENANT,))
                cookies[role] = signed_in(con, role)
                self.assertEqual(console_connections(role), 1)
            with CLUSTER.admin() as c:
                for role, sql in roles.items():
                    c.execute(f"ALTER ROLE {role} {sql}")
            # the sweep says how many it ended (both here, in one sweep or two)
            ended = lambda: sum(int(n) for n in re.findall(r"(\d+) the database no longer lets in", con.output()))
            wait_for(lambda: ended() == 2, timeout=15, what="the sweep ending both sessions")
            for role in roles:
                wait_for(lambda: console_connections(role) == 0, what=f"{roles[role]}: the connection closed")
                # the session is gone: an unknown one, not one ended by this request
                status, headers, _ = con.get("/queue", headers={"Cookie": f"mf_session={cookies[role]}"})
                self.assertEqual((status, headers.get("location")), (303, "/signin"), roles[role])
        finally:
            con.stop()

    def test_decisions_record_the_signed_in_role(self) -> None:
        self.assertNotIn('name="display_name"', CONSOLE.get("/signin")[2])
        approve = CLUSTER.queued(BOB, uniq("Approved by ana, whatever she types."), actor="op:bob")
        reject = CLUSTER.queued(BOB, uniq("Rejected by ana."), actor="op:bob")
        edit = CLUSTER.queued(BOB, uniq("Edited by ana."), actor="op:bob")
        # a display name posted anyway (another reviewer's) is ignored
        status, cookie, _ = CONSOLE.sign_in(ANA, CLUSTER.passwords[ANA], fields={"display_name": BOB})
        self.assertEqual(status, 303)
        token = CONSOLE.csrf(cookie)
        CONSOLE.post("/tenant", {"csrf": token, "tenant": TENANT}, cookie)
        for cid, action, fields in ((approve, "approve", {}), (reject, "reject", {"reason": "no"}),
                                    (edit, "edit", {"text": uniq("Edited by ana, now.")})):
            status, headers, _ = CONSOLE.post(f"/candidates/{cid}/{action}", {"csrf": token, **fields}, cookie)
            self.assertEqual((status, headers.get("location")), (303, "/queue"), action)
        with CLUSTER.admin() as c:
            rows = c.execute("SELECT candidate_id, decided_by, decided_by_role FROM memory_fabric.decisions "
                             "WHERE candidate_id = ANY(%s) ORDER BY 1", ([approve, reject, edit],)).fetchall()
        self.assertEqual(sorted(rows), sorted((cid, ANA, ANA) for cid in (approve, reject, edit)))
        page = CONSOLE.get("/queue", headers={"Cookie": f"mf_session={cookie}"})[2]
        self.assertNotIn(BOB, re.search(r'<span class="role".*?</span>', page, re.S).group(0))  # type: ignore[union-attr]
        CONSOLE.sign_out(cookie)

    def test_superusers_and_bypassrls_roles_may_not_sign_in(self) -> None:
        CLUSTER.make_role("mfc_super", member=None, attributes="SUPERUSER")
        CLUSTER.make_role("mfc_bypass", tenants=(TENANT,), attributes="BYPASSRLS")
        for role, what in (("mfc_super", "it is a superuser"), ("mfc_bypass", "BYPASSRLS")):
            with self.subTest(role=role):
                status, cookie, page = CONSOLE.sign_in(role, CLUSTER.passwords[role])
                self.assertEqual((status, cookie), (401, None))
                self.assertIn(f"role &quot;{role}&quot; may not sign in to the console", page)
                self.assertIn(what, page)
                self.assertIn('data-sqlstate="42501"', page)
        # the socket scripts/console.sh used, which trusts the superuser: any password was let in
        con = h.Console(CLUSTER, dsn=f"host={CLUSTER.base} port={CLUSTER.port} dbname={DB}")
        try:
            status, cookie, page = con.sign_in("postgres", "not the password")
            self.assertEqual((status, cookie), (401, None))
            self.assertIn("role &quot;postgres&quot; may not sign in to the console: it is a superuser", page)
            self.assertEqual(con.get("/admin/consents")[1].get("location"), "/signin")
        finally:
            con.stop()


if __name__ == "__main__":
    unittest.main()
