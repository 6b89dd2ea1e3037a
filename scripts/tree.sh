#!/usr/bin/env bash
# Makes, or brings up to date, an installation tree of PostgreSQL that belongs to the tests, so
# that they never write into the system's PostgreSQL directories nor replace a library that a
# server outside the tests has loaded.
#   bash scripts/tree.sh DEST
# DEST holds copies of the system's PostgreSQL programs under the system's own paths
# (DEST/usr/lib/postgresql/15/bin). PostgreSQL finds its lib and share directories relative to
# the program that runs, so the tree's postgres, initdb, pg_config and PGXS use
# DEST/usr/lib/postgresql/15/lib and DEST/usr/share/postgresql/15. Every entry there is a link to
# the system's, except memory_fabric's own files (the library, the extension scripts, the router
# extensions), which only scripts/install.sh (or cargo pgrx test, in its own tree) puts in a tree;
# the semantic model's files are links to the system's copy (scripts/install_model.sh).
# Idempotent: programs are copied again only when the system's changed, links are refreshed.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
dest=${1:?usage: scripts/tree.sh DEST}
case $dest in /*) ;; *) mf_die "scripts/tree.sh: DEST must be an absolute path" ;; esac
pgc=$MF_SYS_PG_CONFIG
[ -x "$pgc" ] || mf_die "pg_config not found at $pgc (run scripts/setup.sh)"
bindir=$("$pgc" --bindir)
pkglibdir=$("$pgc" --pkglibdir)
sharedir=$("$pgc" --sharedir)
incdir=$("$pgc" --includedir)
libdir=$("$pgc" --libdir)
ours() { case $1 in memory_fabric|memory_fabric.*|memory_fabric--*|memory_fabric_*) return 0 ;; esac; return 1; }

# The programs: copies (PostgreSQL resolves symbolic links to find its own place).
mkdir -p "$dest$bindir"
for f in "$bindir"/*; do
  t=$dest$bindir/$(basename "$f")
  cmp -s "$f" "$t" 2>/dev/null || { cp -p "$f" "$t.tmp.$$" && mv -f "$t.tmp.$$" "$t"; }
done

# A directory of links to every entry of the system's one but ours; links whose target is gone
# are removed.
link_entries() { # system dir, tree dir, entries to keep as real directories…
  local sys=$1 tree=$2 e name; shift 2
  mkdir -p "$tree"
  for e in "$tree"/* "$tree"/.[!.]*; do
    [ -L "$e" ] && [ ! -e "$e" ] && rm -f "$e"
  done
  for e in "$sys"/*; do
    [ -e "$e" ] || continue
    name=$(basename "$e")
    ours "$name" && continue
    [[ " $* " == *" $name "* ]] && continue
    [ "$(readlink "$tree/$name" 2>/dev/null)" = "$e" ] || ln -sfn "$e" "$tree/$name"
  done
}
link_entries "$pkglibdir" "$dest$pkglibdir"
link_entries "$sharedir" "$dest$sharedir" extension
link_entries "$sharedir/extension" "$dest$sharedir/extension"
# the semantic embedder's files: the system's (scripts/install_model.sh), linked one by one
model=$sharedir/extension/memory_fabric/all-MiniLM-L6-v2
if [ -d "$model" ]; then
  link_entries "$model" "$dest$model"
fi
# headers and libraries, for PGXS builds against the tree (router/Makefile)
mkdir -p "$(dirname "$dest$incdir")" "$(dirname "$dest$libdir")"
[ -L "$dest$incdir" ] || ln -sfn "$incdir" "$dest$incdir"
[ -L "$dest$libdir" ] || ln -sfn "$libdir" "$dest$libdir"
# the server runs as the postgres system user when we are root: it must read the tree
chmod -R a+rX "$dest"
got=$("$dest$bindir/pg_config" --pkglibdir)
[ "$got" = "$dest$pkglibdir" ] || mf_die "the tree's pg_config reports $got, not $dest$pkglibdir: PostgreSQL did not relocate"
