#!/usr/bin/env python3
"""Issue 47's table: each front door given one message of tiny JSON values just under its byte
limit (refused before it is parsed) and, where a door runs what it accepts, one of the costliest
values just within the budget. Prints, per door: the answer, how long it took, the peak resident
memory (VmHWM, or wait4's for one-shot commands) and the resident memory before the message and
three seconds after the answer.

    python3 scripts/bench-parsing.py [--bin target/release/toolbelt]

Needs GNU time (/usr/bin/time, Debian's `time` package) for the one-shot commands' peaks.
"""

import argparse
import json
import os
import re
import socket
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

MIB = 1 << 20


def zeros(n):
    return b"0," * (n - 1) + b"0"


def nested(n):
    return b'{"a":{"a":{"a":0}}},' * (n - 1) + b'{"a":{"a":{"a":0}}}'


def places():
    home, ws = tempfile.mkdtemp(), tempfile.mkdtemp()
    with open(os.path.join(ws, "a.txt"), "w") as f:
        f.write("alpha\n")
    return home, ws, dict(os.environ, HOME=home, TOOLBELT_HOME=home)


def kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


class Lines:
    """A JSON-RPC peer over a child's stdin and stdout."""

    def __init__(self, argv, env, cwd):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, cwd=cwd)

    def send(self, line):
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()

    def answer(self, i):
        while True:
            v = json.loads(self.p.stdout.readline())
            if v.get("id") == i and "method" not in v:
                return v

    def timed(self, i, line):
        t = time.time()
        self.send(line)
        return self.answer(i), time.time() - t


def row(door, message, answer, secs, peak_kb, before_kb=None, after_kb=None):
    kept = "" if before_kb is None else f"{before_kb // 1024} -> {after_kb // 1024} MiB"
    print(f"| {door} | {message} | {answer[:70]} | {secs:.2f} s | {peak_kb // 1024} MiB | {kept} |")


def mcp_stdio(tb):
    home, ws, env = places()
    s = Lines([tb, "mcp", "--approval-mode", "yolo", "--root", ws], env, ws)
    s.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}).encode())
    s.answer(0)
    s.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    pid = s.p.pid
    call = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"a.txt","x":[%s]}}}'
    before = kb(pid, "VmRSS")
    a, dt = s.timed(2, call % (2, zeros(15 * MIB // 2)))
    time.sleep(3)
    row("mcp stdio", "15 MiB of `0,`", a["error"]["message"], dt, kb(pid, "VmHWM"), before, kb(pid, "VmRSS"))
    before = kb(pid, "VmRSS")
    a, dt = s.timed(3, call % (3, nested(24_500)))
    peak = kb(pid, "VmHWM")
    time.sleep(3)
    row("mcp stdio", "98,000 values of nested objects (accepted)", "answered" if "result" in a else str(a),
        dt, peak, before, kb(pid, "VmRSS"))
    s.p.kill()


def mcp_http(tb):
    home, ws, env = places()
    p = subprocess.Popen([tb, "mcp", "--http", "127.0.0.1:0", "--root", ws], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env, cwd=ws)
    seen = b""
    while b"/mcp" not in seen:
        seen += p.stderr.read1(256)
    addr = re.search(rb"http://([0-9.:]+)/mcp", seen).group(1).decode()
    host, port = addr.split(":")
    body = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_todos","arguments":{"todos":[' + zeros((16 * MIB - 4096) // 2) + b"]}}}"
    before = kb(p.pid, "VmRSS")
    t = time.time()
    s = socket.create_connection((host, int(port)))
    s.sendall(f"POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    dt = time.time() - t
    time.sleep(3)
    status = out.split(b"\r\n")[0].decode()
    row("mcp --http", "16 MiB body of `0,`", status, dt, kb(p.pid, "VmHWM"), before, kb(p.pid, "VmRSS"))
    p.kill()


def acp(tb):
    home, ws, env = places()
    env.update(GEMINI_API_KEY="x", GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:9")
    s = Lines([tb, "acp"], env, ws)
    s.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": 1, "clientCapabilities": {}}}).encode())
    s.answer(0)
    s.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                       "params": {"cwd": ws, "mcpServers": []}}).encode())
    sid = s.answer(1)["result"]["sessionId"].encode()
    before = kb(s.p.pid, "VmRSS")
    a, dt = s.timed(2, b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"' + sid
                    + b'","prompt":[{"type":"text","text":"hi"}],"x":[' + zeros(31 * MIB // 2) + b"]}}")
    time.sleep(3)
    row("acp", "31 MiB of `0,`", str(a["error"].get("data")), dt, kb(s.p.pid, "VmHWM"), before, kb(s.p.pid, "VmRSS"))
    s.p.kill()


def rusage_peak_kb(argv, env, cwd, stdin):
    """The peak of a one-shot command, from GNU time (a child forked from this script would
    count the script's own memory until it execs)."""
    t = time.time()
    p = subprocess.run(["/usr/bin/time", "-f", "peak-kb %M", *argv], env=env, cwd=cwd, stdin=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace")
    peak = int(re.search(r"peak-kb (\d+)", err).group(1))
    return err.rsplit("peak-kb", 1)[0], time.time() - t, peak


def call(tb):
    home, ws, env = places()
    path = os.path.join(home, "args.json")
    with open(path, "wb") as f:
        f.write(b'{"todos":[' + zeros(23 * MIB) + b"]}")
    with open(path, "rb") as stdin:
        err, dt, peak = rusage_peak_kb([tb, "call", "write_todos", "-"], env, ws, stdin)
    row("call (stdin)", "46 MiB of `0,`", err.strip(), dt, peak)


def run(tb):
    home, ws, env = places()
    args = b'{"todos":[' + zeros(4 * MIB) + b"]}"
    chunk = b'{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"write_todos","args":' + args + b'}}]},"finishReason":"STOP"}]}'

    class Model(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"data: " + chunk + b"\r\n\r\n")

        def log_message(self, *_):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env.update(GEMINI_API_KEY="x", GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{srv.server_port}")
    err, dt, peak = rusage_peak_kb([tb, "run", "go"], env, ws, subprocess.DEVNULL)
    line = next((l for l in err.splitlines() if "not read" in l), err[:70])
    row("run (Gemini)", "8 MiB function call of `0,`", line, dt, peak)
    srv.shutdown()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/toolbelt")
    tb = os.path.abspath(ap.parse_args().bin)
    print("| door | message | answer | time | peak | resident before -> 3 s after |")
    print("|---|---|---|---|---|---|")
    for door in (mcp_stdio, mcp_http, acp, call, run):
        door(tb)


if __name__ == "__main__":
    main()
