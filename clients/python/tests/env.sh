#!/usr/bin/env bash
# The Python side's virtual environment, $MF_BUILD/pyenv: made once, with the pinned and hashed
# requirements-test.txt (pip --require-hashes), and made again only when that file changes.
# Source it: it sets MF_PY to the environment's python.
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib.sh"
MF_PYENV=$MF_BUILD/pyenv
MF_PY=$MF_PYENV/bin/python
mf_pyenv_req=$MF_ROOT/clients/python/requirements-test.txt
mf_pyenv_sum=$(sha256sum "$mf_pyenv_req" | cut -d' ' -f1)
if [ "$(cat "$MF_PYENV/.requirements" 2>/dev/null)" != "$mf_pyenv_sum" ]; then
  rm -rf "$MF_PYENV"
  python3 -m venv "$MF_PYENV"
  "$MF_PY" -m pip install -q --disable-pip-version-check --require-hashes -r "$mf_pyenv_req" \
    > "$MF_BUILD/pyenv-install.log" 2>&1 || { cat "$MF_BUILD/pyenv-install.log" >&2; echo "pyenv: pip install failed" >&2; return 1 2>/dev/null || exit 1; }
  echo "$mf_pyenv_sum" > "$MF_PYENV/.requirements"
fi
export MF_PY MF_PYENV
