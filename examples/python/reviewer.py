#!/usr/bin/env python3
"""The operator's side: a reviewer process that listens on channel memory_fabric, shows the
human review queue of its tenant, and approves or rejects what waits there.

  python3 reviewer.py CONNINFO --tenant acme --as op:ana             # interactive: a / r / s
  python3 reviewer.py CONNINFO --tenant acme --as op:ana --list      # print the queue and exit
  python3 reviewer.py CONNINFO --tenant acme --as op:ana --approve mc_...
  python3 reviewer.py CONNINFO --tenant acme --as op:ana --reject mc_... --reason "wrong depot"
  python3 reviewer.py CONNINFO --tenant acme --as op:ana --watch --decide approve --max 1 --timeout 30

The role needs memory_fabric_reviewer and a grant for the tenant. A notification says only that
something was queued (any connected role may listen), so the process reads the queue itself,
through row-level security, for the tenant it is pinned to. Four eyes: the role (and the actor
name) that captured a candidate cannot approve it.
"""
import argparse
import sys
import time

import psycopg

ap = argparse.ArgumentParser()
ap.add_argument("conninfo")
ap.add_argument("--tenant", required=True)
ap.add_argument("--as", dest="reviewer", required=True, help="the reviewer's name, recorded on the decision")
ap.add_argument("--list", action="store_true")
ap.add_argument("--approve")
ap.add_argument("--reject")
ap.add_argument("--reason", default="rejected by a reviewer")
ap.add_argument("--watch", action="store_true", help="wait for new queue entries")
ap.add_argument("--decide", choices=["approve", "reject", "ask"], default="ask")
ap.add_argument("--max", type=int, default=0, help="stop after this many decisions (0: no limit)")
ap.add_argument("--timeout", type=float, default=0, help="stop watching after this many seconds (0: never)")
a = ap.parse_args()

conn = psycopg.connect(a.conninfo, autocommit=True)
conn.execute("SELECT set_config('memory_fabric.tenant_id', %s, false)", (a.tenant,))

QUEUE = ("SELECT candidate_id, proposed_tier, reason, actor, proposed_text, evidence_refs::text, enqueued_at "
         "FROM memory_fabric.review_queue WHERE tenant_id = %s ORDER BY enqueued_at, candidate_id")


def queue():
    return conn.execute(QUEUE, (a.tenant,)).fetchall()


def show(rows):
    if not rows:
        print("queue: empty")
    for cid, tier, reason, actor, text, refs, at in rows:
        print(f"{cid}  {tier:8} {reason or '':16} by {actor or '-':12} {at:%Y-%m-%d %H:%M:%S}  {text!r}  evidence {refs}")


def decide(cid, action):
    try:
        if action == "approve":
            mid = conn.execute("SELECT id FROM memory_fabric.approve(%s, %s)", (cid, a.reviewer)).fetchone()[0]
            print(f"approved {cid}: promoted as {mid}")
        else:
            conn.execute("SELECT memory_fabric.reject(%s, %s, %s)", (cid, a.reviewer, a.reason))
            print(f"rejected {cid}")
        return True
    except psycopg.Error as e:  # e.g. 42501 four eyes, 55000 decided meanwhile by someone else
        print(f"{cid}: {e.sqlstate} {e.diag.message_primary}", file=sys.stderr)
        return False


if a.approve or a.reject:
    sys.exit(0 if decide(a.approve or a.reject, "approve" if a.approve else "reject") else 1)
if a.list:
    show(queue())
    sys.exit(0)

decided, seen = 0, set()
conn.execute("LISTEN memory_fabric")
deadline = time.monotonic() + a.timeout if a.timeout else None


def handle_queue():
    global decided
    for row in queue():
        cid = row[0]
        if cid in seen:
            continue
        seen.add(cid)
        show([row])
        action = a.decide
        if action == "ask":
            answer = input("approve, reject or skip? [a/r/s] ").strip().lower()
            action = {"a": "approve", "r": "reject"}.get(answer)
        if action and decide(cid, action):
            decided += 1
        if a.max and decided >= a.max:
            return True
    return False


done = handle_queue()
if a.watch and not done:
    print("listening on channel memory_fabric", flush=True)
while a.watch and not done:
    if deadline and time.monotonic() >= deadline:
        print("timeout", file=sys.stderr)
        break
    wait = 1.0 if deadline is None else max(0.1, min(1.0, deadline - time.monotonic()))
    for n in conn.notifies(timeout=wait, stop_after=1):
        print(f"notification: {n.payload}", flush=True)
    done = handle_queue()
sys.exit(0 if (not a.max or decided >= a.max) else 1)
