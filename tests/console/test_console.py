"""The operator's console in a real browser: headless Chromium (Debian's chromium and
chromium-driver) driven by Selenium, against the console binary and a throwaway PostgreSQL
instance of this module's own (harness.py), signed in as ordinary roles with their passwords.

    MF_CONSOLE_BIN=target/debug/memory-fabric-console MF_PG_BINDIR=/usr/lib/postgresql/15/bin \\
        MF_STATE=target/mf python -m unittest discover -s tests/console -p 'test_*.py'

(tests/console/run.sh does this in the Python side's pinned virtual environment.)

Every test works with candidates of its own: one browser is shared, its cookies cleared before
each test. After each test the browser's console must hold no script error and no
Content-Security-Policy violation.
"""

from __future__ import annotations

import http.server
import re
import secrets
import threading
import time
import unittest
import urllib.parse
from typing import Any, Callable

from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import harness as h
from harness import ADMIN, AGENT, ANA, BOB, OTHER, TENANT

CLUSTER = h.Cluster()
CONSOLE: h.Console
D: Any = None


def setUpModule() -> None:
    global CONSOLE, D
    unittest.addModuleCleanup(CLUSTER.stop_and_remove)
    CLUSTER.start()
    CONSOLE = h.Console(CLUSTER)
    unittest.addModuleCleanup(CONSOLE.stop)
    D = h.browser()
    unittest.addModuleCleanup(h.quit_browser, D)


def css(sel: str) -> Any:
    return D.find_element(By.CSS_SELECTOR, sel)


def csss(sel: str) -> list[Any]:
    return D.find_elements(By.CSS_SELECTOR, sel)


def wait(cond: Callable[[Any], Any], timeout: float = 10, what: str = "") -> Any:
    """Waits for cond to hold; a WebDriver error on the way (an element of a page being replaced)
    is a "not yet"."""
    return WebDriverWait(D, timeout, poll_frequency=0.05, ignored_exceptions=(WebDriverException,)).until(cond, what)


def loaded() -> bool:
    return D.execute_script("return document.readyState") == "complete"


def at(p: str, what: str = "") -> None:
    """Waits for the page at path p, loaded."""
    wait(lambda d: path() == p and loaded(), what=what or f"the page {p}")


def path() -> str:
    return urllib.parse.urlsplit(D.current_url).path


def go(p: str) -> None:
    D.get(CONSOLE.url + p)


def title() -> str:
    """The page's own title, without the console's suffix."""
    return D.title.removesuffix(" · memory_fabric console")


def main_text() -> str:
    return css("main").text


def sign_in(role: str, tenant: str | None = TENANT, password: str | None = None) -> None:
    go("/signin")
    css("#signin input[name=role]").send_keys(role)
    css("#signin input[name=password]").send_keys(CLUSTER.passwords[role] if password is None else password)
    click_and_load(css("#signin-submit"), "the page after signing in")
    if tenant is not None and path() == "/tenant":
        click_and_load(css(f"ul#tenants button.tenant[name=tenant][value='{tenant}']"), "the page after choosing a tenant")
    if tenant is not None:
        at("/queue")


def click_and_load(el: Any, what: str) -> None:
    """Clicks something that loads another page, and waits for that page (chromedriver's
    staleness check can fail on a node of a document being replaced: a new document is told by
    a mark the old one had)."""
    D.execute_script("window.mfOldPage = true")
    el.click()
    wait(lambda d: d.execute_script("return window.mfOldPage === undefined") and loaded(), what=what)


def session_cookie() -> str:
    c = D.get_cookie("mf_session")
    assert c is not None, "no session cookie"
    return c["value"]


def post(p: str, fields: dict[str, str], cookie: str | None = None, **headers: str) -> tuple[int, dict[str, str], str]:
    """A form post from outside the browser, with the browser's session cookie."""
    hs = {"Content-Type": "application/x-www-form-urlencoded", **headers}
    if cookie:
        hs["Cookie"] = f"mf_session={cookie}"
    return CONSOLE.request("POST", p, body=urllib.parse.urlencode(fields), headers=hs)


def stage(cid: str) -> str:
    with CLUSTER.admin() as c:
        return c.execute("SELECT stage FROM memory_fabric.review_status(%s)", (cid,)).fetchone()[0]


def uniq(text: str) -> str:
    """A text no other test uses (review would call a second capture of it a duplicate)."""
    return f"{text} [{secrets.token_hex(3)}]"


def assert_no_alert(t: unittest.TestCase) -> None:
    try:
        a = D.switch_to.alert
    except NoAlertPresentException:
        return
    text = a.text
    a.dismiss()
    t.fail(f"an alert opened: {text!r}")


class Console(unittest.TestCase):
    def setUp(self) -> None:
        # the last test's session ends (its database connection with it: the console caps them
        # per role), then the browser forgets everything
        D.get(CONSOLE.url + "/healthz")
        left = D.get_cookie("mf_session")
        if left:
            CONSOLE.sign_out(left["value"])
        D.get("about:blank")
        D.execute_cdp_cmd("Network.clearBrowserCookies", {})
        D.get_log("browser")  # drop what earlier tests left

    def tearDown(self) -> None:
        bad = [e["message"] for e in D.get_log("browser")
               if e["source"] == "security" or "Content Security Policy" in e["message"] or "Uncaught" in e["message"]]
        self.assertEqual(bad, [], "script errors or CSP violations in the browser's console")

    # ------------------------------------------------------------------------------------------
    # the flows of issue 32

    def test_reviewer_approves_a_candidate_and_it_is_recalled(self) -> None:
        text = uniq("Refunds above 500 EUR need a manager sign-off.")
        cid = CLUSTER.queued(BOB, text, actor="op:bob", evidence_refs='["policy:refunds-v3", "web:forum.example/t/9"]')
        sign_in(ANA, TENANT)
        self.assertEqual(title(), "Queue")
        row = css(f"#queue tbody#queue-rows tr.queue-row[data-candidate-id='{cid}']")
        self.assertIn(text, row.text)
        self.assertIn("durable", row.text)
        self.assertIn("operator_source", row.text)
        row.find_element(By.CSS_SELECTOR, "td.text a").click()
        at(f"/candidates/{cid}")
        self.assertEqual(css(".side.candidate p.text").text, text)
        self.assertIn("waiting_for_human", css("p.stage").text)
        # each evidence ref with its provenance class, as the provenance gate gives it
        refs = {li.find_element(By.TAG_NAME, "code").text: li.find_element(By.CSS_SELECTOR, "span.prov")
                for li in csss("ul#evidence li")}
        self.assertEqual(sorted(refs), ["policy:refunds-v3", "web:forum.example/t/9"])
        self.assertEqual(refs["policy:refunds-v3"].get_attribute("class"), "prov trusted")
        self.assertEqual(refs["web:forum.example/t/9"].get_attribute("class"), "prov untrusted")
        self.assertIn("untrusted", refs["web:forum.example/t/9"].text)
        css("#approve-notes").send_keys("checked with finance")
        css("form#approve-form button#approve").click()
        at("/queue")
        flash = css("p#flash").text
        m = re.search(r"promoted as memory (pm_\w+)", flash)
        self.assertTrue(m, flash)
        self.assertIn(f"Approved {cid}", flash)
        memory = m.group(1)
        self.assertEqual(csss(f"tr.queue-row[data-candidate-id='{cid}']"), [])
        self.assertEqual(stage(cid), "promoted")
        # recalled: by the agent's own role, through psycopg
        self.assertIn(memory, CLUSTER.recall(AGENT, max_recalls=1000))
        with CLUSTER.admin() as c:
            self.assertEqual(c.execute("SELECT action, decided_by, decided_by_role FROM memory_fabric.decisions "
                                       "WHERE candidate_id = %s", (cid,)).fetchone(), ("approve", ANA, ANA))
        # and on the memory page: its timeline, and what recall would say
        go(f"/memories/{memory}")
        stages = [li.find_element(By.CSS_SELECTOR, "strong.stage").text for li in csss("ol#timeline li.step")]
        for s in ("captured", "reviewed", "decided", "promoted"):
            self.assertIn(s, stages)
        css("#explain-form input[name=intent]").send_keys("support")
        css("#explain-form button#explain").click()
        wait(lambda d: csss("#explained"))
        self.assertEqual(css("#explained").get_attribute("class"), "explained visible")
        self.assertIn("Visible", css("#explained").text)

    def test_approving_ones_own_capture_is_not_offered_and_refused(self) -> None:
        cid = CLUSTER.queued(ANA, uniq("Escalations go to the duty manager."), actor="op:ana")
        sign_in(ANA, TENANT)
        go(f"/candidates/{cid}")
        # no Approve for the role that captured it: a disabled button and the four-eyes rule
        self.assertEqual(csss("#approve-form") + csss("#approve"), [])
        note = css("#four-eyes")
        self.assertFalse(note.find_element(By.CSS_SELECTOR, "button").is_enabled())
        self.assertIn("Four eyes: this candidate was captured by you", note.text)
        self.assertIn("another reviewer must", note.text)
        self.assertNotIn("a approve", css("p.keys").text)
        # reject and edit stay; the a key does nothing
        self.assertTrue(csss("#reject-form") and csss("#edit-form"))
        css("h1").click()
        ActionChains(D).send_keys("a").perform()
        time.sleep(0.3)
        self.assertEqual(path(), f"/candidates/{cid}")
        self.assertEqual(stage(cid), "waiting_for_human")
        # an approval posted anyway, from the page with its token, is the database's refusal
        D.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], {method: 'POST', credentials: 'same-origin', redirect: 'manual',
                                 body: new URLSearchParams({csrf: arguments[1]})}).then(() => done(), () => done());
        """, f"/candidates/{cid}/approve", css("#reject-form input[name=csrf]").get_attribute("value"))
        go(f"/candidates/{cid}")
        box = css("div#error.error[role=alert]")
        self.assertEqual(box.get_attribute("data-sqlstate"), "42501")
        self.assertTrue(box.find_element(By.CSS_SELECTOR, "p.explain").text.startswith("Four eyes"), box.text)
        self.assertIn("cannot approve", box.find_element(By.CSS_SELECTOR, "p.message").text)
        self.assertEqual(stage(cid), "waiting_for_human")
        # another reviewer is offered Approve
        self.setUp()
        sign_in(BOB, TENANT)
        go(f"/candidates/{cid}")
        self.assertTrue(csss("#approve-form #approve"))
        self.assertEqual(csss("#four-eyes"), [])

    def test_a_contradiction_is_shown_side_by_side(self) -> None:
        entity = f"customer:{secrets.token_hex(3)}"
        old_text, new_text = (f"Customer {entity} prefers {w} for invoices." for w in ("email", "paper"))
        m, _ = CLUSTER.capture(AGENT, old_text, source="agent", entity=entity, predicate="invoice_channel",
                               value='"email"')
        memory = CLUSTER.call(AGENT, "SELECT id FROM memory_fabric.promote(%s)", m)[0][0]
        cid, r = CLUSTER.capture(BOB, new_text, entity=entity, predicate="invoice_channel", value='"paper"',
                                 actor="op:bob")
        self.assertEqual(r[:2], ("contradicts", "human"))
        sign_in(ANA, TENANT)
        row = css(f"tr.queue-row[data-candidate-id='{cid}']")
        self.assertIn("contradicts", row.text)
        go(f"/candidates/{cid}")
        left, right = css(".sides .side.candidate"), css(".sides .side.related")
        self.assertEqual(left.find_element(By.CSS_SELECTOR, "p.text").text, new_text)
        self.assertEqual(right.find_element(By.CSS_SELECTOR, "p.text").text, old_text)
        self.assertEqual([e.text for e in left.find_elements(By.TAG_NAME, "mark")], ["paper"])
        self.assertEqual([e.text for e in right.find_elements(By.TAG_NAME, "mark")], ["email"])
        self.assertIn("Contradicts memory", right.find_element(By.TAG_NAME, "h2").text)
        link = right.find_element(By.CSS_SELECTOR, f"h2 a[href='/memories/{memory}']")
        # side by side: the two boxes share a row
        self.assertEqual(left.location["y"], right.location["y"])
        self.assertLess(left.location["x"] + left.size["width"], right.location["x"])
        click_and_load(link, "the memory's page")
        self.assertEqual(path(), f"/memories/{memory}")
        self.assertIn("promoted", [e.text for e in csss("ol#timeline li.step strong.stage")])

    def test_another_tenants_candidate_is_not_found_like_an_unknown_id(self) -> None:
        theirs = CLUSTER.queued(ANA, uniq("The other tenant's secret."), tenant=OTHER, actor="op:ana")
        unknown = "mc_" + "x" * (len(theirs) - 3)
        for role in (BOB, ANA):  # BOB holds no grant for OTHER; ANA does, but works in TENANT
            with self.subTest(role=role):
                self.setUp()
                sign_in(role, TENANT)
                pages = []
                for cid in (theirs, unknown):
                    status, _, _ = CONSOLE.get(f"/candidates/{cid}", headers={"Cookie": f"mf_session={session_cookie()}"})
                    go(f"/candidates/{cid}")
                    pages.append((status, title(), css("h1").text, main_text().replace(cid, "ID")))
                self.assertEqual(pages[0], pages[1])
                self.assertEqual(pages[0][:3], (404, "Not found", "Not found"))
                self.assertNotIn("secret", D.page_source)
                # its history too
                hist = []
                for cid in (theirs, unknown):
                    go(f"/memories/{cid}")
                    hist.append((title(), main_text().replace(cid, "ID")))
                self.assertEqual(hist[0], hist[1])
                self.assertEqual(hist[0][0], "Not found")
                # and approving it by its id (with the session's token)
                go("/queue")
                token = css("input[name=csrf]").get_attribute("value")
                posts = []
                for cid in (theirs, unknown):
                    status, _, body = post(f"/candidates/{cid}/approve", {"csrf": token}, session_cookie())
                    posts.append((status, body.replace(cid, "ID")))
                self.assertEqual(posts[0], posts[1])
                self.assertEqual(posts[0][0], 404)
                go("/queue")
                self.assertEqual(csss("div#error"), [])  # nothing left to show on the next page
        self.assertEqual(stage(theirs), "waiting_for_human")

    def test_a_post_without_the_csrf_token_is_refused(self) -> None:
        cid = CLUSTER.queued(BOB, uniq("Invoices are sent on the 1st."), actor="op:bob")
        sign_in(ANA, TENANT)
        cookie = session_cookie()
        go(f"/candidates/{cid}")
        token = css("#approve-form input[name=csrf]").get_attribute("value")
        self.assertRegex(token, r"^[0-9a-f]{64}$")
        # with the browser's cookie, from outside the page: no token, a wrong one
        for fields in ({"notes": "x"}, {"csrf": "0" * 64, "notes": "x"}, {"csrf": token[:-1], "notes": "x"}):
            status, _, body = post(f"/candidates/{cid}/approve", fields, cookie)
            self.assertEqual(status, 403, body)
            self.assertIn("<title>Refused", body)
        # the right token from another site (Origin) is refused too
        status, _, body = post(f"/candidates/{cid}/approve", {"csrf": token}, cookie, Origin="http://evil.example")
        self.assertEqual(status, 403, body)
        # from the page itself, with fetch and the session cookie, without the token
        r = D.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], {method: 'POST', credentials: 'same-origin',
                                 body: new URLSearchParams({notes: 'x'})})
              .then(async r => done([r.status, await r.text()]), e => done([0, String(e)]));
        """, f"/candidates/{cid}/approve")
        self.assertEqual(r[0], 403, r[1])
        self.assertIn("<h1>Refused</h1>", r[1])
        # a sign-out without the token does not sign out
        self.assertEqual(post("/signout", {}, cookie)[0], 403)
        self.assertEqual(stage(cid), "waiting_for_human")
        # and the page's own form, with its token, works
        go(f"/candidates/{cid}")
        css("#reject-reason").send_keys("duplicate of the finance wiki")
        css("#reject").click()
        at("/queue")
        self.assertIn(f"Rejected {cid}", css("p#flash").text)
        self.assertEqual(stage(cid), "rejected")

    def test_hostile_text_shows_as_text(self) -> None:
        script = "<script>alert('xss');window.mfXss='script';document.title='pwned'</script>"
        img = "<img src=x onerror=\"window.mfXss='img';alert('xss')\">"
        text = uniq(f"{script} {img} & \"quotes\"")
        cid = CLUSTER.queued(BOB, text, actor="<b>op:bob</b>")
        sign_in(ANA, TENANT)
        row = css(f"tr.queue-row[data-candidate-id='{cid}']")
        self.assertEqual(row.find_element(By.CSS_SELECTOR, "td.text").text, text)
        self.assertIn("<b>op:bob</b>", row.text)
        self.assertEqual(row.find_elements(By.CSS_SELECTOR, "img, script, b"), [])
        self.assert_inert("Queue")
        go(f"/candidates/{cid}")
        self.assertEqual(css(".side.candidate p.text").text, text)
        self.assertEqual(csss("main img, main script, main b"), [])
        self.assertEqual(css("#edit-form textarea[name=text]").get_attribute("value"), text)
        self.assert_inert(f"Candidate {cid}")
        # the same through the live queue, whose rows the script builds
        go("/queue")
        D.execute_script("window.mfMarker = 'kept'")
        wait(lambda d: css("#live-status").text.startswith("live"), what="the live queue")
        cid2 = CLUSTER.queued(BOB, uniq(f"{img} {script}"), actor="op:bob")
        row = wait(lambda d: csss(f"tr.queue-row.new[data-candidate-id='{cid2}']"), what="the new row")[0]
        self.assertIn(img, row.text)
        self.assertEqual(row.find_elements(By.CSS_SELECTOR, "img, script"), [])
        self.assertEqual(D.execute_script("return window.mfMarker"), "kept")
        self.assert_inert("Queue")
        # history: the capture's detail holds the text too
        go(f"/memories/{cid}")
        self.assertEqual(csss("main img, main script"), [])
        self.assert_inert(f"History {cid}")

    def assert_inert(self, page_title: str) -> None:
        time.sleep(0.2)  # an image's error handler would have run by now
        assert_no_alert(self)
        self.assertIsNone(D.execute_script("return window.mfXss === undefined ? null : window.mfXss"))
        self.assertEqual(title(), page_title)

    def test_an_agent_role_cannot_sign_in_or_approve(self) -> None:
        cid = CLUSTER.queued(BOB, uniq("Agents may not approve this."), actor="op:bob")
        sign_in(AGENT, None)
        self.assertEqual(path(), "/signin")
        box = css("div#error.error[role=alert]")
        self.assertEqual(box.get_attribute("data-sqlstate"), "42501")
        self.assertIn(f'Role "{AGENT}" may not review', box.find_element(By.CSS_SELECTOR, "p.message").text)
        self.assertIn("memory_fabric_reviewer", box.find_element(By.CSS_SELECTOR, "p.detail").text)
        self.assertIsNone(D.get_cookie("mf_session"))
        go("/queue")
        self.assertEqual(path(), "/signin")
        # a wrong password: PostgreSQL's refusal, as it says it
        sign_in(BOB, None, password="not-" + CLUSTER.passwords[BOB])
        self.assertEqual(css("div#error").get_attribute("data-sqlstate"), "28P01")
        self.assertIn("password authentication failed", css("div#error p.message").text)
        self.assertIsNone(D.get_cookie("mf_session"))
        # a forged session cookie, with or without a made-up token, approves nothing
        forged = secrets.token_hex(32)
        for fields in ({"csrf": forged}, {"csrf": secrets.token_hex(32)}, {}):
            status, headers, _ = post(f"/candidates/{cid}/approve", fields, forged)
            self.assertEqual((status, headers.get("location")), (303, "/signin"))
        D.add_cookie({"name": "mf_session", "value": forged, "path": "/"})
        go(f"/candidates/{cid}")
        self.assertEqual(path(), "/signin")
        self.assertEqual(stage(cid), "waiting_for_human")
        # the database is the control: the agent's own approve is refused there too
        with self.assertRaisesRegex(Exception, "permission denied for function approve"):
            CLUSTER.call(AGENT, "SELECT memory_fabric.approve(%s, 'agent')", cid)

    def test_the_live_queue_shows_a_new_candidate_without_a_reload(self) -> None:
        sign_in(BOB, TENANT)  # one tenant: chosen at once
        D.execute_script("window.mfMarker = 'kept'")
        wait(lambda d: css("#live-status").text.startswith("live"), what="the live queue")
        before = int(css("#queue-count").text.split()[0])
        text = uniq("Customers in Norway pay in NOK.")
        cid = CLUSTER.queued(ANA, text, actor="op:ana")
        row = wait(lambda d: csss(f"tbody#queue-rows tr.queue-row.new[data-candidate-id='{cid}']"),
                   what="the new row")[0]
        self.assertEqual(row.find_element(By.CSS_SELECTOR, "td.text").text, text)
        self.assertEqual(row.find_element(By.CSS_SELECTOR, "td.text a").get_attribute("href"),
                         f"{CONSOLE.url}/candidates/{cid}")
        self.assertEqual(D.execute_script("return window.mfMarker"), "kept")
        self.assertTrue(css("#live-status").text.startswith("live · "), css("#live-status").text)
        wait(lambda d: int(css("#queue-count").text.split()[0]) == before + 1, what="the count")
        self.assertTrue(css("#queue-empty").get_attribute("hidden"))
        # another tenant's capture adds nothing; a decision elsewhere marks the row gone
        CLUSTER.queued(ANA, uniq("Elsewhere."), tenant=OTHER, actor="op:ana")
        CLUSTER.call(ANA, "SELECT memory_fabric.reject(%s, 'op:ana', 'not for us')", cid)
        cid2 = CLUSTER.queued(ANA, uniq("Wakes the page."), actor="op:ana")
        wait(lambda d: csss(f"tr.queue-row[data-candidate-id='{cid2}']"), what="the second row")
        wait(lambda d: "gone" in css(f"tr.queue-row[data-candidate-id='{cid}']").get_attribute("class"))
        self.assertEqual(D.execute_script("return window.mfMarker"), "kept")
        # the new row opens like the others, from the keyboard too
        rows = [r.get_attribute("data-candidate-id") for r in csss("tbody#queue-rows tr.queue-row")]
        ActionChains(D).send_keys("j" * (rows.index(cid2) + 1)).perform()
        self.assertEqual(css("tr.queue-row.selected").get_attribute("data-candidate-id"), cid2)
        ActionChains(D).send_keys(Keys.ENTER).perform()
        at(f"/candidates/{cid2}")

    # ------------------------------------------------------------------------------------------
    # the rest an operator meets

    def test_keyboard_shortcuts_on_a_candidate(self) -> None:
        first = CLUSTER.queued(BOB, uniq("Keyboard one."), actor="op:bob")
        second = CLUSTER.queued(BOB, uniq("Keyboard two."), actor="op:bob")
        third = CLUSTER.queued(BOB, uniq("Keyboard three."), actor="op:bob")
        sign_in(ANA, TENANT)
        go(f"/candidates/{first}")
        # s: skip to the next candidate waiting
        next_href = css("a#skip").get_attribute("href")
        ActionChains(D).send_keys("s").perform()
        wait(lambda d: D.current_url == next_href and loaded())
        self.assertEqual(path(), f"/candidates/{second}")
        # keys typed in a field are text, not shortcuts
        css("#approve-notes").send_keys("a note with a, r and s")
        self.assertEqual(path(), f"/candidates/{second}")
        self.assertEqual(stage(second), "waiting_for_human")
        # r: to the reject reason; type it, Enter
        css("h1").click()
        ActionChains(D).send_keys("r").perform()
        self.assertEqual(D.switch_to.active_element.get_attribute("id"), "reject-reason")
        self.assertEqual(css("#reject-reason").get_attribute("value"), "")
        ActionChains(D).send_keys("out of date" + Keys.ENTER).perform()
        at("/queue")
        self.assertIn(f"Rejected {second}", css("p#flash").text)
        self.assertEqual(stage(second), "rejected")
        # a: approve
        go(f"/candidates/{third}")
        ActionChains(D).send_keys("a").perform()
        at("/queue")
        self.assertIn(f"Approved {third}", css("p#flash").text)
        self.assertEqual(stage(third), "promoted")
        self.assertEqual(stage(first), "waiting_for_human")

    def test_sign_out_ends_the_session(self) -> None:
        def connections() -> int:
            with CLUSTER.admin() as c:
                return c.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (BOB,)).fetchone()[0]

        before = connections()
        sign_in(BOB, TENANT)
        wait(lambda d: css("#live-status").text.startswith("live"), what="the live queue")
        self.assertEqual(connections(), before + 2)  # the session's, and the live queue's
        cookie = session_cookie()
        self.assertEqual(CONSOLE.get("/queue", headers={"Cookie": f"mf_session={cookie}"})[0], 200)
        css("header.top form[action='/signout'] button").click()
        at("/signin")
        self.assertIn("Signed out.", main_text())
        self.assertIsNone(D.get_cookie("mf_session"))
        status, headers, _ = CONSOLE.get("/queue", headers={"Cookie": f"mf_session={cookie}"})
        self.assertEqual((status, headers.get("location")), (303, "/signin"))
        D.add_cookie({"name": "mf_session", "value": cookie, "path": "/"})
        go("/queue")
        self.assertEqual(path(), "/signin")
        self.assertTrue(csss("#signin"))
        # a session ended elsewhere (another tab): the live page goes to the sign-in page by itself
        sign_in(BOB, TENANT)
        wait(lambda d: css("#live-status").text.startswith("live"), what="the live queue")
        token = css("input[name=csrf]").get_attribute("value")
        self.assertEqual(post("/signout", {"csrf": token}, session_cookie())[0], 303)
        at("/signin")
        self.assertTrue(csss("#signin"))
        # the sessions' connections are closed
        deadline = time.monotonic() + 5
        while connections() != before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(connections(), before)

    def test_edit_before_approving_and_the_queue_filters(self) -> None:
        cid = CLUSTER.queued(BOB, uniq("Refunds above 500 EUR need sign-off."), actor="op:bob")
        sign_in(ANA, TENANT)
        go(f"/candidates/{cid}")
        self.assertFalse(css("#edit-form").is_displayed())
        css("details.edit summary").click()
        area = css("#edit-form textarea[name=text]")
        area.clear()
        edited = uniq("Refunds above 800 EUR need a manager's sign-off.")
        area.send_keys(edited)
        css("#edit-form input[name=notes]").send_keys("threshold raised in May")
        css("#edit-form button#edit").click()
        at("/queue")
        flash = css("p#flash").text
        m = re.search(r"^Edited (mc_\w+): the new candidate (mc_\w+) was reviewed \((\w+), by (\w+)\)\.$", flash)
        self.assertTrue(m, flash)
        self.assertEqual(m.group(1), cid)
        new = m.group(2)
        with CLUSTER.admin() as c:
            self.assertEqual(c.execute("SELECT text FROM memory_fabric.candidates WHERE id = %s", (new,)).fetchone()[0],
                             edited)
            self.assertEqual(c.execute("SELECT action, decided_by FROM memory_fabric.decisions WHERE candidate_id = %s",
                                       (cid,)).fetchone(), ("edit", ANA))
        self.assertEqual(csss(f"tr.queue-row[data-candidate-id='{cid}']"), [])
        # the filters: a GET form, bookmarkable
        css("form.filters select[name=reason] option[value='operator_source']").click()
        css("form.filters button").click()
        wait(lambda d: "reason=operator_source" in D.current_url and loaded())
        rows = csss("tr.queue-row")
        self.assertTrue(rows)
        for r in rows:
            self.assertIn("operator_source", r.text)
        self.assertFalse(css("#queue-empty").is_displayed())
        css("form.filters select[name=age] option[value='7d']").click()
        css("form.filters button").click()
        wait(lambda d: "age=7d" in D.current_url and loaded())
        self.assertEqual(csss("tr.queue-row"), [])
        self.assertTrue(css("#queue-empty").is_displayed())
        self.assertIn("0 match the filters", css("#queue-count").text)
        css("form.filters select[name=tier] option[value='working']").click()
        self.assertEqual(css("form.filters select[name=age] option[value='7d']").get_attribute("selected"), "true")

    def test_the_tenant_chooser_lists_only_granted_tenants(self) -> None:
        sign_in(ANA, None)
        self.assertEqual(path(), "/tenant")
        self.assertEqual([b.get_attribute("value") for b in csss("ul#tenants button.tenant[name=tenant]")],
                         sorted([TENANT, OTHER]))
        self.assertEqual(csss("#nav-queue"), [])
        css(f"ul#tenants button.tenant[value='{OTHER}']").click()
        at("/queue")
        self.assertIn(f"tenant {OTHER}", css("h1").text)
        self.assertTrue(csss("#nav-queue") and csss("#nav-metrics"))
        self.setUp()
        sign_in(BOB, None)
        self.assertEqual(path(), "/queue")  # one grant: chosen at once
        go("/tenant")
        self.assertEqual([b.get_attribute("value") for b in csss("ul#tenants button.tenant")], [TENANT])
        # a tenant not granted, forced into the form, is refused by the server
        D.execute_script("document.querySelector('button.tenant').value = arguments[0]", OTHER)
        css("button.tenant").click()
        box = wait(lambda d: csss("div#error"))[0]
        self.assertEqual(path(), "/tenant")
        self.assertEqual(box.get_attribute("data-sqlstate"), "42501")
        self.assertIn(f'no grant for tenant "{OTHER}"', box.text)
        go("/queue")
        self.assertIn(f"tenant {TENANT}", css("h1").text)

    def test_metrics_renders_four_charts_for_an_admin(self) -> None:
        # something for each chart: an auto promotion, a contradiction, a rejection, the queue
        entity = f"customer:{secrets.token_hex(3)}"
        m, _ = CLUSTER.capture(AGENT, uniq("Prefers email for invoices."), source="agent", entity=entity,
                               predicate="invoice_channel", value='"email"')
        CLUSTER.call(AGENT, "SELECT memory_fabric.promote(%s)", m)
        _, r = CLUSTER.capture(AGENT, uniq("Prefers paper invoices."), source="agent", entity=entity,
                               predicate="invoice_channel", value='"paper"')
        self.assertEqual(r[0], "contradicts")
        rejected = CLUSTER.queued(BOB, uniq("To be rejected."), actor="op:bob")
        CLUSTER.call(ANA, "SELECT memory_fabric.reject(%s, 'op:ana', 'wrong depot')", rejected)
        CLUSTER.queued(BOB, uniq("Waits."), actor="op:bob")
        sign_in(ADMIN, TENANT)
        css("#nav-metrics").click()
        at("/metrics")
        for chart in ("#chart-queue-depth", "#chart-auto-promotion", "#chart-contradictions", "#chart-rejections"):
            svg = css(f"{chart} svg.chart")
            self.assertTrue(svg.is_displayed(), chart)
            self.assertGreater(svg.size["width"], 200, chart)
        self.assertTrue(csss("#chart-queue-depth svg polyline.series"))
        self.assertIn("block", css("#chart-contradictions").text)
        self.assertIn("wrong depot", css("#chart-rejections").text)
        self.assertIn("auto", css("#chart-auto-promotion").text)
        facts = css("#metrics-view dl.facts").text
        self.assertIn("queue depth", facts)
        # the window
        css("form.filters select[name=days] option[value='30']").click()
        css("form.filters button").click()
        wait(lambda d: "days=30" in D.current_url and loaded())
        self.assertIn("last 30 days", css("#chart-queue-depth figcaption").text)

    def test_metrics_for_a_reviewer_shows_no_error(self) -> None:
        CLUSTER.queued(ANA, uniq("Counted in the queue."), actor="op:ana")
        sign_in(BOB, TENANT)
        css("#nav-metrics").click()
        at("/metrics")
        self.assertEqual(csss("main .error") + csss("main [role=alert]"), [])
        note = css("#metrics-view #metrics-admin-only.note")
        self.assertIn("is for admins", note.text)
        self.assertIn("memory_fabric_admin", note.text)
        self.assertEqual(csss("#metrics-view dl.facts"), [])
        for chart in ("#chart-queue-depth", "#chart-auto-promotion", "#chart-contradictions", "#chart-rejections"):
            self.assertTrue(csss(f"{chart} figcaption"), chart)
        self.assertTrue(css("#chart-queue-depth svg polyline.series").is_displayed())

    def test_a_page_on_another_port_cannot_sign_the_browser_in(self) -> None:
        # login CSRF as the review did it: a page of another port of this host (the same site)
        # sets its own mf_login cookie, which the browser then sends to the console too, and
        # posts the sign-in form with the attacker's role and password
        token = secrets.token_hex(32)
        page = f"""<!doctype html><title>elsewhere</title>
            <form method="post" action="{CONSOLE.url}/signin">
              <input name="login" value="{token}"><input name="role" value="{BOB}">
              <input name="password" value="{CLUSTER.passwords[BOB]}"></form>
            <script>document.forms[0].submit()</script>""".encode()

        class Attacker(http.server.BaseHTTPRequestHandler):
            timeout = 2  # a connection Chromium opens ahead and leaves idle ends soon

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Set-Cookie", f"mf_login={token}; Path=/")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            D.get(f"http://127.0.0.1:{server.server_address[1]}/")
            wait(lambda d: urllib.parse.urlsplit(D.current_url).port == CONSOLE.port and loaded(),
                 what="the form posted to the console")
            self.assertEqual(title(), "Refused")
            self.assertEqual(css("h1").text, "Refused")
            self.assertIsNone(D.get_cookie("mf_session"))
            go("/queue")
            self.assertEqual(path(), "/signin")
        finally:
            server.shutdown()
            server.server_close()
        # the console's own form, in the same browser, still signs in
        sign_in(BOB, TENANT)
        self.assertEqual(title(), "Queue")
        D.get_log("browser")  # the attacker page's own console messages are not the console's

    def test_admin_pages_are_hidden_from_a_reviewer_and_erasure_is_confirmed(self) -> None:
        sign_in(BOB, TENANT)
        self.assertEqual(csss("#nav-admin"), [])
        for p in ("/admin", "/admin/consents", "/admin/erasure", "/admin/policy"):
            go(p)
            self.assertEqual((title(), css("h1").text), ("Admins only", "Admins only"), p)
            self.assertEqual(CONSOLE.get(p, headers={"Cookie": f"mf_session={session_cookie()}"})[0], 403, p)
        go("/queue")
        token = css("input[name=csrf]").get_attribute("value")
        status, _, _ = post("/admin/erasure", {"csrf": token, "step": "erase", "user_id": "u", "reason": "r",
                                               "confirm": "u"}, session_cookie())
        self.assertEqual(status, 403)

        subject = f"cus_{secrets.token_hex(3)}"
        cid, _ = CLUSTER.capture(AGENT, uniq(f"{subject} lives in Oslo."), source="agent", user_id=subject)
        self.setUp()
        sign_in(ADMIN, TENANT)
        css("#nav-admin").click()
        at("/admin/consents")
        self.assertTrue(csss("table#consents"))
        go("/admin/policy")
        self.assertIn("In force", css("#policy-in-force").text)
        self.assertTrue(csss("table#policy-versions tbody tr"))
        go("/admin/erasure")
        css("#erasure-form input[name=user_id]").send_keys(subject)
        css("#erasure-form input[name=reason]").send_keys("GDPR art. 17 request")
        css("#erasure-form button[type=submit]").click()
        wait(lambda d: csss("form#erasure-confirm"))
        self.assertIn(subject, main_text())
        # a mistyped subject erases nothing
        css("#erasure-confirm input#erasure-confirm-user").send_keys(subject + "x")
        css("#erasure-confirm button#erase").click()
        box = wait(lambda d: csss("div#error"))[0]
        self.assertIn("does not match", box.text)
        self.assertEqual(path(), "/admin/erasure")
        with CLUSTER.admin() as c:
            self.assertFalse(c.execute("SELECT erased_at IS NOT NULL FROM memory_fabric.candidates WHERE id = %s",
                                       (cid,)).fetchone()[0])
        css("#erasure-form input[name=user_id]").send_keys(subject)
        css("#erasure-form input[name=reason]").send_keys("GDPR art. 17 request")
        css("#erasure-form button[type=submit]").click()
        wait(lambda d: csss("form#erasure-confirm"))
        css("#erasure-confirm input#erasure-confirm-user").send_keys(subject)
        css("#erasure-confirm button#erase").click()
        flash = wait(lambda d: csss("p#flash"))[0].text
        self.assertIn(f"Erased {subject}: 1 candidates", flash)
        with CLUSTER.admin() as c:
            self.assertTrue(c.execute("SELECT erased_at IS NOT NULL FROM memory_fabric.candidates WHERE id = %s",
                                      (cid,)).fetchone()[0])

    def test_a_database_restart_is_shown_then_recovered_from(self) -> None:
        sign_in(BOB, TENANT)
        wait(lambda d: css("#live-status").text.startswith("live"), what="the live queue")
        D.execute_script("window.mfMarker = 'kept'")
        CLUSTER.pg_ctl("stop")
        try:
            wait(lambda d: "reconnecting" in css("#live-status").text, what="the live queue noticing")
            self.assertEqual(D.execute_script("return window.mfMarker"), "kept")
            status, headers, body = CONSOLE.get("/queue", headers={"Cookie": f"mf_session={session_cookie()}"})
            self.assertEqual((status, headers.get("refresh")), (503, "5"), body)
            go("/queue")
            self.assertEqual(title(), "Database unavailable")
            self.assertIn("reconnects by itself", css("div#unavailable[role=alert]").text)
        finally:
            CLUSTER.pg_ctl("start")
        # the page retries by itself (Refresh: 5) and the queue is back, live again
        wait(lambda d: title() == "Queue", timeout=15, what="the page coming back")
        D.execute_script("window.mfMarker = 'kept'")
        wait(lambda d: css("#live-status").text.startswith("live"), what="the live queue again")
        cid = CLUSTER.queued(ANA, uniq("After the restart."), actor="op:ana")
        wait(lambda d: csss(f"tr.queue-row.new[data-candidate-id='{cid}']"), what="a row after the restart")
        self.assertEqual(D.execute_script("return window.mfMarker"), "kept")
        # the session survived: no second sign-in was needed
        self.assertTrue(csss("header.top form[action='/signout']"))


if __name__ == "__main__":
    unittest.main()
