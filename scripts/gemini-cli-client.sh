#!/usr/bin/env bash
# Checks docs/clients.md's Gemini CLI snippet end to end: installs Gemini CLI from npm into a
# scratch folder, configures toolbelt as an MCP server in a scratch home, and asks Gemini CLI's
# own MCP client to connect and list it (`gemini mcp list`). Needs npm (and the network for the
# install). Usage: scripts/gemini-cli-client.sh [TOOLBELT_BINARY]
set -euo pipefail
bin=$(realpath "${1:-target/release/toolbelt}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.gemini" "$work/proj"
echo "hello from the project" > "$work/proj/notes.txt"
cat > "$work/home/.gemini/settings.json" <<JSON
{
  "mcpServers": {
    "toolbelt": {
      "command": "$bin",
      "args": ["mcp", "--root", "$work/proj"],
      "trust": false
    }
  }
}
JSON
# Gemini CLI starts no MCP server in a folder it does not trust.
echo "{\"$work/proj\": \"TRUST_FOLDER\"}" > "$work/home/.gemini/trustedFolders.json"
echo "installing Gemini CLI from npm..." >&2
npm install --silent --prefix "$work/npm" @google/gemini-cli >/dev/null
cd "$work/proj"
out=$(HOME="$work/home" TOOLBELT_HOME="$work/home/.toolbelt" \
  "$work/npm/node_modules/.bin/gemini" mcp list 2>&1)
echo "$out"
if echo "$out" | grep -q "toolbelt" && echo "$out" | grep -qi "connected"; then
  echo "ok: Gemini CLI connected to toolbelt" >&2
else
  echo "FAILED: Gemini CLI did not connect to toolbelt" >&2
  exit 1
fi
