#!/usr/bin/env bash
# The install test: builds the packages (scripts/package.sh, --debug unless --release is
# given; --dist DIR takes ones already built for this machine), checks the wheel's platform tag
# with auditwheel (manylinux2014 or older, or musllinux), installs each into a clean place (the wheel into a fresh venv, the npm packages into
# a fresh prefix) and drives the installed `agent-toolbelt mcp` with the official Python MCP
# SDK client (tests/packaging/drive.py). Needs what package.sh needs, and PyPI and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=--debug
dist=""
while [ $# -gt 0 ]; do
  case "$1" in
    --release) mode="" ;;
    --dist) dist=$2; shift ;;
    *) echo "usage: scripts/package-test.sh [--release] [--dist DIR]" >&2; exit 2 ;;
  esac
  shift
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$dist" ]; then
  cp -r "$dist" "$work/dist"
else
  scripts/package.sh "$work/dist" $mode
fi

if [ "$(uname -s)" = Linux ]; then
  echo "== the wheel runs on glibc 2.17 (manylinux2014) or on musl"
  python3 -m venv "$work/audit"
  "$work/audit/bin/pip" install --quiet --disable-pip-version-check "auditwheel>=6,<7"
  for whl in "$work"/dist/*.whl; do
    shown=$("$work/audit/bin/auditwheel" show "$whl")
    tag=$(grep -Eo '"(manylinux|musllinux)_[^"]+"' <<< "$shown" | head -1 | tr -d '"')
    case "$tag" in
      manylinux_2_5_* | manylinux_2_12_* | manylinux_2_17_* | musllinux_*) echo "$(basename "$whl"): $tag" ;;
      *) echo "package-test: $(basename "$whl") needs $tag, newer than manylinux2014:" >&2; echo "$shown" >&2; exit 1 ;;
    esac
  done
  echo "== the npm platform package names its C library"
  for pkg in "$work"/dist/agent-toolbelt-linux-*.tgz; do
    tar -xzOf "$pkg" package/package.json | grep -q '"libc"' || {
      echo "package-test: $(basename "$pkg") has no libc field" >&2
      exit 1
    }
  done
fi

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

echo "== the main npm package alone says what is missing and how to get it"
mkdir -p "$work/npm-alone"
(cd "$work/npm-alone" && npm install --silent --no-audit --no-fund --omit=optional --prefix "$work/npm-alone" "$main" > /dev/null)
if said=$("$work/npm-alone/node_modules/.bin/agent-toolbelt" --version 2>&1); then
  echo "package-test: the main package ran without its platform package" >&2
  exit 1
fi
grep -q "is not installed" <<< "$said" || { echo "package-test: unclear message: $said" >&2; exit 1; }
echo "install test: ok"
