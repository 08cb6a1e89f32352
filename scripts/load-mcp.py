#!/usr/bin/env python3
"""Load test of `toolbelt mcp` (issue 20): CLIENTS clients x CALLS mixed calls each, malformed
ones included, over stdio (one server per client, requests pipelined WINDOW deep) and over
Streamable HTTP (one server, one session per client), on loopback; stops by itself.

Checks that every request is answered exactly once (with its own id) and every malformed line
with one `id: null` error, and prints answers, errors, calls/s and the servers' RSS after the
warm-up, at the end, and at peak.

Usage: scripts/load-mcp.py [BINARY] [--clients N] [--calls N] [--only stdio|http]
(BINARY defaults to target/release/toolbelt.)
"""
import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("binary", nargs="?", default="target/release/toolbelt")
ap.add_argument("--clients", type=int, default=16)
ap.add_argument("--calls", type=int, default=10_000)
ap.add_argument("--window", type=int, default=16)
ap.add_argument("--only", choices=["stdio", "http"])
args = ap.parse_args()
BIN = os.path.abspath(args.binary)

work = tempfile.mkdtemp(prefix="toolbelt-load-")
root = os.path.join(work, "proj")
home = os.path.join(work, "home")
os.makedirs(os.path.join(root, "src"))
os.makedirs(home)
for i in range(20):
    with open(os.path.join(root, "src", f"f{i}.txt"), "w") as f:
        f.write("alpha beta gamma\n" * 50)
ENV = {**os.environ, "HOME": home, "TOOLBELT_HOME": os.path.join(home, ".toolbelt")}

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(name, arguments):
    return {"method": "tools/call", "params": {"name": name, "arguments": arguments}}


# One cycle of the mix; `None` is a malformed line.
MIX = [
    call("read_file", {"file_path": "src/f1.txt"}),
    call("list_directory", {"dir_path": "src"}),
    call("glob", {"pattern": "**/*.txt"}),
    call("grep_search", {"pattern": "gamma", "total_max_matches": 5}),
    {"method": "tools/list"},
    {"method": "ping"},
    call("no_such_tool", {}),
    call("read_file", {"file_path": 5}),
    None,
    {"method": "tools/call"},
]


def message(i):
    """The i-th message of a client: (bytes, id or None)."""
    m = MIX[i % len(MIX)]
    if m is None:
        return b'{"jsonrpc":"2.0","id":' + str(i + 1).encode() + b',"method":', None
    m = {"jsonrpc": "2.0", "id": i + 1, **m}
    return json.dumps(m).encode(), i + 1


def rss(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.answers = self.errors = self.parse_errors = self.lost = self.duplicates = 0
        self.wrong = []

    def add(self, **kw):
        with self.lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)


def stdio_client(tally, pids, warm):
    p = subprocess.Popen([BIN, "mcp", "--root", root], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root, env=ENV)
    pids.append(p.pid)
    p.stdin.write(json.dumps(INIT).encode() + b"\n" + json.dumps(INITIALIZED).encode() + b"\n")
    p.stdin.flush()
    json.loads(p.stdout.readline())
    seen, expected_null = set(), 0
    pending = 0
    sent = 0

    def read_one():
        nonlocal pending
        a = json.loads(p.stdout.readline())
        pending -= 1
        if a.get("id") is None:
            tally.add(parse_errors=1)
        elif a["id"] in seen:
            tally.add(duplicates=1)
        else:
            seen.add(a["id"])
            tally.add(answers=1, errors=int("error" in a or bool(a.get("result", {}).get("isError"))))

    while sent < args.calls:
        line, mid = message(sent)
        p.stdin.write(line + b"\n")
        sent += 1
        pending += 1
        expected_null += mid is None
        if pending >= args.window or sent == args.calls:
            p.stdin.flush()
            while pending > (0 if sent == args.calls else args.window // 2):
                read_one()
        if sent == 1000:
            warm.append(rss(p.pid, "VmRSS"))
    want = {message(i)[1] for i in range(args.calls)} - {None}
    tally.add(lost=len(want - seen))
    p.stdin.close()
    p.wait(timeout=30)


def http_client(tally, port, warm, server_pid):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(body, session=None):
        h = dict(base)
        if session:
            h["mcp-session-id"] = session
        conn.request("POST", "/mcp", body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        return r, data

    r, _ = post(json.dumps(INIT).encode())
    session = r.getheader("mcp-session-id")
    post(json.dumps(INITIALIZED).encode(), session)
    seen = set()
    for i in range(args.calls):
        line, mid = message(i)
        r, data = post(line, session)
        answers = []
        if r.getheader("content-type", "").startswith("text/event-stream"):
            for l in data.decode().splitlines():
                if l.startswith("data:") and l[5:].strip():
                    answers.append(json.loads(l[5:]))
        elif data.strip():
            answers.append(json.loads(data))
        if mid is None:
            ok = r.status == 400 and len(answers) == 1 and answers[0]["id"] is None
            tally.add(parse_errors=int(ok), lost=int(not ok))
            continue
        mine = [a for a in answers if a.get("id") == mid]
        if len(mine) != 1:
            tally.add(lost=1)
            continue
        a = mine[0]
        seen.add(mid)
        tally.add(answers=1, errors=int("error" in a or bool(a.get("result", {}).get("isError"))))
        if i == 1000:
            warm.append(rss(server_pid, "VmRSS"))
    conn.close()


def report(kind, tally, started, before, warm, after, peak):
    calls = args.clients * args.calls
    secs = time.time() - started
    print(f"{kind}: {args.clients} clients x {args.calls} calls = {calls}: "
          f"{tally.answers} answers ({tally.errors} of them errors by design), "
          f"{tally.parse_errors} parse errors answered, {tally.lost} lost, {tally.duplicates} duplicated; "
          f"{calls / secs:,.0f} calls/s over {secs:.1f} s; RSS kB after start {before}, "
          f"after warm-up {warm}, at the end {after}, peak {peak}")
    return tally.lost == 0 and tally.duplicates == 0


ok = True
if args.only in (None, "stdio"):
    tally, pids, warm = Tally(), [], []
    started = time.time()
    threads = [threading.Thread(target=stdio_client, args=(tally, pids, warm)) for _ in range(args.clients)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    before = max(rss(p, "VmRSS") for p in list(pids)) if pids else 0
    ends, peaks = [], []

    def watch():
        while any(t.is_alive() for t in threads):
            for p in list(pids):
                try:
                    ends.append(rss(p, "VmRSS"))
                    peaks.append(rss(p, "VmHWM"))
                except OSError:
                    pass
            time.sleep(0.2)
    w = threading.Thread(target=watch)
    w.start()
    for t in threads:
        t.join()
    w.join()
    ok &= report("stdio (per server)", tally, started, before, max(warm or [0]),
                 ends[-1] if ends else 0, max(peaks or [0]))

if args.only in (None, "http"):
    server = subprocess.Popen([BIN, "mcp", "--http", "127.0.0.1:0", "--root", root,
                               "--max-sessions", str(args.clients * 2)],
                              stderr=subprocess.PIPE, cwd=root, env=ENV)
    seen_text = b""
    while b"/mcp" not in seen_text:
        seen_text += server.stderr.read1(256)
    port = int(re.search(rb":(\d+)/mcp", seen_text).group(1))
    threading.Thread(target=lambda: server.stderr.read(), daemon=True).start()
    before = rss(server.pid, "VmRSS")
    tally, warm = Tally(), []
    started = time.time()
    threads = [threading.Thread(target=http_client, args=(tally, port, warm, server.pid)) for _ in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok &= report("http (one server)", tally, started, before, max(warm or [0]),
                 rss(server.pid, "VmRSS"), rss(server.pid, "VmHWM"))
    server.terminate()
    server.wait(timeout=30)

sys.exit(0 if ok else 1)
