#!/usr/bin/env python3
"""Drives an installed toolbelt as an MCP server with the official Python MCP SDK: starts
`COMMAND mcp --root DIR`, lists the tools, reads a file through read_file, and checks the
answer. Usage: drive.py COMMAND"""
import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(command: str) -> None:
    root = tempfile.mkdtemp(prefix="toolbelt-install-")
    state = tempfile.mkdtemp(prefix="toolbelt-state-")
    with open(os.path.join(root, "hello.txt"), "w") as f:
        f.write("hello from the installed package\n")
    env = {**os.environ, "TOOLBELT_HOME": state}
    params = StdioServerParameters(command=command, args=["mcp", "--root", root], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            # The SDK's field names changed between versions (serverInfo, server_info).
            info = getattr(init, "server_info", None) or getattr(init, "serverInfo")
            assert info.name == "toolbelt", info
            tools = {t.name for t in (await session.list_tools()).tools}
            for needed in ("read_file", "grep_search", "glob"):
                assert needed in tools, sorted(tools)
            result = await session.call_tool("read_file", {"file_path": "hello.txt"})
            text = "".join(c.text for c in result.content if c.type == "text")
            failed = getattr(result, "is_error", None) or getattr(result, "isError", False)
            assert not failed and "hello from the installed package" in text, result
    print(f"ok: {command} mcp served {len(tools)} tools and read a file")


asyncio.run(main(sys.argv[1]))
