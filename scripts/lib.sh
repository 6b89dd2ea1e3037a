# Shared settings for the memory_fabric scripts. Sourced, never run.
# Every value can be overridden from the environment.
MF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MF_PG_MAJOR=${MF_PG_MAJOR:-15}
MF_PG_BINDIR=${MF_PG_BINDIR:-/usr/lib/postgresql/$MF_PG_MAJOR/bin}
MF_PG_CONFIG=${MF_PG_CONFIG:-$MF_PG_BINDIR/pg_config}
MF_PGXS_TEST=${MF_PGXS_TEST:-/usr/lib/postgresql/$MF_PG_MAJOR/lib/pgxs/src/test}
MF_BUILD=${MF_BUILD:-$MF_ROOT/target/mf}
MF_PGPORT=${MF_PGPORT:-55432}

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

# Where the cluster, its socket, its logs and the pg_test cluster live: the ignored build
# area, unless we are root in a checkout the postgres user cannot reach (then /tmp).
if [ -z "${MF_STATE:-}" ]; then
  if [ "$(id -u)" != 0 ] || mf_world_traversable "$MF_BUILD"; then
    MF_STATE=$MF_BUILD
  else
    MF_STATE=/tmp/memory_fabric-$(printf %s "$MF_ROOT" | cksum | cut -d' ' -f1)
  fi
fi
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
