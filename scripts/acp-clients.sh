#!/usr/bin/env bash
# Installs the official ACP client SDKs the ACP tests drive `toolbelt acp` with, into DIR
# (default: target/tmp/acp-clients): the Python SDK in a virtual environment, the TypeScript
# SDK with npm. Pinned versions; does nothing when they are already there. Needs python3 (with
# venv) and npm, and the PyPI and npm registries.
set -euo pipefail
dir=${1:-"$(dirname "$0")/../target/tmp/acp-clients"}
mkdir -p "$dir"
cd "$dir"
# One installer at a time (test processes run side by side under nextest).
exec 9>.install.lock
flock 9
if ! venv/bin/python -c 'import acp' 2>/dev/null; then
  rm -rf venv
  python3 -m venv venv
  venv/bin/pip install --quiet --disable-pip-version-check "agent-client-protocol==0.12.1"
fi
if [ ! -f node_modules/@agentclientprotocol/sdk/package.json ]; then
  [ -f package.json ] || echo '{"private": true, "type": "module"}' > package.json
  npm install --silent --no-audit --no-fund "@agentclientprotocol/sdk@2.4.0" > /dev/null
fi
