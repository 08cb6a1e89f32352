#!/usr/bin/env bash
# Builds toolbelt's packages for one target into OUTDIR, from one build of the binary:
#   agent_toolbelt-VERSION-*.whl           the PyPI wheel (maturin, bindings = "bin"): Linux
#                                          wheels are manylinux2014 (glibc 2.17, linked with zig,
#                                          the `ziglang` package from PyPI) or musllinux_1_2 (a
#                                          static PIE, built with musl-gcc)
#   agent-toolbelt-PLATFORM-VERSION.tgz    the npm package with this target's binary; PLATFORM
#                                          is OS-CPU, plus `-musl` for musl (npm's os, cpu and,
#                                          on Linux, libc fields pick it)
#   agent-toolbelt-VERSION.tgz             the npm package whose `bin` runs the platform one
#   toolbelt-TARGET.tar.gz                 the binary for a GitHub release (cargo binstall)
# Each carries LICENSE and THIRD-PARTY-NOTICES.txt, the notices of every crate the binary links
# (scripts/notices.sh, which also fails on a licence about.toml does not accept).
#
# usage: scripts/package.sh OUTDIR [--debug] [--target TRIPLE]
#   --debug   the dev profile (quick; what CI's install test uses); default: release
#   --target  a Rust target triple (default: this machine's); glibc targets are linked with
#             zig, so one Linux machine builds x64 and arm64 glibc wheels; musl targets need
#             musl-gcc (musl-tools) for the machine's own CPU
# Needs cargo (with the target's standard library: `rustup target add TRIPLE`), python3 (with
# venv) and npm; maturin and ziglang are installed into target/package-venv. Publishing:
# docs/releasing.md.
set -euo pipefail
usage() { echo "usage: scripts/package.sh OUTDIR [--debug] [--target TRIPLE]" >&2; exit 2; }
[ $# -ge 1 ] || usage
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
profile=release
target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) profile=dev ;;
    --target) [ $# -ge 2 ] || usage; target=$2; shift ;;
    *) usage ;;
  esac
  shift
done
cd "$(dirname "$0")/.."
[ -n "$target" ] || target=$(rustc -vV | sed -n 's/^host: //p')
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

# npm's names for the target, and how maturin links it.
libc=""
case "$target" in
  x86_64-*) cpu=x64 ;;
  aarch64-*) cpu=arm64 ;;
  *) echo "package.sh: no package for $target" >&2; exit 1 ;;
esac
case "$target" in
  *-linux-gnu) os=linux; libc=glibc; link=(--zig --compatibility manylinux2014) ;;
  # Not zig for musl: it links a static executable that is not position-independent (no
  # ASLR); Rust's own musl start files with musl-gcc make a static PIE.
  *-linux-musl) os=linux; libc=musl; link=(--compatibility musllinux_1_2)
    command -v musl-gcc > /dev/null || { echo "package.sh: $target needs musl-gcc (Debian: apt-get install musl-tools)" >&2; exit 1; } ;;
  *-apple-darwin) os=darwin; link=() ;;
  *) echo "package.sh: no package for $target" >&2; exit 1 ;;
esac
platform=$os-$cpu$([ "$libc" = musl ] && echo -musl || true)

echo "== notices"
scripts/notices.sh THIRD-PARTY-NOTICES.txt

echo "== the binary and the wheel ($target, $profile): one build"
venv=target/package-venv
if ! "$venv/bin/maturin" --version > /dev/null 2>&1 || ! "$venv/bin/python" -m ziglang version > /dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.7,<2" "ziglang>=0.13,<0.18"
fi
wheels=$(mktemp -d)
stage=$(mktemp -d)
trap 'rm -rf "$wheels" "$stage"' EXIT
# maturin finds zig as `python -m ziglang` with the first python on PATH: the venv's.
PATH="$PWD/$venv/bin:$PATH" "$venv/bin/maturin" build --profile "$profile" --locked \
  --target "$target" ${link[@]+"${link[@]}"} --out "$wheels"
wheel=$(ls "$wheels"/*.whl)
cp "$wheel" "$out/"
# The binary for the other packages is the wheel's own: the same build, stripped as published.
bin="$stage/toolbelt"
python3 - "$wheel" "$bin" <<'PY'
import os, sys, zipfile
wheel, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/toolbelt"))
    with z.open(name) as src, open(dest, "wb") as dst:
        dst.write(src.read())
os.chmod(dest, 0o755)
PY

echo "== hardening"
scripts/check-hardening.sh "$bin"

echo "== npm ($platform)"
plat="$stage/platform"
mkdir -p "$plat/bin"
node -e '
  const fs = require("fs");
  const [file, dest, platform, version, os, cpu, libc] = process.argv.slice(1);
  const p = JSON.parse(fs.readFileSync(file, "utf8"));
  p.name = `agent-toolbelt-${platform}`;
  p.version = version;
  p.description = `The toolbelt binary for ${platform} (installed by the agent-toolbelt package)`;
  p.os = [os];
  p.cpu = [cpu];
  if (libc) p.libc = [libc];
  fs.writeFileSync(dest, JSON.stringify(p, null, 2) + "\n");
' npm/platform/package.json "$plat/package.json" "$platform" "$version" "$os" "$cpu" "$libc"
cp "$bin" "$plat/bin/toolbelt"
cp LICENSE THIRD-PARTY-NOTICES.txt "$plat/"
(cd "$plat" && npm pack --silent --pack-destination "$out" > /dev/null)
main="$stage/main"
cp -r npm/agent-toolbelt "$main"
cp README.md LICENSE THIRD-PARTY-NOTICES.txt "$main/"
node -e '
  const fs = require("fs");
  const [file, version] = process.argv.slice(1);
  const p = JSON.parse(fs.readFileSync(file, "utf8"));
  p.version = version;
  p.optionalDependencies = Object.fromEntries(
    ["linux-x64", "linux-x64-musl", "linux-arm64", "linux-arm64-musl", "darwin-x64", "darwin-arm64"]
      .map((t) => [`agent-toolbelt-${t}`, version]));
  fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
' "$main/package.json" "$version"
(cd "$main" && npm pack --silent --pack-destination "$out" > /dev/null)

echo "== tarball"
dir="$stage/toolbelt-$target"
mkdir -p "$dir"
cp "$bin" LICENSE THIRD-PARTY-NOTICES.txt "$dir/"
tar -C "$stage" -czf "$out/toolbelt-$target.tar.gz" "toolbelt-$target"
ls -l "$out"
