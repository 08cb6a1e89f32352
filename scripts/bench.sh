#!/usr/bin/env bash
# The performance table: toolbelt beside the native tools and the machine, measured in one run
# with hyperfine (whole processes, warm page cache), printed as one table of ratios.
#
#   grep_search (rare literal)  vs  rg -n -i        on gemini-cli, ruff and a generated huge tree
#   grep_search (common word, default 100-match limit)  vs  rg -n -i | head -n 100   (huge tree)
#   glob                        vs  fdfind -g       on the same three trees
#   read_many_files             vs  rg --files -g GLOB | xargs cat
#   cold `call read_file`       vs  rg --version   (and /bin/true for scale)
#   peak RSS of grep_search and read_many_files (rg's beside it)
#   MCP read_file calls/s       vs  the reference Node filesystem server, same client, same run
#
# The corpora (cached in $TOOLBELT_BENCH_CACHE, default ~/.cache/toolbelt-bench):
#   gemini-cli  @google/gemini-cli-core 0.61.0 from npm (3,029 files), laid out as in the
#               repository (packages/core/src): the published package keeps its code under
#               dist/, which grep_search's default excludes would skip
#   ruff        the ruff 0.17.6 source distribution from PyPI (5,147 files)
#   huge        200,000 files / 2 GB generated here (deterministic), deleted when the script ends
# Yardsticks are installed when missing: Debian's hyperfine, ripgrep, fd-find and time; the npm
# package @modelcontextprotocol/server-filesystem (in the cache folder).
#
# Usage: scripts/bench.sh [--quick] [--no-huge] [--no-mcp]
#   TOOLBELT_BENCH_BASELINE=/path/to/older/toolbelt  also runs every toolbelt command with that
#   binary and diffs the outputs (the script fails when one differs).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${TOOLBELT_BENCH_CACHE:-$HOME/.cache/toolbelt-bench}
mkdir -p "$CACHE"
need() { command -v "$1" >/dev/null 2>&1; }
if ! need hyperfine || ! need rg || ! need fdfind || [ ! -x /usr/bin/time ]; then
  echo "installing hyperfine, ripgrep, fd-find and time (Debian packages)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine ripgrep fd-find time) >/dev/null
fi

fetch_corpora() {
  local gem="$CACHE/gemini-cli" ruff="$CACHE/ruff"
  if [ ! -f "$gem/.complete" ]; then
    echo "fetching @google/gemini-cli-core 0.61.0 from npm" >&2
    rm -rf "$gem" "$CACHE/pack"; mkdir -p "$CACHE/pack" "$gem/packages/core"
    (cd "$CACHE/pack" && npm pack -q @google/gemini-cli-core@0.61.0 >/dev/null 2>&1)
    echo "865fffc4cfb4dfb5b35ec686759e0e3d5b00bf7a4a8d2380e5fee687fd8ac7b0  $CACHE/pack/google-gemini-cli-core-0.61.0.tgz" | sha256sum -c --quiet
    tar xzf "$CACHE/pack/google-gemini-cli-core-0.61.0.tgz" -C "$gem/packages/core" --strip-components=1
    mv "$gem/packages/core/dist/src" "$gem/packages/core/src"
    mv "$gem/packages/core/dist" "$gem/packages/core/lib"
    touch "$gem/.complete"
  fi
  if [ ! -f "$ruff/.complete" ]; then
    echo "fetching the ruff 0.17.6 source distribution from PyPI" >&2
    rm -rf "$ruff" "$CACHE/ruff.tar.gz"; mkdir -p "$ruff"
    curl -sSf -m 300 -o "$CACHE/ruff.tar.gz" \
      https://files.pythonhosted.org/packages/df/8e/6929d337aa5380aafc7355f3149f3ccfe55cba5fdd34a045697ebaceb5a0/ruff-0.17.6.tar.gz
    echo "2b04276561331300325040bdca21460770029ec574d4c479099e39e8ad1ed43c  $CACHE/ruff.tar.gz" | sha256sum -c --quiet
    tar xzf "$CACHE/ruff.tar.gz" -C "$ruff" --strip-components=1
    touch "$ruff/.complete"
  fi
}
fetch_corpora

NODE_FS="$CACHE/node/node_modules/.bin/mcp-server-filesystem"
if [[ " $* " != *" --no-mcp "* ]] && [ ! -x "$NODE_FS" ]; then
  echo "installing @modelcontextprotocol/server-filesystem (npm) for the MCP comparison" >&2
  mkdir -p "$CACHE/node"
  (cd "$CACHE/node" && npm install -q --no-audit --no-fund @modelcontextprotocol/server-filesystem@2026.8.31 >/dev/null 2>&1)
fi

cargo build --release -q
# Measured as installed: a copy, as `cargo install` makes (a binary the linker has just written
# starts slower from the page cache for a while).
cp target/release/toolbelt "$CACHE/toolbelt"
exec python3 scripts/bench.py --bin "$CACHE/toolbelt" --cache "$CACHE" --node-fs "$NODE_FS" "$@"
