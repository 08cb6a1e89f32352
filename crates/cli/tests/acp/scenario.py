#!/usr/bin/env python3
"""Drives `toolbelt acp` through one editor session with the official Python ACP SDK
(`agent-client-protocol`), as an editor would, and writes what it saw as JSON.

Usage: scenario.py AGENT PROJECT OUT.json
The model is the test's fake server (GOOGLE_GEMINI_BASE_URL); its answers follow the steps
below in order. The editor has notes.txt open with an unsaved line, reads and writes files
itself (fs/*), and answers each permission request as the step says.
"""
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

UNSAVED = "(an unsaved line in the editor)\n"
MARKER = "sleep 17.25"


def dump(m):
    return m.model_dump(by_alias=True, exclude_none=True, mode="json")


class Editor(Client):
    def __init__(self):
        self.events = []
        self.answer = "allow_once"
        self.buffers = {}

    def log(self, kind, **data):
        self.events.append({"kind": kind, "t": time.monotonic(), **data})

    async def request_permission(self, options, session_id, tool_call, **kw):
        self.log("permission", toolCall=dump(tool_call), options=[dump(o) for o in options], answer=self.answer)
        kind = {"allow_once": "allow_once", "allow_always": "allow_always", "reject": "reject_once"}[self.answer]
        chosen = next(o for o in options if o.kind == kind)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id))

    async def session_update(self, session_id, update, **kw):
        self.log("update", update=dump(update))

    async def read_text_file(self, path, session_id, limit=None, line=None, **kw):
        self.log("fs_read", path=path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        p = Path(path)
        if not p.exists():
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=p.read_text())

    async def write_text_file(self, content, path, session_id, **kw):
        self.log("fs_write", path=path, content=content)
        self.buffers.pop(path, None)
        Path(path).write_text(content)
        return WriteTextFileResponse()


def processes(pattern):
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [l.strip() for l in out.splitlines() if pattern in l and "ps -eo" not in l]


async def main():
    agent, proj, out = sys.argv[1], Path(sys.argv[2]).resolve(), sys.argv[3]
    notes = str(proj / "notes.txt")
    report = {"steps": []}
    editor = Editor()
    editor.buffers[notes] = (proj / "notes.txt").read_text() + UNSAVED
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False)
    async with spawn_agent_process(editor, agent, "acp", cwd=str(proj), env=dict(os.environ)) as (conn, proc):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps,
                                     client_info=Implementation(name="scenario", version="1"))
        report["initialize"] = dump(init)
        new = await conn.new_session(cwd=str(proj), mcp_servers=[])
        report["new_session"] = dump(new)
        sid = new.session_id

        async def step(name, prompt, answer="allow_once", during=None):
            editor.answer = answer
            n = len(editor.events)
            entry = {"name": name}
            task = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block(prompt)]))
            if during:
                entry.update(await during())
            try:
                r = await asyncio.wait_for(task, 60)
                entry["stop"] = r.stop_reason
            except Exception as e:  # noqa: BLE001 - the report says what happened
                entry["error"] = f"{type(e).__name__}: {e}"
            entry["events"] = editor.events[n:]
            report["steps"].append(entry)

        async def cancel_when_running():
            for _ in range(600):
                running = [e for e in editor.events if e["kind"] == "update"
                           and e["update"].get("status") == "in_progress"
                           and e["update"]["toolCallId"].startswith("run_shell_command")
                           and e["update"]["toolCallId"] not in seen_shells]
                if running and processes(MARKER):
                    break
                await asyncio.sleep(0.05)
            before = processes(MARKER)
            await conn.cancel(session_id=sid)
            return {"running_before_cancel": before}

        seen_shells = set()
        await step("read-grep", "What is in notes.txt, and where is banana?")
        await step("todos", "Plan the work.")
        await step("edit", "Uppercase apple, then cherry.", answer="allow_always")
        report["after_edit"] = (proj / "notes.txt").read_text()
        await step("shell", "Print three lines slowly.")
        seen_shells.update(e["update"]["toolCallId"] for e in editor.events
                           if e["kind"] == "update" and "toolCallId" in e["update"])
        await step("cancel", "Wait for a long time.", during=cancel_when_running)
        await asyncio.sleep(1.0)
        report["left_after_cancel"] = processes(MARKER)
        report["set_plan"] = dump(await conn.set_session_mode(session_id=sid, mode_id="plan") or {})
        await step("plan-edit", "Uppercase banana.")
        report["after_plan"] = (proj / "notes.txt").read_text()
        await conn.set_session_mode(session_id=sid, mode_id="default")
        await step("new-file", "Create new.txt.")
        report["new_file"] = (proj / "new.txt").read_text() if (proj / "new.txt").exists() else None
        await step("reject", "Create rejected.txt.", answer="reject")
        report["rejected_exists"] = (proj / "rejected.txt").exists()
        try:
            await conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
            report["unknown_session"] = "answered"
        except Exception as e:  # noqa: BLE001
            report["unknown_session"] = f"{type(e).__name__}: {e}"
    # A new agent process: the session is loaded again and its history replayed.
    loader = Editor()
    async with spawn_agent_process(loader, agent, "acp", cwd=str(proj), env=dict(os.environ)) as (conn, proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps,
                              client_info=Implementation(name="scenario", version="1"))
        loaded = await conn.load_session(cwd=str(proj), session_id=sid, mcp_servers=[])
        report["load"] = {"response": dump(loaded) if loaded else None, "events": loader.events}
    Path(out).write_text(json.dumps(report, indent=1))


asyncio.run(main())
