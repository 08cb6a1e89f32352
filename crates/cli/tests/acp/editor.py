#!/usr/bin/env python3
"""Issue 50: what an editor user expects of `toolbelt acp` beyond the tools, driven with the
official Python ACP SDK: slash commands (listed and handled, not sent to the model), the model
list and a model switch, session/list and session/load in a new process, and sign-in (a
missing credential explained; Vertex AI with a service-account key against a loopback token
endpoint). Writes what it saw as JSON.

Usage: editor.py AGENT PROJECT OUT.json
Environment: the fake model's URL in GOOGLE_GEMINI_BASE_URL with GEMINI_API_KEY; the Vertex AI
service-account key file in SCENARIO_VERTEX_KEY. The model's answers, in order: "Hi.", a
summary for /compress, a token, "Hello from Vertex.".
"""
import asyncio
import json
import os
import sys
from pathlib import Path

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    RequestPermissionResponse,
)


def dump(m):
    return m.model_dump(by_alias=True, exclude_none=True, mode="json") if m is not None else None


class Editor(Client):
    def __init__(self):
        self.updates = []

    async def request_permission(self, options, session_id, tool_call, **kw):
        chosen = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id))

    async def session_update(self, session_id, update, **kw):
        self.updates.append(dump(update))


CAPS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False)
INFO = Implementation(name="editor-scenario", version="1")


def env_without_credentials():
    env = dict(os.environ)
    for k in ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS",
              "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"]:
        env.pop(k, None)
    return env


async def error_of(coro):
    try:
        return {"answered": dump(await coro)}
    except Exception as e:  # noqa: BLE001 - the report says what happened
        return {"error": f"{type(e).__name__}: {e}", "data": getattr(e, "data", None)}


async def main():
    agent, proj, out = sys.argv[1], str(Path(sys.argv[2]).resolve()), sys.argv[3]
    report = {}
    editor = Editor()

    async def said(conn, sid, text):
        n = len(editor.updates)
        r = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(text)]), 60)
        await asyncio.sleep(0.05)
        chunks = [u["content"]["text"] for u in editor.updates[n:]
                  if u.get("sessionUpdate") == "agent_message_chunk"]
        thoughts = [u["content"]["text"] for u in editor.updates[n:]
                    if u.get("sessionUpdate") == "agent_thought_chunk"]
        return {"stop": r.stop_reason, "text": "".join(chunks), "thoughts": "".join(thoughts),
                "calls": [u["title"] for u in editor.updates[n:] if u.get("sessionUpdate") == "tool_call"]}

    async with spawn_agent_process(editor, agent, "acp", cwd=proj, env=dict(os.environ)) as (conn, _):
        report["initialize"] = dump(await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=CAPS,
                                                          client_info=INFO))
        report["authenticate"] = await error_of(conn.authenticate(method_id="gemini-api-key"))
        new = await conn.new_session(cwd=proj, mcp_servers=[])
        report["new_session"] = dump(new)
        sid = new.session_id
        await asyncio.sleep(0.2)
        report["commands"] = [u for u in editor.updates if u.get("sessionUpdate") == "available_commands_update"]
        report["help"] = await said(conn, sid, "/help")
        report["memory_add"] = await said(conn, sid, "/memory add I prefer tabs")
        report["memory_show"] = await said(conn, sid, "/memory show")
        report["tools"] = await said(conn, sid, "/tools")
        report["mcp"] = await said(conn, sid, "/mcp")
        report["about"] = await said(conn, sid, "/about")
        report["set_model"] = await error_of(conn.set_config_option(config_id="model", session_id=sid,
                                                                    value="gemini-2.5-pro"))
        report["set_unknown_model"] = await error_of(conn.set_config_option(config_id="model", session_id=sid,
                                                                            value="no-such-model"))
        report["hi"] = await said(conn, sid, "Say hi.")
        report["compress"] = await said(conn, sid, "/compress")
        report["list"] = dump(await conn.list_sessions(cwd=proj))
        report["session_id"] = sid
    # A new agent process: the session is listed and loaded.
    loader = Editor()
    async with spawn_agent_process(loader, agent, "acp", cwd=proj, env=dict(os.environ)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=CAPS, client_info=INFO)
        report["list_again"] = dump(await conn.list_sessions())
        report["list_elsewhere"] = dump(await conn.list_sessions(cwd="/nonexistent-folder"))
        loaded = await conn.load_session(cwd=proj, session_id=sid, mcp_servers=[])
        await asyncio.sleep(0.2)
        report["load"] = {"response": dump(loaded), "updates": loader.updates}
    # No credentials at all: each way to sign in says what is missing.
    bare = Editor()
    async with spawn_agent_process(bare, agent, "acp", cwd=proj, env=env_without_credentials()) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=CAPS, client_info=INFO)
        report["auth_no_key"] = await error_of(conn.authenticate(method_id="gemini-api-key"))
        report["auth_no_vertex"] = await error_of(conn.authenticate(method_id="vertex-ai"))
        report["new_without_auth"] = await error_of(conn.new_session(cwd=proj, mcp_servers=[]))
    # Vertex AI with a service-account key.
    env = env_without_credentials()
    env.update({
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "proj-1",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
        "GOOGLE_APPLICATION_CREDENTIALS": os.environ["SCENARIO_VERTEX_KEY"],
        "GOOGLE_VERTEX_BASE_URL": os.environ["GOOGLE_GEMINI_BASE_URL"],
    })
    vertex = Editor()
    editor = vertex
    async with spawn_agent_process(vertex, agent, "acp", cwd=proj, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=CAPS, client_info=INFO)
        report["vertex_auth"] = await error_of(conn.authenticate(method_id="vertex-ai"))
        new = await conn.new_session(cwd=proj, mcp_servers=[])
        report["vertex"] = await said(conn, new.session_id, "Hello Vertex.")
    Path(out).write_text(json.dumps(report, indent=1))


asyncio.run(main())
