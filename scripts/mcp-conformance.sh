#!/usr/bin/env bash
# Runs the official MCP conformance suite (server scenarios) against `toolbelt mcp --http`.
# Needs npm (the registry); installs @modelcontextprotocol/conformance and Node 22 (the suite
# uses fs.globSync) into a cache folder on first use.
# The server runs with `--fixture conformance` (the tools, resources and prompts the scenarios
# call); every active server scenario passes (40 checks at the last run).
# Usage: scripts/mcp-conformance.sh [--scenario NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${TOOLBELT_CONFORMANCE_DIR:-$HOME/.cache/toolbelt-conformance}
mkdir -p "$CACHE"
if [ ! -x "$CACHE/node_modules/node/bin/node" ] || [ ! -d "$CACHE/node_modules/@modelcontextprotocol/conformance" ]; then
  (cd "$CACHE" && npm install --no-fund --no-audit node@22 @modelcontextprotocol/conformance@0.1.16 >/dev/null)
fi
NODE="$CACHE/node_modules/node/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
cargo build -q
WORK=$(mktemp -d)
PORT=${PORT:-18765}
./target/debug/toolbelt mcp --fixture conformance --http "127.0.0.1:$PORT" 2>"$WORK/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do grep -q "/mcp" "$WORK/server.log" 2>/dev/null && break; sleep 0.1; done
"$NODE" "$SUITE" server --url "http://localhost:$PORT/mcp" "$@" 2>&1 | sed -n '/=== SUMMARY ===/,$p'
