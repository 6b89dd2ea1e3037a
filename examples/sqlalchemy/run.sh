#!/usr/bin/env bash
# The SQLAlchemy example: a read-only ORM mapping of memory_fabric's tables (memory_models.py)
# and a program (memory_app.py) that writes only through the extension's functions, as the
# agent and then as the reviewer, with the dependencies pinned in requirements.txt, in their
# own virtualenv. Run by ../run.sh, which sets PGHOST, PGPORT, PGDATABASE, PGUSER and
# MF_EXAMPLE_REVIEWER.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${MF_EXAMPLE_BUILD:-$here/.build}/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"

PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$here/memory_app.py"
