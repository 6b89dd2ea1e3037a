# Shared settings for the memory_fabric scripts. Sourced, never run.
# Every value can be overridden from the environment.
MF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MF_PG_MAJOR=${MF_PG_MAJOR:-15}
MF_BUILD=${MF_BUILD:-$MF_ROOT/target/mf}
# The system's PostgreSQL: setup.sh installs it, and the demo and scripts/console.sh install
# memory_fabric into it (scripts/install.sh: staged, then renamed into place).
MF_SYS_PG_BINDIR=${MF_SYS_PG_BINDIR:-/usr/lib/postgresql/$MF_PG_MAJOR/bin}
MF_SYS_PG_CONFIG=${MF_SYS_PG_CONFIG:-$MF_SYS_PG_BINDIR/pg_config}
MF_PGXS_TEST=${MF_PGXS_TEST:-/usr/lib/postgresql/$MF_PG_MAJOR/lib/pgxs/src/test}

# True when every existing ancestor of $1 can be traversed by other users, so that the
# postgres system user (which runs the server when we are root) can reach it.
mf_world_traversable() {
  local d=$1 perm
  while [ "$d" != / ] && [ -n "$d" ]; do
    if [ -d "$d" ]; then
      perm=$(stat -c %a "$d")
      [ $(( 0$perm & 1 )) = 1 ] || return 1
    fi
    d=$(dirname "$d")
  done
}

# Where clusters, their sockets and logs, and the tests' installation trees live: the ignored
# build area, unless we are root in a checkout the postgres user cannot reach (then /tmp).
if [ -z "${MF_BASE:-}" ]; then
  if [ "$(id -u)" != 0 ] || mf_world_traversable "$MF_BUILD"; then
    MF_BASE=$MF_BUILD
  else
    MF_BASE=/tmp/memory_fabric-$(printf %s "$MF_ROOT" | cksum | cut -d' ' -f1)
  fi
fi

# MF_TESTING=1 (scripts/test.sh, the test and bench runners) selects the tests' own installation
# tree and cluster, so that no test ever writes into the system's PostgreSQL directories or
# replaces a library a server outside the tests has loaded: $MF_BASE/inst holds a copy of
# PostgreSQL's programs under the system's paths, which PostgreSQL relocates to find its lib and
# share directories in the tree (scripts/tree.sh); its cluster is $MF_BASE/test on port 55433.
# Otherwise: the system's PostgreSQL and the demo's cluster, $MF_BASE on port 55432.
if [ "${MF_TESTING:-0}" = 1 ]; then
  MF_TREE=${MF_TREE:-$MF_BASE/inst}
  MF_PG_BINDIR=${MF_PG_BINDIR:-$MF_TREE$MF_SYS_PG_BINDIR}
  MF_STATE=${MF_STATE:-$MF_BASE/test}
  MF_PGPORT=${MF_PGPORT:-55433}
else
  MF_PG_BINDIR=${MF_PG_BINDIR:-$MF_SYS_PG_BINDIR}
  MF_STATE=${MF_STATE:-$MF_BASE}
  MF_PGPORT=${MF_PGPORT:-55432}
fi
MF_PG_CONFIG=${MF_PG_CONFIG:-$MF_PG_BINDIR/pg_config}
MF_PGDATA=${MF_PGDATA:-$MF_STATE/data}
MF_PGHOST=${MF_PGHOST:-$MF_STATE/sock}
MF_PGUSER=${MF_PGUSER:-postgres}
MF_PGRX_VERSION=0.18.1

# Unix socket paths are limited to ~107 bytes; fall back to /tmp for deep checkouts.
if [ $(( ${#MF_PGHOST} + 20 )) -gt 100 ]; then
  MF_PGHOST=/tmp/memory_fabric-$MF_PGPORT
fi

export PATH="$HOME/.cargo/bin:$PATH"

mf_log() { printf '==> %s\n' "$*" >&2; }
mf_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

mf_is_root() { [ "$(id -u)" = 0 ]; }

# initdb, pg_ctl and postgres refuse to run as root: use the postgres system user then.
mf_as_pg() {
  if mf_is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

mf_sudo() {
  if mf_is_root; then "$@"; else sudo "$@"; fi
}

mf_psql() {
  "$MF_PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -h "$MF_PGHOST" -p "$MF_PGPORT" -U "$MF_PGUSER" "$@"
}
