"""Screenshots of the console's main pages for the documentation (docs/console/*.png), taken in
headless Chromium at 1280x900 against a throwaway instance filled with a small, plausible
tenant. Run on demand, not in CI:

    . clients/python/tests/env.sh && cargo build -p memory-fabric-console && \\
        "$MF_PY" tests/console/screenshots.py [OUTPUT_DIR]

It writes signin.png, queue.png, candidate.png (a contradiction side by side, the differing words
marked), memory.png (a memory's timeline and what recall would say), metrics.png and policy.png,
and fails if one is over 200 KB.
"""

from __future__ import annotations

import os
import sys
import time
import unittest
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.expected_conditions import staleness_of  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

import harness as h  # noqa: E402
from harness import ADMIN, AGENT, ANA, BOB  # noqa: E402

WIDTH, HEIGHT, MAX_BYTES = 1280, 900, 200_000
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(h.ROOT, "docs", "console")


def fill(c: h.Cluster) -> dict[str, str]:
    """A tenant with memories, a queue of several kinds, a contradiction, decisions."""
    ids: dict[str, str] = {}

    def promoted(text: str, **kw: Any) -> str:
        cid, _ = c.capture(AGENT, text, source="agent", **kw)
        return c.call(AGENT, "SELECT id FROM memory_fabric.promote(%s)", cid)[0][0]

    ids["email"] = promoted("Customer cus_42 prefers email for invoices.", user_id="cus_42",
                            entity="customer:cus_42", predicate="invoice_channel", value='"email"',
                            evidence_refs='["chat:2026-11-20#14"]')
    promoted("Orders to Norway ship from the Oslo depot.", evidence_refs='["wiki:logistics/nordics"]')
    promoted("Customer cus_7 is on the enterprise plan.", user_id="cus_7", evidence_refs='["crm:acct/7"]')
    # decided ones, for the memory page and the charts
    hours = c.queued(BOB, "Support hours are 8:00 to 18:00 CET on weekdays.", actor="op:bob",
                     evidence_refs='["policy:support-hours-2026"]')
    ids["hours"] = c.call(ANA, "SELECT id FROM memory_fabric.approve(%s, 'op:ana', 'matches the handbook')", hours)[0][0]
    wrong = c.queued(BOB, "Refunds are paid out within 3 days.", actor="op:bob")
    c.call(ANA, "SELECT memory_fabric.reject(%s, 'op:ana', 'wrong: 14 days by policy')", wrong)
    # the queue
    c.queued(BOB, "Refunds above 500 EUR need a manager's sign-off.", actor="op:bob",
             evidence_refs='["policy:refunds-v3", "ticket:8790"]')
    ids["contradiction"] = c.queued(
        BOB, "Customer cus_42 prefers paper invoices sent by post.", actor="op:bob", user_id="cus_42",
        entity="customer:cus_42", predicate="invoice_channel", value='"paper"',
        evidence_refs='["ticket:8812", "web:forum.example/t/311"]')
    _, r = c.capture(AGENT, "The enterprise plan includes phone support around the clock.", source="agent",
                     evidence_refs='["web:vendor-forum/thread/311", "tool:web_search"]')
    assert r is not None and r[1] == "human", r  # untrusted evidence waits for a human
    c.queued(ADMIN, "Customers in Norway are invoiced in NOK.", actor="op:lena", evidence_refs='["finance:memo/41"]')
    c.queued(BOB, "Escalations after 18:00 go to the duty manager's phone.", actor="op:bob")
    # a policy version of the tenant's own
    c.call(ADMIN, "SELECT memory_fabric.set_policy(%s, %s::jsonb, 'slower decay for support memories')", c.tenant,
           '{"recall": {"half_life_days": 45}}')
    return ids


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    cluster = h.Cluster(tenant="acme", other="globex")
    unittest.addModuleCleanup(cluster.stop_and_remove)
    try:
        cluster.start()
        ids = fill(cluster)
        console = h.Console(cluster)
        unittest.addModuleCleanup(console.stop)
        d = h.browser(WIDTH, HEIGHT)
        unittest.addModuleCleanup(h.quit_browser, d)
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})

        def go(p: str) -> None:
            d.get(console.url + p)

        def until(cond: Any) -> None:
            # a WebDriver error on the way (a node of a page being replaced) is a "not yet"
            WebDriverWait(d, 10, poll_frequency=0.05, ignored_exceptions=(WebDriverException,)).until(cond)

        def shot(name: str) -> None:
            d.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
            time.sleep(0.2)
            f = os.path.join(OUT, f"{name}.png")
            d.save_screenshot(f)
            size = os.path.getsize(f)
            print(f"{f}: {size} bytes")
            if size > MAX_BYTES:
                raise SystemExit(f"{f} is over {MAX_BYTES} bytes")

        def sign_in(role: str) -> None:
            d.execute_cdp_cmd("Network.clearBrowserCookies", {})
            go("/signin")
            d.find_element(By.NAME, "role").send_keys(role)
            d.find_element(By.NAME, "password").send_keys(cluster.passwords[role])
            b = d.find_element(By.ID, "signin-submit")
            b.click()
            until(staleness_of(b))
            if d.current_url.endswith("/tenant"):
                b = d.find_element(By.CSS_SELECTOR, f"button.tenant[value='{cluster.tenant}']")
                b.click()
                until(staleness_of(b))

        go("/signin")
        d.find_element(By.NAME, "role").send_keys(ANA)
        shot("signin")

        sign_in(ANA)
        until(lambda _: d.find_element(By.ID, "live-status").text.startswith("live"))
        shot("queue")

        go(f"/candidates/{ids['contradiction']}")
        shot("candidate")

        go(f"/memories/{ids['hours']}?explain=1&user=cus_42&intent=support.billing&classes=PUBLIC,INTERNAL")
        shot("memory")

        sign_in(ADMIN)
        go("/metrics?days=1")
        shot("metrics")
        go("/admin/policy")
        shot("policy")
        return 0
    finally:
        unittest.case.doModuleCleanups()


if __name__ == "__main__":
    sys.exit(main())
