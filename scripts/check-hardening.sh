#!/usr/bin/env bash
# Checks that each toolbelt binary keeps the hardening the project never trades away: a
# position-independent executable (ASLR), full RELRO (read-only relocations, bound at start)
# and a stack that is not executable. ELF binaries are read with readelf; Mach-O ones (macOS,
# where the toolchain makes PIEs) with otool when it is there.
# usage: scripts/check-hardening.sh BINARY...
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/check-hardening.sh BINARY..." >&2; exit 2; }
fail=0
for bin in "$@"; do
  magic=$(head -c 4 "$bin" | od -An -tx1 | tr -d ' \n')
  if [ "$magic" = 7f454c46 ]; then
    header=$(readelf -h "$bin")
    dynamic=$(readelf -d "$bin" 2>/dev/null || true)
    segments=$(readelf -lW "$bin")
    problems=()
    grep -q 'Type:[[:space:]]*DYN' <<< "$header" || problems+=("not position-independent")
    grep -q 'GNU_RELRO' <<< "$segments" || problems+=("no RELRO segment")
    grep -Eq 'BIND_NOW|FLAGS_1.*NOW' <<< "$dynamic" || problems+=("relocations not bound at start (partial RELRO)")
    grep -E 'GNU_STACK' <<< "$segments" | grep -q 'RWE' && problems+=("executable stack")
    if [ ${#problems[@]} -gt 0 ]; then
      echo "check-hardening: $bin: ${problems[*]}" >&2
      fail=1
    else
      echo "$bin: PIE, full RELRO, non-executable stack"
    fi
  elif command -v otool > /dev/null; then
    if otool -hv "$bin" | grep -q PIE; then echo "$bin: PIE (Mach-O)"; else echo "check-hardening: $bin: not PIE" >&2; fail=1; fi
  else
    echo "$bin: not ELF and no otool here: not checked"
  fi
done
exit $fail
