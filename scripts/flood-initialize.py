#!/usr/bin/env python3
# Sends 20,000 MCP `initialize` requests to `toolbelt mcp --http` and prints its RSS before and
# after, and the status codes (issue 17: sessions are capped, so memory stays bounded).
# Usage: scripts/flood-initialize.py target/release/toolbelt
import os, re, socket, subprocess, sys, time
import tempfile
home = tempfile.mkdtemp()
p = subprocess.Popen([os.path.abspath(sys.argv[1]), "mcp", "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, cwd="/tmp", env={**os.environ, "HOME": home, "TOOLBELT_HOME": home + "/.tb"})
line = b""
while b"/mcp" not in line:
    line += p.stderr.read1(256)
port = int(re.search(rb":(\d+)/mcp", line).group(1))
body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}'
req = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
def rss():
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith("VmRSS"): return l.split()[1]
start = time.time(); codes = {}
before = rss()
for i in range(20000):
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(req)
    data = s.recv(64); s.close()
    c = data[9:12].decode(errors="replace"); codes[c] = codes.get(c, 0) + 1
print("rss before kB", before, "after kB", rss(), "codes", codes, "secs", round(time.time()-start,1))
p.kill()
