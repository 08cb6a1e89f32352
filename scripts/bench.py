#!/usr/bin/env python3
"""The performance table (run by scripts/bench.sh, which installs the yardsticks and fetches the
corpora first). Every figure is measured in this run: hyperfine for wall times (whole processes,
warm page cache, medians), wait4's rusage for peak RSS, and `cargo bench --bench mcp` for the
MCP rates."""

import argparse
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RARE = "ZqXwVbRareToken"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--node-fs", default="")
    ap.add_argument("--quick", action="store_true", help="fewer runs (a rough table)")
    ap.add_argument("--no-huge", action="store_true", help="skip the generated 200,000-file tree")
    ap.add_argument("--no-mcp", action="store_true", help="skip the MCP comparison")
    a = ap.parse_args()
    baseline = os.environ.get("TOOLBELT_BENCH_BASELINE", "")
    bench = Bench(a.bin, a.cache, baseline, a.quick)
    gem, ruff = f"{a.cache}/gemini-cli", f"{a.cache}/ruff"
    print(machine())
    huge = None
    try:
        bench.grep_rows("gemini-cli", gem, "getDirectoryContextString")
        bench.grep_rows("ruff", ruff, "needless_bool")
        bench.glob_row("gemini-cli", gem, "ts")
        bench.glob_row("ruff", ruff, "rs")
        if not a.no_huge:
            huge = tempfile.mkdtemp(prefix="huge-", dir=a.cache)
            t = time.perf_counter()
            files, size = generate_huge(huge)
            print(f"generated {files:,} files / {size / 1e9:.2f} GB in {time.perf_counter() - t:.0f} s: {huge}")
            bench.grep_rows("huge", huge, RARE, runs=5)
            bench.limit_row("huge", huge, "return")
            bench.glob_row("huge", huge, "rs", runs=5)
        ignored = tempfile.mkdtemp(prefix="ignored-", dir=a.cache)
        t = time.perf_counter()
        n = generate_ignored(ignored)
        print(f"generated {n:,} files with ignore files in {time.perf_counter() - t:.0f} s: {ignored}")
        bench.grep_rows("ignore-heavy", ignored, "IgnoreHeavyNeedle", same_files=True)
        bench.glob_row("ignore-heavy", ignored, "ts", same_files=True)
        shutil.rmtree(ignored, ignore_errors=True)
        bench.read_many_row(gem, "packages/core/src/**/[a-s]*.d.ts")
        bench.startup_row()
        if not a.no_mcp:
            bench.mcp_row(a.node_fs)
    finally:
        if huge:
            shutil.rmtree(huge, ignore_errors=True)
        shutil.rmtree(bench.small, ignore_errors=True)
    bench.print_table()
    sys.exit(1 if bench.differences else 0)


def machine():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"machine: {os.cpu_count()} cores ({cpu or platform.machine()}), "
            f"{platform.system()} {platform.release()}, {time.strftime('%Y-%m-%d %H:%M %Z')}")


def generate_huge(root, files=200_000, target_bytes=2_000_000_000):
    """A deterministic tree: 200 packages x 10 modules x 100 files of source-like text, about
    10 KB each; the rare token sits in three files."""
    rng = random.Random(22)
    words = ["fn", "let", "mut", "return", "impl", "struct", "match", "self", "value", "count",
             "name", "path", "error", "result", "config", "buffer", "index", "items", "total",
             "const", "if", "else", "for", "while", "pub", "use", "type", "Some", "None", "Ok"]
    lines = []
    size = 0
    while size < 4 << 20:
        n = rng.randint(2, 12)
        line = "    " * rng.randint(0, 3) + " ".join(rng.choice(words) + (str(rng.randint(0, 99)) if rng.random() < 0.3 else "") for _ in range(n)) + ";\n"
        lines.append(line)
        size += len(line)
    pool = "".join(lines).encode()
    pool += pool
    exts = ["rs", "ts", "py", "md", "txt", "json", "c", "go"]
    avg = target_bytes // files
    planted = {1234, 98765, 187654}
    total = 0
    i = 0
    for p in range(200):
        for m in range(10):
            d = f"{root}/pkg{p:03}/mod{m}"
            os.makedirs(d)
            for f in range(100):
                length = rng.randint(avg // 5, avg * 9 // 5)
                off = rng.randrange(0, len(pool) // 2)
                start = pool.index(b"\n", off) + 1
                body = pool[start:start + length]
                body = body[:body.rfind(b"\n") + 1]
                if i in planted:
                    body += f"    let marker = \"{RARE}\";\n".encode()
                with open(f"{d}/file{f:02}.{exts[rng.randrange(len(exts))]}", "wb") as fh:
                    fh.write(body)
                total += len(body)
                i += 1
    return i, total


ROOT_GITIGNORE = """# dependencies
node_modules/
/vendor/
bower_components/
jspm_packages/
# build output
/dist
/out/
**/build/
*.o
*.a
*.so
*.class
*.pyc
**/__pycache__/
*.egg-info/
.eggs/
target/
!target/keep/
# logs and temporary files
*.log
!important.log
logs/
*.tmp
*.swp
*~
.DS_Store
Thumbs.db
# coverage and caches
coverage/
.nyc_output/
.cache/
.pytest_cache/
.mypy_cache/
.tox/
htmlcov/
# editors
.idea/
.vscode/*
!.vscode/settings.json
*.sublime-*
# environments
.env
.env.*
!.env.example
venv/
.venv/
# generated sources
**/generated/**
!**/generated/README.md
src/**/*.gen.ts
*.min.js
*.map
# data
/data/raw/
/data/*.csv
!/data/sample.csv
fixtures/large/
# docs build
docs/_build/
site/
# misc
*.bak
*.orig
*.rej
secrets.*
!secrets.example.json
packages/*/lib/
packages/**/tmp/
"""


def generate_ignored(root, packages=24):
    """A repository as people have them: a 70-line root .gitignore with negations, `**/` and
    anchored rules, a .gitignore in each of 8 packages, a .geminiignore, ignored dependency and
    build folders holding most of the files, and source nested 10 folders deep. Deterministic;
    about 60,000 files of which a third are not ignored."""
    rng = random.Random(37)
    os.makedirs(f"{root}/.git")
    with open(f"{root}/.git/HEAD", "w") as f:
        f.write("ref: refs/heads/main\n")
    with open(f"{root}/.gitignore", "w") as f:
        f.write(ROOT_GITIGNORE)
    with open(f"{root}/.geminiignore", "w") as f:
        f.write("*.snap\nfixtures/\n/docs/internal/\n")
    body = "export function f{n}(x: number): number {{\n  return x * {n} + {m};\n}}\n" * 3
    count = 0

    def put(path, text):
        nonlocal count
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        count += 1

    for p in range(packages):
        pkg = f"{root}/packages/pkg{p:02}"
        if p < 8:
            put(f"{pkg}/.gitignore", f"*.local.ts\n/scratch/\n!keep{p}.local.ts\nsnapshots/\n**/*.bak{p}\n")
        for m in range(6):
            deep = f"{pkg}/src/" + "/".join(f"l{d}" for d in range(rng.randint(2, 10)))
            for k in range(40):
                ext = rng.choice(["ts", "ts", "ts", "rs", "py", "json", "md"])
                put(f"{deep}/m{m}_f{k}.{ext}", body.format(n=k, m=m))
            put(f"{deep}/out{m}.gen.ts", body.format(n=1, m=m))
            put(f"{deep}/x{m}.local.ts", body.format(n=2, m=m))
            put(f"{deep}/trace{m}.log", "log line\n" * 20)
        put(f"{pkg}/important.log", "keep me\n")
        for b in range(30):
            put(f"{pkg}/build/chunk{b}.ts", body.format(n=b, m=0))
            put(f"{pkg}/lib/index{b}.ts", body.format(n=b, m=1))
        put(f"{pkg}/src/generated/README.md", "generated\n")
        for g in range(20):
            put(f"{pkg}/src/generated/api{g}.ts", body.format(n=g, m=2))
        for s in range(15):
            put(f"{pkg}/fixtures/case{s}.ts", body.format(n=s, m=3))
            put(f"{pkg}/__snapshots__/case{s}.snap", "snapshot\n")
    # Dependencies: most of the files, all ignored.
    for d in range(120):
        dep = f"{root}/node_modules/dep{d:03}"
        for k in range(rng.randint(100, 220)):
            sub = f"{dep}/lib/{'x/' * (k % 4)}"
            put(f"{sub}f{k}.ts", body.format(n=k, m=d))
    for b in range(400):
        put(f"{root}/dist/bundle{b}.js", body.format(n=b, m=9))
        put(f"{root}/target/debug/obj{b}.rs", body.format(n=b, m=8))
    put(f"{root}/target/keep/kept.rs", body.format(n=0, m=0))
    put(f"{root}/.env", "SECRET=1\n")
    put(f"{root}/.env.example", "SECRET=\n")
    put(f"{root}/src/main.ts", body.format(n=0, m=0) + "const needle = 'IgnoreHeavyNeedle';\n")
    return count


def real_matches(answer, root):
    """Whether every `L<n>: text` match line of a grep_search answer is line n of its file."""
    lines, count = None, 0
    for line in answer.decode().split("\n"):
        if line.startswith("File: "):
            with open(os.path.join(root, line[6:]), encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
        m = re.match(r"L(\d+): (.*)$", line)
        if m:
            if lines is None or lines[int(m.group(1)) - 1].rstrip() != m.group(2).rstrip():
                return False
            count += 1
    return count > 0


class Bench:
    def __init__(self, bin_, cache, baseline, quick):
        self.bin, self.baseline, self.quick = bin_, baseline, quick
        self.rows = []
        self.notes = []
        self.phases = []
        self.commands = []
        self.differences = []
        self.home = f"{cache}/home"
        os.makedirs(self.home, exist_ok=True)
        # No user settings or policies of this machine: every run sees the defaults.
        self.env = dict(os.environ, TOOLBELT_HOME=self.home, GEMINI_CLI_HOME=self.home, HOME=self.home)
        self.small = tempfile.mkdtemp(prefix="small-", dir=cache)
        with open(f"{self.small}/small.txt", "w") as fh:
            fh.write("line one\nline two\n")

    def tb(self, tool, args, root, bin_=None):
        return [bin_ or self.bin, "call", tool, json.dumps(args, separators=(",", ":")), "--root", root]

    def hyperfine(self, cwd, commands, runs=None, shell=False, warmup=2):
        """Median wall times in ms of the named commands, run in `cwd`. In four rounds (one
        with --quick or few runs), the order reversed every other round and every run of a
        command pooled: a neighbour's burst or the machine's drift then weighs on both sides
        of a ratio, not on whichever command hyperfine happened to run second."""
        runs = runs or (5 if self.quick else 20)
        rounds = 1 if self.quick or runs < 8 else 4
        times = {name: [] for name, _ in commands}
        for r in range(rounds):
            order = commands if r % 2 == 0 else commands[::-1]
            with tempfile.NamedTemporaryFile(suffix=".json") as out:
                # --ignore-failure: rg exits 1 when it finds nothing.
                cmd = ["hyperfine", "--style", "none", "--ignore-failure", "--warmup", str(warmup),
                       "--runs", str(max(2, runs // rounds)), "--export-json", out.name]
                if not shell:
                    cmd.append("-N")
                for name, c in order:
                    line = c if isinstance(c, str) else shlex.join(c)
                    if (shown := f"(cd {shlex.quote(cwd)} && {line})") not in self.commands:
                        self.commands.append(shown)
                    cmd += ["-n", name, line]
                # hyperfine's warnings (outliers, a slow first run) would come once a round.
                done = subprocess.run(cmd, cwd=cwd, env=self.env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
                if done.returncode != 0:
                    raise SystemExit(f"hyperfine failed:\n{done.stderr}")
                for result in json.load(open(out.name))["results"]:
                    times[result["command"]] += result["times"]
        return [statistics.median(times[name]) * 1000 for name, _ in commands]

    def peak_rss_mib(self, cmd, cwd):
        """GNU time's %M: wait4's figure from Python itself would start from Python's own size
        (a forked child keeps its parent's high-water mark across exec)."""
        with tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as out:
            subprocess.run(["/usr/bin/time", "-o", out.name, "-f", "%M"] + cmd, cwd=cwd, env=self.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            return int(out.read().split()[-1]) / 1024

    def check_output(self, label, cmd, cwd, limited=False):
        """Runs a toolbelt command; with a baseline binary, runs that too and compares.
        `limited`: a search cut at its match limit, whose matches depend on which files the
        walker threads reached first (in both builds, as in upstream's ripgrep): the two
        answers must then agree on their first line (the count), and every match either shows
        must be that line of that file."""
        out = subprocess.run(cmd, cwd=cwd, env=self.env, capture_output=True, stdin=subprocess.DEVNULL)
        if out.returncode != 0:
            raise SystemExit(f"{label}: {shlex.join(cmd)} failed ({out.returncode}): {out.stderr.decode()[:500]}")
        if self.baseline:
            old = subprocess.run([self.baseline] + cmd[1:], cwd=cwd, env=self.env, capture_output=True,
                                 stdin=subprocess.DEVNULL)
            # The saved-output file of a cut answer is named after the call (a timestamp).
            norm = lambda b: re.sub(rb"__[a-z_]+_\d{10,}_\d+", b"__<call id>", b)
            same = norm(old.stdout) == norm(out.stdout) and old.returncode == out.returncode
            if limited and not same and old.returncode == out.returncode:
                first = lambda b: b.split(b"\n", 1)[0]
                same = first(old.stdout) == first(out.stdout) and all(
                    real_matches(b, cwd) for b in (old.stdout, out.stdout))
            if not same:
                self.differences.append(label)
            print(f"  output of {label}: {'identical to the baseline' if same else 'DIFFERS from the baseline'} ({len(out.stdout):,} bytes)")
        return out.stdout

    def same(self, label, ours, theirs):
        """The files toolbelt names against the yardstick's: they must be the same."""
        ok = ours == theirs
        if not ok:
            self.differences.append(label)
            only_ours, only_theirs = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
            print(f"  {label}: only toolbelt {only_ours[:5]} ({len(only_ours)}), only the yardstick {only_theirs[:5]} ({len(only_theirs)})")
        print(f"  files of {label}: {'the same as the yardstick' if ok else 'DIFFER from the yardstick'} ({len(ours)} files)")

    def add(self, work, ours, yard_name, yard, target, rss=None):
        self.rows.append((work, ours, yard_name, yard, target, rss))
        print(f"  {work}: {ours:.1f} ms vs {yard_name} {yard:.1f} ms = {ours / yard:.2f}x")

    def breakdown(self, what, cmd, cwd, runs=20):
        """The phases of one call (TOOLBELT_TIMINGS), averaged over `runs` runs."""
        sums, order = {}, []
        for _ in range(runs):
            err = subprocess.run(cmd, cwd=cwd, env=dict(self.env, TOOLBELT_TIMINGS="1"), capture_output=True,
                                 stdin=subprocess.DEVNULL, text=True).stderr
            for m in re.finditer(r"^  (.+?)\s+(\d+) µs$", err, re.M):
                name = m.group(1).strip()
                if name not in sums:
                    order.append(name)
                sums[name] = sums.get(name, 0) + int(m.group(2))
        self.phases.append((what, [(n, sums[n] / runs) for n in order]))

    def grep_rows(self, name, root, literal, runs=None, same_files=False):
        cmd = self.tb("grep_search", {"pattern": literal}, root)
        out = self.check_output(f"grep_search {literal!r} on {name}", cmd, root)
        rg_cmd = ["rg", "-n", "-i", literal]
        if same_files:
            # The same answer as ripgrep given the .geminiignore too: the files with matches.
            rg_cmd = ["rg", "-n", "-i", "--ignore-file", ".geminiignore", literal]
            theirs = subprocess.run(["rg", "-l", "-i", "--ignore-file", ".geminiignore", literal], cwd=root,
                                    capture_output=True, text=True).stdout.split()
            ours_files = re.findall(r"^File: (.+)$", out.decode(), re.M)
            self.same(f"grep_search on {name}", sorted(ours_files), sorted(theirs))
        ours, rg = self.hyperfine(root, [("toolbelt", cmd), ("rg", rg_cmd)], runs)
        rss = self.peak_rss_mib(cmd, root)
        rg_rss = self.peak_rss_mib(["rg", "-n", "-i", literal], root)
        self.add(f"grep_search rare literal, {name}", ours, "`rg -n -i`", rg, 1.0,
                 (rss, rg_rss, 12 if name != "huge" else None))
        if name == "ruff":
            self.breakdown("grep_search on ruff (small tree)", cmd, root)

    def limit_row(self, name, root, word):
        cmd = self.tb("grep_search", {"pattern": word}, root)
        self.check_output(f"grep_search {word!r} (100-match limit) on {name}", cmd, root, limited=True)
        yard = f"rg -n -i {word} | head -n 100"
        # A few milliseconds, most of it the two processes' start: many runs.
        ours, rg = self.hyperfine(root, [("toolbelt", shlex.join(cmd)), ("rg", yard)], shell=True,
                                  runs=20 if self.quick else 100)
        self.add(f"grep_search common word, 100-match limit, {name}", ours, f"`{yard}`", rg, 1.0)

    def glob_row(self, name, root, ext, runs=None, same_files=False):
        cmd = self.tb("glob", {"pattern": f"**/*.{ext}"}, root)
        out = self.check_output(f"glob **/*.{ext} on {name}", cmd, root)
        fd_cmd = ["fdfind", "-g", f"*.{ext}"]
        if same_files:
            fd_cmd = ["fdfind", "--ignore-file", ".geminiignore", "-g", f"*.{ext}"]
            theirs = subprocess.run(fd_cmd, cwd=root, capture_output=True, text=True).stdout.split()
            ours_files = [os.path.relpath(l, root) for l in out.decode().split("\n") if l.startswith("/")]
            self.same(f"glob on {name}", sorted(ours_files), sorted(theirs))
        ours, fd = self.hyperfine(root, [("toolbelt", cmd), ("fd", fd_cmd)], runs)
        self.add(f"glob `**/*.{ext}`, {name}", ours, f"`fdfind -g '*.{ext}'`", fd, 1.0)

    def read_many_row(self, root, pattern):
        cmd = self.tb("read_many_files", {"include": [pattern]}, root)
        out = self.check_output(f"read_many_files {pattern} on gemini-cli", cmd, root)
        listed = subprocess.run(["rg", "--files", "-g", pattern], cwd=root, capture_output=True, text=True).stdout.split()
        size = sum(os.path.getsize(os.path.join(root, f)) for f in listed)
        yard = f"rg --files -g {shlex.quote(pattern)} | xargs cat"
        ours, cat = self.hyperfine(root, [("toolbelt", shlex.join(cmd)), ("cat", yard)], shell=True)
        rss = self.peak_rss_mib(cmd, root)
        # The process's own floor (binary pages, runtime): the peak of a read of a tiny file.
        floor = self.peak_rss_mib(self.tb("read_file", {"file_path": "small.txt"}, self.small), self.small)
        # And the same call that matches nothing: read_many_files' own code, walk and threads.
        empty = self.peak_rss_mib(self.tb("read_many_files", {"include": ["**/*.no-such-extension"]}, root), root)
        out_mib = len(out) / (1 << 20)
        work = f"read_many_files, {len(listed)} files / {size / 1e6:.1f} MB"
        self.add(work, ours, "`rg --files … | xargs cat`", cat, 1.2)
        self.notes.append(
            f"| peak RSS: {work} | {rss:.1f} MiB = {floor:.1f} MiB of any call + {rss - floor:.1f} MiB "
            f"for {out_mib:.2f} MiB of output ({(rss - floor) / out_mib:.1f}× the output; target < 2× "
            f"{'ok' if rss - floor < 2 * out_mib else 'MISSED'}); the same call matching nothing: "
            f"{empty:.1f} MiB, so {rss - empty:.1f} MiB ({(rss - empty) / out_mib:.1f}×) grows with the output | | | |")

    def startup_row(self):
        cmd = self.tb("read_file", {"file_path": "small.txt"}, self.small)
        self.check_output("read_file small.txt", cmd, self.small)
        # A few milliseconds each, on a machine whose neighbours come and go: three rounds,
        # the yardstick first in every other one, and the round of the middle ratio is shown.
        rounds = []
        for i in range(3):
            pair = [("toolbelt", cmd), ("rg", ["rg", "--version"]), ("true", ["/bin/true"])]
            order = pair if i % 2 == 0 else [pair[1], pair[0], pair[2]]
            times = dict(zip([n for n, _ in order],
                             self.hyperfine(self.small, order, runs=100 if self.quick else 300, warmup=30)))
            rounds.append((times["toolbelt"] / times["rg"], times["toolbelt"], times["rg"], times["true"]))
        _, ours, rg, true = sorted(rounds)[1]
        print("  start-up rounds (toolbelt / rg --version): "
              + ", ".join(f"{o:.2f} / {r:.2f} ms = {q:.2f}x" for q, o, r, _ in rounds), file=sys.stderr)
        self.add("cold `call read_file`, small file", ours, f"`rg --version` (`/bin/true` {true:.1f} ms)", rg, 1.5)
        self.breakdown("cold `call read_file`", cmd, self.small)

    def mcp_row(self, node_fs):
        env = dict(os.environ, TOOLBELT_BENCH_NODE_FS=node_fs)
        cmd = ["cargo", "bench", "-q", "-p", "toolbelt", "--bench", "mcp"]
        self.commands.append(f"TOOLBELT_BENCH_NODE_FS={shlex.quote(node_fs)} {shlex.join(cmd)}")
        text = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        ours = sorted(float(m) for m in re.findall(r"minimal client, unpinned: read_file, 1 in flight: (\d+)", text))
        node = re.findall(r"minimal client, unpinned: reference Node filesystem server.*?: (\d+)", text)
        if not ours or not node:
            raise SystemExit(f"unexpected output of the MCP bench:\n{text}")
        med, node = ours[len(ours) // 2], float(node[0])
        # For scale: `ping` on the same server and client (the transport and rmcp without a
        # tool), and both servers with client and server sharing one CPU (no wake-up of an
        # idle CPU, which a virtual machine pays dearly for).
        def med_of(pattern):
            found = sorted(float(m) for m in re.findall(pattern, text))
            return found[len(found) // 2] if found else None
        ping = med_of(r"minimal client, unpinned: ping, 1 in flight: (\d+)")
        one_cpu = med_of(r"minimal client, client and server on one CPU: read_file, 1 in flight: (\d+)")
        node_one = med_of(r"minimal client, client and server on one CPU: reference Node filesystem server.*?: (\d+)")
        scale = f"; `ping` on the same server {ping:,.0f} /s" if ping else ""
        if one_cpu and node_one:
            scale += f"; client and server on one CPU: {one_cpu:,.0f} /s vs Node {node_one:,.0f} /s = {one_cpu / node_one:.1f}×"
        # Rates, not times: the ratio is how many times more calls toolbelt serves.
        self.rows.append((f"MCP read_file, 1 in flight (calls/s{scale})", med, "Node filesystem server", node, ("min", 15.0), None))
        # What this machine allows any server: a model server that spins for a given time
        # before each answer (the client's idle CPU is halted, and waking it costs, once its
        # wait passes a few microseconds).
        curve = re.findall(r"model server answering after (\d+) us of work: (\d+)", text)
        if curve:
            need = 15.0 * node
            points = ", ".join(f"{us} µs: {float(r):,.0f}/s" for us, r in curve)
            self.notes.append(
                f"| MCP, any server on this machine: calls/s of a model server by its work per answer ({points}); "
                f"15× Node is {need:,.0f}/s | | | |")
        print(f"  MCP: toolbelt {med:.0f} calls/s, Node filesystem server {node:.0f} calls/s = {med / node:.1f}x")

    def print_table(self):
        print("\n| work | toolbelt | yardstick | ratio | target |")
        print("|---|---|---|---|---|")
        over = []
        for work, ours, yard_name, yard, target, rss in self.rows:
            yard_name = yard_name.replace("|", "\\|")  # a pipe inside a Markdown table cell
            if isinstance(target, tuple):
                ratio = ours / yard
                ok = ratio >= target[1]
                print(f"| {work} | {ours:,.0f} /s | {yard_name} {yard:,.0f} /s | {ratio:.1f}× | ≥ {target[1]:g}× {'ok' if ok else 'MISSED'} |")
            else:
                ratio = ours / yard
                ok = ratio <= target
                print(f"| {work} | {ours:.1f} ms | {yard_name} {yard:.1f} ms | {ratio:.2f}× | ≤ {target}× {'ok' if ok else 'MISSED'} |")
            if not ok:
                over.append(work)
        for work, _, _, _, _, rss in self.rows:
            if rss:
                mine, theirs, limit = rss
                beside = f", rg {theirs:.1f} MiB" if theirs else ""
                verdict = f" (target ≤ {limit:.1f} MiB {'ok' if mine <= limit else 'MISSED'})" if limit else ""
                if limit and mine > limit:
                    over.append(f"peak RSS of {work}")
                print(f"| peak RSS: {work} | {mine:.1f} MiB{beside}{verdict} | | | |")
        for n in self.notes:
            print(n)
            if "MISSED" in n:
                over.append(n.split("|")[1].strip())
        for what, phases in self.phases:
            print(f"\nphases of {what} (µs, mean of 20 runs; TOOLBELT_TIMINGS=1):")
            for name, us in phases:
                print(f"  {name:<32} {us:8.0f}")
        print("\ncommands:")
        for c in dict.fromkeys(self.commands):
            print(f"  {c}")
        if self.differences:
            print(f"\noutputs that differ from the baseline: {', '.join(self.differences)}")
        print(f"\n{len(self.rows) - len([o for o in over if not o.startswith('peak')])} of {len(self.rows)} timings and rates on target; "
              f"missed: {', '.join(over) if over else 'none'}")


if __name__ == "__main__":
    main()
