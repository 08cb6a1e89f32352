#!/usr/bin/env bash
# Search benchmarks (issue 3), side by side in one run:
#   grep_search vs `rg -n`, glob vs `fdfind -g`, read_many_files throughput and peak RSS,
#   and peak RSS of grep_search over the whole tree.
# The tree: the crate sources in cargo's registry (real Rust code), copied COPIES times
# (default 8: about 100k files) into a scratch folder. Copied, not hard-linked: the file layer
# refuses a file whose other names lie outside the workspace (the registry is outside).
# Usage: scripts/bench-search.sh [COPIES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${1:-8}
RUNS=${2:-5}
need() { command -v "$1" >/dev/null 2>&1; }
if ! need rg || ! need fdfind; then
  echo "installing ripgrep and fd-find (Debian packages) to compare against" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep fd-find) >/dev/null
fi
cargo build --release -q
BIN=$PWD/target/release/toolbelt
SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -n 1)
TREE=${BENCH_TREE:-/tmp/toolbelt-bench-tree}
if [ ! -f "$TREE/.complete-copied-$COPIES" ]; then
  rm -rf "$TREE"; mkdir -p "$TREE"
  for i in $(seq 1 "$COPIES"); do cp -r "$SRC" "$TREE/copy$i"; done
  touch "$TREE/.complete-copied-$COPIES"
fi
MANY=/tmp/toolbelt-bench-many
if [ ! -d "$MANY" ]; then
  mkdir -p "$MANY"
  find "$SRC" -name '*.rs' -size -64k | head -n 1000 | while read -r f; do cp "$f" "$MANY/$(echo "$f" | md5sum | cut -c1-12).rs"; done
fi
python3 - "$BIN" "$TREE" "$MANY" "$RUNS" <<'PY'
import json, resource, statistics, subprocess, sys, time, os
bin_, tree, many, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
files = sum(len(f) for _, _, f in os.walk(tree))
print(f"tree: {tree} ({files} files)")

def timed(cmd, cwd):
    # stdin must not be a pipe: rg and fd would search it instead of the folder.
    subprocess.run(cmd, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL)  # warm the page cache
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000

def peak_rss_mb(cmd, cwd):
    code = ("import resource,subprocess,sys;subprocess.run(sys.argv[2:],cwd=sys.argv[1],capture_output=True);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, cwd] + cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout
    return int(out.strip()) / 1024

def grep(pattern, fixed=False):
    args = {"pattern": pattern, "total_max_matches": 1000000000}
    if fixed:
        args["fixed_strings"] = True
    return [bin_, "call", "grep_search", json.dumps(args), "--root", tree]

rows = []
for label, pat, fixed, rg_extra in [
    ("literal 'unsafe fn'", "unsafe fn", True, ["-F"]),
    ("literal 'impl' (many matches)", "impl", True, ["-F"]),
    ("regex 'fn \\w+_mut\\('", r"fn \w+_mut\(", False, []),
    ("rare 'ZqXwVb_not_here'", "ZqXwVb_not_here", True, ["-F"]),
]:
    a = timed(grep(pat, fixed), tree)
    b = timed(["rg", "-n", "-i"] + rg_extra + [pat, "."], tree)
    rows.append((f"grep_search {label}", a, f"rg -n -i {label}", b, 1.3))
a = timed([bin_, "call", "glob", json.dumps({"pattern": "**/*.rs"}), "--root", tree], tree)
b = timed(["fdfind", "-g", "*.rs", "."], tree)
rows.append(("glob '**/*.rs'", a, "fdfind -g '*.rs'", b, 1.5))
print(f"{'toolbelt':44} {'ms':>9}   {'yardstick':36} {'ms':>9}  ratio  target")
for x, a, y, b, target in rows:
    r = a / b
    print(f"{x:44} {a:9.1f}   {y:36} {b:9.1f}  {r:5.2f}  <= {target} {'ok' if r <= target else 'OVER'}")

size = sum(os.path.getsize(os.path.join(many, f)) for f in os.listdir(many))
cmd = [bin_, "call", "read_many_files", json.dumps({"include": ["**/*.rs"]}), "--root", many]
ms = timed(cmd, many)
print(f"read_many_files: {len(os.listdir(many))} files, {size/1e6:.1f} MB in {ms:.1f} ms = {size/1e6/(ms/1000):.0f} MB/s, peak RSS {peak_rss_mb(cmd, many):.1f} MB")
print(f"grep_search peak RSS over the whole tree (rare string): {peak_rss_mb(grep('ZqXwVb_not_here', True), tree):.1f} MB (target < 64 MB)")
default_limit = [bin_, "call", "grep_search", json.dumps({"pattern": "fn"}), "--root", tree]
print(f"grep_search peak RSS, common word with the default 100-match limit: {peak_rss_mb(default_limit, tree):.1f} MB")
PY
