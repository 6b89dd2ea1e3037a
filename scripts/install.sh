#!/usr/bin/env bash
# Builds memory_fabric and installs it into a PostgreSQL installation without ever writing over a
# file a server may have open: the build is staged (cargo pgrx package), and each file is copied
# beside its destination under a temporary name and renamed into place. A backend that has the old
# library mapped keeps the old file (its inode lives on until the last backend lets go); new
# backends load the new one. A file whose content is already installed is left alone.
#   bash scripts/install.sh [--pg-config PATH] [--release] [--force] [--no-build] [--features F]
#     --pg-config  the installation to install into (default: the system's, or the tests' own tree
#                  under MF_TESTING=1; scripts/lib.sh)
#     --release    an optimised build (default: a development build, the core optimised anyway)
#     --force      rename every file into place even when its content is unchanged
#     --no-build   install what the last run staged for this installation and profile
# After installing a newer version, run ALTER EXTENSION memory_fabric UPDATE in each database.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pgc=$MF_PG_CONFIG release=0 force=0 build=1 features=()
while [ $# -gt 0 ]; do
  case $1 in
    --pg-config) pgc=$2; shift 2 ;;
    --release) release=1; shift ;;
    --force) force=1; shift ;;
    --no-build) build=0; shift ;;
    --features) features=(--features "$2"); shift 2 ;;
    *) echo "usage: $0 [--pg-config PATH] [--release] [--force] [--no-build] [--features F]" >&2; exit 2 ;;
  esac
done
# the tests' tree is made or brought up to date first
if [ "${MF_TESTING:-0}" = 1 ] && [ "$pgc" = "$MF_PG_CONFIG" ]; then
  bash "$MF_ROOT/scripts/tree.sh" "$MF_TREE"
fi
[ -x "$pgc" ] || mf_die "pg_config not found at $pgc"
cd "$MF_ROOT"
profile=debug; flags=(--debug)
[ $release = 1 ] && { profile=release; flags=(); }
# one staging directory per target installation and profile
stage=$MF_BUILD/stage/$(printf %s "$pgc" | cksum | cut -d' ' -f1)-$profile
if [ $build = 1 ]; then
  rm -rf "$stage"
  mkdir -p "$MF_BUILD/logs"
  log=$MF_BUILD/logs/package.log
  if ! cargo pgrx package "${flags[@]}" "${features[@]}" --pg-config "$pgc" --out-dir "$stage" >"$log" 2>&1; then
    cat "$log" >&2
    mf_die "cargo pgrx package failed"
  fi
fi
[ -d "$stage" ] || mf_die "nothing staged in $stage (run without --no-build)"
pkglibdir=$("$pgc" --pkglibdir)
extdir=$("$pgc" --sharedir)/extension
installed=0 same=0
# cargo pgrx package lays the files out under the target's absolute paths
while IFS= read -r -d '' src; do
  rel=${src#"$stage"}
  case $rel in
    "$pkglibdir"/*|"$extdir"/*) ;;
    *) mf_die "the package holds $rel, outside $pkglibdir and $extdir" ;;
  esac
  dst=$rel dir=$(dirname "$rel")
  if [ $force = 0 ] && cmp -s "$src" "$dst" 2>/dev/null; then
    same=$((same + 1)); continue
  fi
  [ -d "$dir" ] || mf_sudo install -d -m 0755 "$dir"
  tmp=$dir/.$(basename "$dst").tmp.$$
  mf_sudo install -m 0644 "$src" "$tmp"
  mf_sudo mv -f "$tmp" "$dst"
  installed=$((installed + 1))
done < <(find "$stage" -type f -print0)
[ $((installed + same)) -gt 0 ] || mf_die "cargo pgrx package produced no files in $stage"
mf_log "memory_fabric ($profile) in $pkglibdir and $extdir: $installed files renamed into place, $same unchanged"
