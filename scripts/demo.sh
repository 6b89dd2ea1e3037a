#!/usr/bin/env bash
# Sets up everything, builds and installs the extension, starts the local cluster and
# walks the demo (demo/demo.sql) in a fresh database.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bash "$MF_ROOT/scripts/setup.sh"
cd "$MF_ROOT"
mf_log "building and installing the extension"
mkdir -p "$MF_BUILD/logs"
bash "$MF_ROOT/scripts/install.sh"
bash "$MF_ROOT/scripts/cluster.sh" start
mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS memory_fabric_demo" -c "CREATE DATABASE memory_fabric_demo"
mf_psql -d memory_fabric_demo -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE"
mf_psql -d memory_fabric_demo -f "$MF_ROOT/demo/demo.sql"
mf_log "done: the cluster is still running; connect with: bash scripts/cluster.sh psql -d memory_fabric_demo"
