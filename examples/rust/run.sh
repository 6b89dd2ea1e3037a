#!/usr/bin/env bash
# The Rust example: an agent's memory (src/main.rs) with the postgres and pgvector crates, the
# versions pinned in Cargo.toml and Cargo.lock, built in its own target directory.
# Run by ../run.sh, which sets PGHOST, PGPORT, PGDATABASE and PGUSER (the agent's role).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CARGO_TARGET_DIR=${MF_EXAMPLE_BUILD:-$here/target}/target
cargo build --locked --quiet --manifest-path "$here/Cargo.toml"
"$CARGO_TARGET_DIR/debug/memory_agent"
