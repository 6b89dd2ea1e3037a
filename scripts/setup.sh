#!/usr/bin/env bash
# Installs everything memory_fabric needs on a Debian 12 machine, idempotently:
# PostgreSQL 15 and build prerequisites (openssl: the throwaway certificates of tests/mcp/test_tls.py;
# chromium and chromium-driver: the console's browser tests, tests/console; PL/Proxy and
# pg_auto_failover: the fleet, scripts/fleet.sh), pgvector 0.8.0 (from Debian's source
# package when no `vector` extension is installed), cargo-pgrx and `cargo pgrx init`, and the
# semantic embedder's weights (scripts/install_model.sh).
# Each step checks first and is skipped when its result is already there.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pkgs=(postgresql-$MF_PG_MAJOR postgresql-server-dev-$MF_PG_MAJOR postgresql-contrib
      libclang-dev clang dpkg-dev pkg-config libipc-run-perl sudo make openssl
      chromium chromium-driver
      postgresql-$MF_PG_MAJOR-plproxy postgresql-$MF_PG_MAJOR-auto-failover pg-auto-failover-cli)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  mf_log "installing Debian packages: ${missing[*]}"
  mf_sudo apt-get update -qq
  mf_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ -x "$MF_SYS_PG_CONFIG" ] || mf_die "pg_config not found at $MF_SYS_PG_CONFIG"

# Debian's package starts a 'main' cluster on 5432; ours is private, so leave it alone.

sharedir=$("$MF_SYS_PG_CONFIG" --sharedir)
if [ ! -f "$sharedir/extension/vector.control" ]; then
  if apt-cache policy "postgresql-$MF_PG_MAJOR-pgvector" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    mf_log "installing postgresql-$MF_PG_MAJOR-pgvector"
    mf_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$MF_PG_MAJOR-pgvector"
  else
    mf_log "building pgvector from Debian's source package"
    apt_dir=$MF_BUILD/apt
    mkdir -p "$apt_dir/lists/partial"
    # Reuse the mirror this machine is configured with; never name a host here.
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$uri" > "$apt_dir/src.sources"
    aptopts=(-o "Dir::Etc::sourcelist=$apt_dir/src.sources" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt_dir/lists")
    mf_sudo apt-get "${aptopts[@]}" update -qq
    rm -rf "$apt_dir"/pgvector-*
    (cd "$apt_dir" && apt-get "${aptopts[@]}" source pgvector >/dev/null)
    src=$(ls -d "$apt_dir"/pgvector-*/ | head -n1)
    make -s -C "$src" PG_CONFIG="$MF_SYS_PG_CONFIG" -j"$(nproc)"
    mf_sudo make -s -C "$src" PG_CONFIG="$MF_SYS_PG_CONFIG" install
  fi
fi

if ! cargo pgrx --version 2>/dev/null | grep -q " $MF_PGRX_VERSION\$"; then
  mf_log "installing cargo-pgrx $MF_PGRX_VERSION (takes a few minutes)"
  cargo install cargo-pgrx --version "$MF_PGRX_VERSION" --locked
fi

if ! grep -qs "pg$MF_PG_MAJOR = \"$MF_SYS_PG_CONFIG\"" "$HOME/.pgrx/config.toml"; then
  mf_log "cargo pgrx init --pg$MF_PG_MAJOR $MF_SYS_PG_CONFIG"
  cargo pgrx init "--pg$MF_PG_MAJOR" "$MF_SYS_PG_CONFIG"
fi
bash "$MF_ROOT/scripts/install_model.sh"
mf_log "setup complete"
