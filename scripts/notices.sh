#!/usr/bin/env bash
# The third-party notices of the toolbelt binary, generated (never kept by hand) by cargo-about
# from about.toml and about.hbs into OUT (default THIRD-PARTY-NOTICES.txt at the repository's
# root, where the wheel's build takes it from). It is also the licence check: it fails when a
# crate the binary links is under a licence about.toml does not accept, or has no licence text.
# Installs cargo-about (crates.io, locked) when it is missing. No other network.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-THIRD-PARTY-NOTICES.txt}
version=0.8.4
if ! cargo about --version 2>/dev/null | grep -q " $version"; then
  echo "installing cargo-about $version (crates.io)" >&2
  cargo install --quiet --locked cargo-about --version "$version"
fi
mkdir -p "$(dirname "$out")"
cargo about -L warn generate --fail --locked --manifest-path crates/cli/Cargo.toml \
  about.hbs -o "$out"
echo "notices: $(grep -c '^  [a-z0-9_-]* [0-9]' "$out") crate entries in $out" >&2
