#!/usr/bin/env bash
# The upgrade check. First, that no released script was edited: the install scripts kept in
# tests/upgrade/released/ and every upgrade script into a released version are pinned by
# tests/upgrade/released/SHA256SUMS. Then, for every released version
# (tests/upgrade/released/memory_fabric--V.sql): install it,
# add data through the pipeline, ALTER EXTENSION ... UPDATE to the current version, and compare
# the schema with a fresh install of the current version (tests/upgrade/describe.sql), then check
# the data is still there and still recalled. A released version equal to the current one is
# installed under a side name and compared as it is: so CI fails when the schema changes without
# a new version and an upgrade script.
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
extdir=$("$MF_PG_CONFIG" --sharedir)/extension
current=$(awk -F'"' '/^version =/{print $2; exit}' "$MF_ROOT/Cargo.toml")
out=$MF_BUILD/upgrade
rm -rf "$out"; mkdir -p "$out"
fail=0
q() { mf_psql -q -X "$@"; }
fresh_db() { q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"; }

rel=$MF_ROOT/tests/upgrade/released
if edited=$(cd "$rel" && sha256sum -c --quiet SHA256SUMS 2>&1); then
  unpinned=""
  for f in "$rel"/memory_fabric--*.sql "$MF_ROOT"/sql/memory_fabric--*--*.sql; do
    name=$(basename "$f"); to=${name%.sql}; to=${to##*--}
    [ -f "$rel/memory_fabric--$to.sql" ] || continue  # an upgrade into a version not released yet
    case $f in "$rel"/*) entry=$name ;; *) entry=../../../sql/$name ;; esac
    # listed is enough: sha256sum -c above checked every listed file
    awk '{print $2}' "$rel/SHA256SUMS" | grep -qxF "$entry" || unpinned="$unpinned $name"
  done
  if [ -z "$unpinned" ]; then
    echo "ok - no released script was edited"
  else
    echo "not ok - released scripts not pinned in tests/upgrade/released/SHA256SUMS:$unpinned"; fail=1
  fi
else
  echo "not ok - a released script was edited:"; echo "$edited"; fail=1
  echo "hint: a released script never changes; write the change as sql/memory_fabric--$current--<new>.sql"
fi

fresh_db mf_upgrade_fresh
q -d mf_upgrade_fresh -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE"
q -d mf_upgrade_fresh -f "$MF_ROOT/tests/upgrade/describe.sql" > "$out/fresh.txt"

for script in "$MF_ROOT"/tests/upgrade/released/memory_fabric--*.sql; do
  v=$(basename "$script" .sql); v=${v#memory_fabric--}
  if [ "$v" = "$current" ]; then
    as=$v-released
  else
    as=$v
  fi
  mf_sudo cp "$script" "$extdir/memory_fabric--$as.sql"
  db=mf_upgrade_${v//./_}
  fresh_db "$db"
  q -d "$db" -c "SET client_min_messages = warning" -c "CREATE EXTENSION vector" \
    -c "CREATE EXTENSION memory_fabric VERSION '$as'"
  # Data as the old version stored it. Written with plain SQL on columns every released schema has:
  # the library installed now is the new one, and its functions need the new schema (run
  # ALTER EXTENSION memory_fabric UPDATE after installing new binaries, as for any extension).
  q -d "$db" -c "
    INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
                                          content_hash, policy_version)
    VALUES ('mc_up', 't_up', 'agent', 'Written before the upgrade.', 'PUBLIC',
            array_fill(0.05::real, ARRAY[384])::vector, 'memory_fabric/hash-384-v1', repeat('a', 64), 1);
    INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
    VALUES ('rv_up', 't_up', 'mc_up', 'pending_promotion', 'semantic', 0.5, 'auto', 1);
    INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
                                               priority, embedding, embedding_model, content_hash, promoted_by)
    SELECT 'pm_up', c.id, 'rv_up', c.tenant_id, c.text, c.classification, c.source, 'semantic', 0.5, c.embedding,
           c.embedding_model, c.content_hash, 'auto' FROM memory_fabric.candidates c WHERE c.id = 'mc_up';
    -- a contradiction review blocked before 0.21.0 (reviewer auto): nobody was asked
    INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
                                          content_hash, policy_version)
    VALUES ('mc_up_blk', 't_up', 'agent', 'Contradicting what was written before.', 'PUBLIC',
            array_fill(0.05::real, ARRAY[384])::vector, 'memory_fabric/hash-384-v1', repeat('d', 64), 1);
    INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, contradicts_id, contradiction_resolution,
                                       proposed_tier, priority_score, reviewer, policy_version)
    VALUES ('rv_up_blk', 't_up', 'mc_up_blk', 'contradicts', 'pm_up', 'block', 'semantic', 0.5, 'auto', 1);
    -- a memory whose vector's squares underflow, as capture took it before 0.16.0
    INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
                                          content_hash, policy_version)
    VALUES ('mc_up_tiny', 't_up_tiny', 'agent', 'A vector too small to compare.', 'PUBLIC',
            array_fill(1e-38::real, ARRAY[3])::vector, 'old/tiny-3', repeat('b', 64), 1);
    INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
    VALUES ('rv_up_tiny', 't_up_tiny', 'mc_up_tiny', 'pending_promotion', 'semantic', 0.5, 'auto', 1);
    INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
                                               priority, embedding, embedding_model, content_hash, promoted_by)
    SELECT 'pm_up_tiny', c.id, 'rv_up_tiny', c.tenant_id, c.text, c.classification, c.source, 'semantic', 0.5, c.embedding,
           c.embedding_model, c.content_hash, 'auto' FROM memory_fabric.candidates c WHERE c.id = 'mc_up_tiny';
    -- a tenant's policy with the hashing model's thresholds of 0.1.0 … 0.7.0, and one chosen by hand
    INSERT INTO memory_fabric.policies (tenant_id, version, body) VALUES
      ('t_up_old', 901, '{\"thresholds\": {\"memory_fabric/hash-384-v1\": {\"duplicate\": 0.90, \"contradiction\": 0.60}}}'),
      ('t_up_own', 902, '{\"thresholds\": {\"memory_fabric/hash-384-v1\": {\"duplicate\": 0.97, \"contradiction\": 0.70}}}')" > /dev/null
  # An erasure as forget_subject() made it before 0.16.0 (from 0.3.0 on, which added erased_at):
  # content tombstoned, its hash, evidence refs, the notes, event text, recalls' query text and
  # consent evidence about the subject left; a recall after the erasure keeps its query text.
  erasable=$(q -At -d "$db" -c "SELECT count(*) FROM pg_catalog.pg_attribute
    WHERE attrelid = 'memory_fabric.candidates'::regclass AND attname = 'erased_at'")
  if [ "$erasable" = 1 ]; then
    q -d "$db" -c "
      INSERT INTO memory_fabric.consents (id, tenant_id, subject, purpose, basis, evidence_refs)
      VALUES ('cns_up_gone', 't_up_gone', 'u_gone', 'support', 'consent', '[\"call: SSN 123-45-6789\"]');
      INSERT INTO memory_fabric.recall_log (id, tenant_id, role_name, user_id, classification_allowed, query_text,
                                            max_recalls, memory_ids)
      VALUES ('rl_up_gone', 't_up_gone', 'agent', 'u_gone', '{PUBLIC}', 'is 123-45-6789 hers', 5, '{}');
      INSERT INTO memory_fabric.candidates (id, tenant_id, user_id, source, text, evidence_refs, classification,
                                            embedding_model, content_hash, policy_version, erased_at)
      VALUES ('mc_up_gone', 't_up_gone', 'u_gone', 'agent', '[erased]', '[\"ssn:123-45-6789\"]', 'PUBLIC',
              'memory_fabric/hash-384-v1', repeat('c', 64), 1, clock_timestamp());
      INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
      VALUES ('rv_up_gone', 't_up_gone', 'mc_up_gone', 'pending_promotion', 'semantic', 0.5, 'auto', 1);
      INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, text, evidence_refs,
                                                 classification, source, tier, priority, embedding_model, content_hash,
                                                 promoted_by, retracted_at, retracted_by, retraction_reason, erased_at)
      VALUES ('pm_up_gone', 'mc_up_gone', 'rv_up_gone', 't_up_gone', 'u_gone', '[erased]', '[\"ssn:123-45-6789\"]',
              'PUBLIC', 'agent', 'semantic', 0.5, 'memory_fabric/hash-384-v1', repeat('c', 64), 'auto',
              clock_timestamp(), 'op', 'her SSN is not 123-45-6789', clock_timestamp());
      INSERT INTO memory_fabric.decisions (id, tenant_id, candidate_id, review_id, action, decided_by, notes)
      VALUES ('dc_up_gone', 't_up_gone', 'mc_up_gone', 'rv_up_gone', 'approve', 'op', 'checked 123-45-6789');
      INSERT INTO memory_fabric.events (id, tenant_id, kind, subject_id, actor, payload) VALUES
        ('ev_up_gone1', 't_up_gone', 'memory.retracted', 'pm_up_gone', 'op', '{\"reason\": \"not 123-45-6789\"}'),
        ('ev_up_gone2', 't_up_gone', 'memory.erased', 'subject:u_gone', 'admin', '{\"reason\": \"request\"}');
      INSERT INTO memory_fabric.recall_log (id, tenant_id, role_name, user_id, classification_allowed, query_text,
                                            max_recalls, memory_ids)
      VALUES ('rl_up_later', 't_up_gone', 'agent', 'u_gone', '{PUBLIC}', 'asked after', 5, '{}')" > /dev/null
  fi
  if [ "$as" != "$current" ] && [ "$as" = "$v" ]; then
    q -d "$db" -c "ALTER EXTENSION memory_fabric UPDATE"
  fi
  got=$(q -At -d "$db" -c "SELECT extversion FROM pg_extension WHERE extname = 'memory_fabric'")
  q -d "$db" -f "$MF_ROOT/tests/upgrade/describe.sql" > "$out/from-$v.txt"
  if [ "$as" = "$current-released" ] || [ "$got" = "$current" ]; then
    if [ "$as" = "$current-released" ]; then what="the released $v has the same schema as this build"
    else what="$v → $got gives the same schema as a fresh $current"; fi
    if diff -u "$out/fresh.txt" "$out/from-$v.txt" > "$out/from-$v.diff"; then
      echo "ok - $what"
    else
      echo "not ok - $what: it does not"; head -60 "$out/from-$v.diff"; fail=1
      echo "hint: a released schema never changes; bump the version in Cargo.toml and add sql/memory_fabric--$current--<new>.sql"
    fi
  else
    echo "not ok - $v did not update to $current (at $got): is an upgrade script missing?"; fail=1
  fi
  thresholds=$(q -At -d "$db" -c "SELECT string_agg(p.tenant_id || '=' || (p.body -> 'thresholds')::text, ' ' ORDER BY p.tenant_id)
    FROM (SELECT DISTINCT ON (tenant_id) tenant_id, body FROM memory_fabric.policies
          WHERE tenant_id LIKE 't_up_%' ORDER BY tenant_id, version DESC) p")
  want='t_up_old={"memory_fabric/hash-384-v1": {"duplicate": 0.30, "contradiction": 0.30}, "sentence-transformers/all-MiniLM-L6-v2": {"duplicate": 0.53, "contradiction": 0.53}} t_up_own={"memory_fabric/hash-384-v1": {"duplicate": 0.97, "contradiction": 0.70}, "sentence-transformers/all-MiniLM-L6-v2": {"duplicate": 0.53, "contradiction": 0.53}}'
  # 0.8.0 gave the built-in models new thresholds, and its upgrade moved policies still on the old
  # ones; from 0.8.0 on, an upgrade leaves every policy as it was written.
  if [ "$(printf '%s\n' "$v" 0.8.0 | sort -V | head -1)" = 0.8.0 ]; then
    want='t_up_old={"memory_fabric/hash-384-v1": {"duplicate": 0.90, "contradiction": 0.60}} t_up_own={"memory_fabric/hash-384-v1": {"duplicate": 0.97, "contradiction": 0.70}}'
  fi
  if [ "$as" = "$current-released" ] || [ "$thresholds" = "$want" ]; then
    echo "ok - policies written at $v have the thresholds they should after the upgrade"
  else
    echo "not ok - policies written at $v: $thresholds"; fail=1
  fi
  # 0.16.0 changed the provenance gate's defaults, and its upgrade writes them into the default
  # ('*') policy still on 0.15.0's; a policy without the section has them anyway
  gate=$(q -At -d "$db" -c "SELECT coalesce(p.body -> 'provenance' -> 'untrusted' ? 'tool:fetch'
                                             AND NOT p.body -> 'provenance' -> 'untrusted' ? 'tool:', true)
    FROM memory_fabric.policies p WHERE p.tenant_id = '*' ORDER BY p.version DESC LIMIT 1")
  if [ "$gate" = t ]; then echo "ok - the default policy at $v has today's provenance gate after the upgrade"
  else echo "not ok - the default policy at $v keeps 0.15.0's provenance gate"; fail=1; fi
  # the update to 0.16.0 retracts a live memory whose vector cannot be compared (from 0.16.0 on,
  # capture refuses such a vector, and no later update looks for one)
  tiny=$(q -At -d "$db" -c "SELECT retracted_by || ': ' || (SELECT count(*) FROM memory_fabric.events e
      WHERE e.subject_id = m.id AND e.kind = 'memory.retracted' AND e.payload ->> 'reason' = 'unusable_vector')
    FROM memory_fabric.promoted_memory m WHERE m.id = 'pm_up_tiny'")
  before_016=0
  [ "$v" != 0.16.0 ] && [ "$(printf '%s\n' "$v" 0.16.0 | sort -V | head -1)" = "$v" ] && before_016=1
  if [ $before_016 = 0 ] || [ "$tiny" = "memory_fabric 0.16.0: 1" ]; then
    echo "ok - a memory written at $v with a vector that cannot be compared is retracted by the upgrade"
  else echo "not ok - the memory written at $v with a vector that cannot be compared: $tiny"; fail=1; fi
  # the update to 0.16.0 finishes that erasure as 0.16.0 makes one
  if [ "$erasable" = 1 ] && [ $before_016 = 1 ]; then
    left=$(q -At -d "$db" -c "
      SELECT (SELECT count(*) FROM memory_fabric.candidates r WHERE r.tenant_id = 't_up_gone' AND r::text LIKE '%123-45%')
           + (SELECT count(*) FROM memory_fabric.promoted_memory r WHERE r.tenant_id = 't_up_gone' AND r::text LIKE '%123-45%')
           + (SELECT count(*) FROM memory_fabric.decisions r WHERE r.tenant_id = 't_up_gone' AND r::text LIKE '%123-45%')
           + (SELECT count(*) FROM memory_fabric.events r WHERE r.tenant_id = 't_up_gone' AND r::text LIKE '%123-45%')
           + (SELECT count(*) FROM memory_fabric.recall_log r WHERE r.tenant_id = 't_up_gone' AND r::text LIKE '%123-45%')
           + (SELECT count(*) FROM memory_fabric.consents r WHERE r.tenant_id = 't_up_gone' AND r::text LIKE '%123-45%')
           + (SELECT count(*) FROM memory_fabric.candidates WHERE id = 'mc_up_gone' AND content_hash = repeat('c', 64))
           + (SELECT count(*) FROM memory_fabric.promoted_memory WHERE id = 'pm_up_gone' AND content_hash = repeat('c', 64))
           + (SELECT count(*) FROM memory_fabric.recall_log WHERE id = 'rl_up_later' AND query_text IS DISTINCT FROM 'asked after')")
    digest=$(q -At -d "$db" -c "SELECT c.content_hash = memory_fabric._erased_digest(repeat('c', 64))
                                       AND m.content_hash = c.content_hash AND m.retraction_reason = '[erased]'
      FROM memory_fabric.candidates c JOIN memory_fabric.promoted_memory m ON m.candidate_id = c.id WHERE c.id = 'mc_up_gone'")
    if [ "$left" = 0 ] && [ "$digest" = t ]; then
      echo "ok - an erasure made at $v is finished by the upgrade: keyed digests, no text about the subject left"
    else echo "not ok - the erasure made at $v after the upgrade: $left rows with what it should have taken, digest $digest"; fail=1; fi
  fi
  # 0.21.0: a contradiction blocked by an older review waits for a person: in the review queue, and
  # waiting_for_human to review_status()
  blk=$(q -At -d "$db" -c "SELECT (SELECT count(*) FROM memory_fabric.review_queue WHERE candidate_id = 'mc_up_blk')
                                  || ' ' || (SELECT stage FROM memory_fabric.review_status('mc_up_blk'))")
  if [ "$blk" = "1 waiting_for_human" ]; then
    echo "ok - a contradiction blocked at $v waits for a person after the upgrade"
  else echo "not ok - the contradiction blocked at $v after the upgrade: queued, stage: $blk"; fail=1; fi
  kept=$(q -At -d "$db" -c "SELECT count(*) FROM memory_fabric.recall('t_up', NULL, classification_allowed => ARRAY['PUBLIC'])")
  if [ "$kept" = 1 ]; then echo "ok - data written at $v is recalled after the upgrade"; else echo "not ok - data written at $v: recalled $kept rows"; fail=1; fi
  q -d postgres -c "DROP DATABASE $db"
  [ "$as" = "$v" ] || mf_sudo rm -f "$extdir/memory_fabric--$as.sql"
done
q -d postgres -c "DROP DATABASE mf_upgrade_fresh"
exit $fail
