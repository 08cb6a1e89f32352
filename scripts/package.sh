#!/usr/bin/env bash
# Builds toolbelt's packages for this machine's platform into OUTDIR:
#   agent_toolbelt-VERSION-*.whl          the PyPI wheel (maturin, bindings = "bin")
#   agent-toolbelt-OS-CPU-VERSION.tgz     the npm package with this platform's binary
#   agent-toolbelt-VERSION.tgz            the npm package whose `bin` runs it
# `--debug` builds with the dev profile (quick; what CI's install test uses); the default is
# the release profile (what is published). Needs cargo, python3 (with venv) and npm; maturin
# is installed into target/package-venv. Publishing: docs/releasing.md.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: scripts/package.sh OUTDIR [--debug]" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
profile=release
[ "${2:-}" = "--debug" ] && profile=dev
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "package.sh: no package for $(uname -s)" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) cpu=x64 ;;
  aarch64 | arm64) cpu=arm64 ;;
  *) echo "package.sh: no package for $(uname -m)" >&2; exit 1 ;;
esac
dir=target/$([ "$profile" = dev ] && echo debug || echo release)

echo "== binaries ($profile)"
cargo build -p toolbelt --bins --profile "$profile" --locked

echo "== wheel"
if ! target/package-venv/bin/maturin --version > /dev/null 2>&1; then
  python3 -m venv target/package-venv
  target/package-venv/bin/pip install --quiet --disable-pip-version-check "maturin>=1.7,<2"
fi
target/package-venv/bin/maturin build --profile "$profile" --locked --out "$out"

echo "== npm ($os-$cpu)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
plat="$stage/platform"
mkdir -p "$plat/bin"
sed -e "s/@PLATFORM@/$os-$cpu/g" -e "s/@VERSION@/$version/" -e "s/@OS@/$os/" -e "s/@CPU@/$cpu/" \
  npm/platform/package.json > "$plat/package.json"
cp "$dir/toolbelt" "$plat/bin/toolbelt"
(cd "$plat" && npm pack --silent --pack-destination "$out" > /dev/null)
main="$stage/main"
cp -r npm/agent-toolbelt "$main"
cp README.md "$main/README.md"
node -e '
  const fs = require("fs");
  const [file, version] = process.argv.slice(1);
  const p = JSON.parse(fs.readFileSync(file, "utf8"));
  p.version = version;
  p.optionalDependencies = Object.fromEntries(
    ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"].map((t) => [`agent-toolbelt-${t}`, version]));
  fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
' "$main/package.json" "$version"
(cd "$main" && npm pack --silent --pack-destination "$out" > /dev/null)
ls -l "$out"
