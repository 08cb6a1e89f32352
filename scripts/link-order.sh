#!/usr/bin/env bash
# Lists the functions toolbelt's calls run, for the linker to place together
# (crates/cli/link-order.txt, read by crates/cli/build.rs in release builds).
#
# Why: the kernel maps a binary's code 64 KiB around each page a process touches. A call runs
# about 1.5 MB of toolbelt's 23 MB of code, spread over all of it, so a `call grep_search` had
# 13 MB of code mapped (peak RSS 16 MiB, of which 1.6 MiB its own memory). Placed together, the
# same code maps a few MB.
#
# How: the release binary (built as users build it; it keeps its symbol table) runs a set of
# typical calls, each under valgrind's callgrind, which names every function that ran. Rerun it
# after large changes: names the build no longer has are skipped by the linker, and new
# functions are placed anywhere, so a stale list costs memory, never correctness.
#
# Usage: scripts/link-order.sh        (installs valgrind from Debian when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null 2>&1; then
  echo "installing valgrind (Debian package)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind) >/dev/null
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TREE=$WORK/tree
mkdir -p "$TREE/src/sub" "$TREE/docs"
for i in $(seq 1 40); do
  printf 'fn f%d() {\n    let x = %d; // TODO tidy\n}\n' "$i" "$i" > "$TREE/src/f$i.rs"
  printf '# note %d\nSome text about item %d.\n' "$i" "$i" > "$TREE/docs/n$i.md"
done
printf 'a.txt\n' > "$TREE/.gitignore"
printf 'hello\nworld\n' > "$TREE/src/sub/a.txt"
# The traced calls get a home of their own (no user settings, policies or history).
mkdir -p "$WORK/home"
RUN_ENV=(env "HOME=$WORK/home" "TOOLBELT_HOME=$WORK/home/.toolbelt")

# The names of generic and dependency code change with the features cargo unifies, so each way
# the binary is built is traced: `cargo install --path crates/cli` builds the package alone (as
# `-p toolbelt`), `cargo run --release` and scripts/bench.sh build the whole workspace.
n=0
trace() {
  n=$((n + 1))
  "${RUN_ENV[@]}" valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg.$n" "$@" \
    >/dev/null 2>"$WORK/err.$n" || true
}
call() { trace "$BIN" call "$1" "$2" --root "$TREE"; }
trace_all() {
call read_file '{"file_path":"src/f1.rs"}'
call read_file '{"file_path":"missing.rs"}'
call grep_search '{"pattern":"TODO"}'
call grep_search '{"pattern":"item 3","include_pattern":"*.md","context":1}'
call glob '{"pattern":"**/*.rs"}'
call read_many_files '{"include":["docs/*.md","src/**"]}'
call list_directory '{"dir_path":"src"}'
call write_file '{"file_path":"new.txt","content":"x\n"}'
call replace '{"file_path":"new.txt","old_string":"x","new_string":"y"}'
call run_shell_command '{"command":"echo hi"}'
call write_todos '{"todos":[{"description":"a","status":"pending"}]}'
trace "$BIN" call not_a_tool '{}' --root "$TREE"
trace "$BIN" call read_file '{bad json' --root "$TREE"
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"order","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"src/f1.rs"}}}' \
  '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grep_search","arguments":{"pattern":"TODO"}}}' \
  > "$WORK/mcp.in"
n=$((n + 1))
"${RUN_ENV[@]}" valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg.$n" \
  "$BIN" mcp --root "$TREE" <"$WORK/mcp.in" >/dev/null 2>"$WORK/err.$n" || true
}
for build in "-p toolbelt" ""; do
  # shellcheck disable=SC2086 # the package option is two words or none
  cargo build --release -q $build
  BIN=$WORK/toolbelt
  cp target/release/toolbelt "$BIN"
  trace_all
done

# Every Rust function named in any of the runs, once, in name order (stable diffs).
python3 - "$WORK" crates/cli/link-order.txt <<'PY'
import glob, re, sys
names = set()
for f in glob.glob(sys.argv[1] + "/cg.*"):
    for line in open(f, errors="replace"):
        m = re.match(r"^c?fn=\(\d+\) (\S+)$", line.rstrip("\n"))
        if m and m.group(1).startswith(("_R", "_ZN")):
            names.add(m.group(1))
if len(names) < 1000:
    sys.exit(f"only {len(names)} functions found: did the calls run? (see the valgrind logs)")
open(sys.argv[2], "w").write("".join(n + "\n" for n in sorted(names)))
print(f"{len(names)} functions listed in {sys.argv[2]}")
PY
