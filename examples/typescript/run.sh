#!/usr/bin/env bash
# The TypeScript example: an agent's memory with node-postgres and pgvector (src/memory_agent.ts),
# with the dependencies pinned in package.json and package-lock.json.
# Run by ../run.sh, which sets PGHOST, PGPORT, PGDATABASE and PGUSER (node-postgres reads them).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

# Node.js and npm come with the machine; install Debian's where they do not.
if ! command -v npm > /dev/null; then
  sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
fi

# npm ci on a fresh clone or when the lockfile changed; otherwise node_modules is up to date.
stamp=node_modules/.installed-package-lock.json
if ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
npm run --silent build
npm run --silent start
