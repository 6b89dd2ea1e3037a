#!/usr/bin/env bash
# One client of the crash test: calls the load functions one transaction at a time and appends
# each result to its acknowledgement file only after psql returned it, i.e. after the commit was
# acknowledged. Stops when the server goes away.
#   client.sh CONNSTR ACKFILE SEED
set -u
conn=$1 ack=$2 seed=$3
RANDOM=$seed
while :; do
  t=$((RANDOM % 10)) u=$((RANDOM % 5)) topic=$((RANDOM % 30)) ch=$((RANDOM % 4)) sys=$((RANDOM % 5))
  if [ $((RANDOM % 10)) = 0 ]; then q="SELECT 'retract ' || load.retract($t)"
  else q="SELECT 'pipeline ' || load.pipeline($t, $u, $topic, $ch, $sys)"; fi
  out=$(psql -XAtq -d "$conn" -c "$q" 2>/dev/null) || exit 0
  printf '%s\n' "$out" >> "$ack"
done
