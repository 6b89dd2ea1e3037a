#!/usr/bin/env bash
# The Python examples: an agent's memory (memory_agent.py) and the operator's reviewer
# (reviewer.py), with the dependencies pinned in requirements.txt, in their own virtualenv.
# Run by ../run.sh, which sets PGHOST, PGPORT, PGDATABASE, PGUSER, MF_EXAMPLE_REVIEWER and
# MF_EXAMPLE_WRITER.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${MF_EXAMPLE_BUILD:-$here/.build}/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
py=$venv/bin/python

# 1. The agent: capture with its own embedding, review, promote, recall by vector.
"$py" "$here/memory_agent.py" "user=$PGUSER"

# 2. The operator: a reviewer listening on memory_fabric approves the durable fact that an
# operator-sourced capture puts in the human queue, as soon as its notification arrives.
log=${MF_EXAMPLE_BUILD:-$here/.build}/reviewer.log
"$py" "$here/reviewer.py" "user=$MF_EXAMPLE_REVIEWER" --tenant acme --as op:ana --watch --decide approve --max 1 \
  --timeout 30 > "$log" 2>&1 & rpid=$!
# wait until the reviewer is listening
for _ in $(seq 300); do grep -q '^listening' "$log" && break; sleep 0.1; done
psql_app() { "$MF_PG_BINDIR/psql" -XAtq -v ON_ERROR_STOP=1 -c "SELECT set_config('memory_fabric.tenant_id', 'acme', false)" -c "$1" | tail -1; }
# an operator's fact is written by a reviewer role (an agent cannot claim source operator), and
# approved by another (four eyes compares roles)
psql_writer() { PGUSER=$MF_EXAMPLE_WRITER psql_app "$1"; }
cid=$(psql_writer "SELECT id FROM memory_fabric.capture_memory('acme', 'Refunds above 500 euros need a manager sign-off.', 'operator', 'INTERNAL', actor => 'op:writer')")
[ "$(psql_app "SELECT reviewer FROM memory_fabric.review_candidate('$cid')")" = human ]
rc=0; wait $rpid || rc=$?
cat "$log"
[ $rc = 0 ] || { echo "reviewer.py exited with $rc"; exit 1; }
grep -q '^notification: ' "$log" || { echo "reviewer.py saw no notification"; exit 1; }
grep -q "^approved $cid: promoted as pm_" "$log" || { echo "reviewer.py did not approve $cid"; exit 1; }
[ "$(psql_app "SELECT tier FROM memory_fabric.recall('acme', NULL) WHERE candidate_id = '$cid'")" = durable ] \
  || { echo "the approved memory is not recalled"; exit 1; }
echo "reviewer.py approved $cid on its notification; recall returns it"

# 3. The same reviewer from the command line: --list shows the queue, --reject decides.
cid2=$(psql_writer "SELECT id FROM memory_fabric.capture_memory('acme', 'Returns go to the Porto depot.', 'operator', 'INTERNAL', actor => 'op:writer')")
[ "$(psql_app "SELECT reviewer FROM memory_fabric.review_candidate('$cid2')")" = human ]
listed=$("$py" "$here/reviewer.py" "user=$MF_EXAMPLE_REVIEWER" --tenant acme --as op:ana --list)
echo "$listed"
grep -q "^$cid2  durable  operator_source  by op:writer .*'Returns go to the Porto depot.'" <<<"$listed" \
  || { echo "reviewer.py --list does not show $cid2"; exit 1; }
"$py" "$here/reviewer.py" "user=$MF_EXAMPLE_REVIEWER" --tenant acme --as op:ana --reject "$cid2" --reason "wrong depot"
# decided once: a second decision is refused with the extension's SQLSTATE, and the exit code says so
if "$py" "$here/reviewer.py" "user=$MF_EXAMPLE_REVIEWER" --tenant acme --as op:ana --approve "$cid2" 2> "$log"; then
  echo "approving a rejected candidate succeeded"; exit 1
fi
cat "$log"
grep -q "^$cid2: 55000 candidate \"$cid2\" was rejected" "$log" || { echo "unexpected refusal"; exit 1; }
[ -z "$("$py" "$here/reviewer.py" "user=$MF_EXAMPLE_REVIEWER" --tenant acme --as op:ana --list | grep "$cid2")" ] \
  || { echo "$cid2 is still queued after its rejection"; exit 1; }
echo "reviewer.py listed $cid2, rejected it, and the queue no longer shows it"
