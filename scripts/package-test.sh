#!/usr/bin/env bash
# The install test: builds the packages (scripts/package.sh, --debug unless --release is
# given), installs each into a clean place (the wheel into a fresh venv, the npm packages into
# a fresh prefix) and drives the installed `agent-toolbelt mcp` with the official Python MCP
# SDK client (tests/packaging/drive.py). Needs what package.sh needs, and PyPI and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=--debug
[ "${1:-}" = "--release" ] && mode=""
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/package.sh "$work/dist" $mode

echo "== the licence and the third-party notices travel with every package"
for pkg in "$work"/dist/*.whl "$work"/dist/*.tgz; do
  case "$pkg" in
    *.whl) files=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$pkg") ;;
    *) files=$(tar -tzf "$pkg") ;;
  esac
  for name in LICENSE THIRD-PARTY-NOTICES.txt; do
    if ! grep -q "/$name\$" <<< "$files"; then
      echo "package-test: $name is missing from $(basename "$pkg")" >&2
      exit 1
    fi
  done
done

echo "== the wheel, in a fresh venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$work"/dist/*.whl "mcp>=1.10,<3"
"$work/venv/bin/python" tests/packaging/drive.py "$work/venv/bin/agent-toolbelt"
"$work/venv/bin/python" tests/packaging/drive.py "$work/venv/bin/toolbelt"

echo "== the npm packages, in a fresh prefix"
mkdir -p "$work/npm"
platform=$(ls "$work"/dist/agent-toolbelt-*-*-*.tgz)
main=$(ls "$work"/dist/agent-toolbelt-[0-9]*.tgz)
(cd "$work/npm" && npm install --silent --no-audit --no-fund --prefix "$work/npm" "$platform" "$main" > /dev/null)
"$work/venv/bin/python" tests/packaging/drive.py "$work/npm/node_modules/.bin/agent-toolbelt"
echo "install test: ok"
