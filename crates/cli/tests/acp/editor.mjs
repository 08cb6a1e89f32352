// Issue 50: the same steps as editor.py with the official TypeScript ACP SDK
// (`@agentclientprotocol/sdk`): slash commands, models, session/list and session/load in a new
// process, and sign-in (missing credentials explained; Vertex AI with a service-account key).
//
// Usage: node editor.mjs SDK_DIR AGENT PROJECT OUT.json
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, agent, projArg, out] = process.argv.slice(2);
const require = createRequire(join(sdkDir, "package.json"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);
const proj = resolve(projArg);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const caps = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
const clientInfo = { name: "editor-scenario", version: "1" };

function editor() {
  const updates = [];
  const app = acp
    .client({ name: "editor-scenario" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const chosen = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: chosen.optionId } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => updates.push(params.update));
  return { updates, app };
}

function start(app, env, body) {
  const child = spawn(agent, ["acp"], { cwd: proj, stdio: ["pipe", "pipe", "inherit"], env });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return app.connectWith(stream, body).finally(() => child.stdin.end());
}

function withoutCredentials() {
  const env = { ...process.env };
  for (const k of ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"]) delete env[k];
  return env;
}

async function outcome(p) {
  try {
    return { answered: await p };
  } catch (e) {
    return { error: `${e?.code ?? ""} ${e?.message ?? e}`, data: e?.data ?? null };
  }
}

const report = {};
const init = (ctx) => ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps, clientInfo });
const said = async (ctx, updates, sessionId, text) => {
  const n = updates.length;
  const r = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  await sleep(50);
  const later = updates.slice(n);
  return {
    stop: r.stopReason,
    text: later.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join(""),
    thoughts: later.filter((u) => u.sessionUpdate === "agent_thought_chunk").map((u) => u.content.text).join(""),
    calls: later.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.title),
  };
};

const first = editor();
let sid;
await start(first.app, process.env, async (ctx) => {
  report.initialize = await init(ctx);
  report.authenticate = await outcome(ctx.request(acp.methods.agent.authenticate, { methodId: "gemini-api-key" }));
  report.new_session = await ctx.request(acp.methods.agent.session.new, { cwd: proj, mcpServers: [] });
  sid = report.new_session.sessionId;
  await sleep(200);
  report.commands = first.updates.filter((u) => u.sessionUpdate === "available_commands_update");
  const say = (text) => said(ctx, first.updates, sid, text);
  report.help = await say("/help");
  report.memory_add = await say("/memory add I prefer tabs");
  report.memory_show = await say("/memory show");
  report.tools = await say("/tools");
  report.mcp = await say("/mcp");
  report.about = await say("/about");
  const setModel = (value) => outcome(ctx.request(acp.methods.agent.session.setConfigOption, { sessionId: sid, configId: "model", value }));
  report.set_model = await setModel("gemini-2.5-pro");
  report.set_unknown_model = await setModel("no-such-model");
  report.hi = await say("Say hi.");
  report.compress = await say("/compress");
  report.list = await ctx.request(acp.methods.agent.session.list, { cwd: proj });
  report.session_id = sid;
});
const loader = editor();
await start(loader.app, process.env, async (ctx) => {
  await init(ctx);
  report.list_again = await ctx.request(acp.methods.agent.session.list, {});
  report.list_elsewhere = await ctx.request(acp.methods.agent.session.list, { cwd: "/nonexistent-folder" });
  const response = await ctx.request(acp.methods.agent.session.load, { cwd: proj, sessionId: sid, mcpServers: [] });
  await sleep(200);
  report.load = { response, updates: loader.updates };
});
const bare = editor();
await start(bare.app, withoutCredentials(), async (ctx) => {
  await init(ctx);
  report.auth_no_key = await outcome(ctx.request(acp.methods.agent.authenticate, { methodId: "gemini-api-key" }));
  report.auth_no_vertex = await outcome(ctx.request(acp.methods.agent.authenticate, { methodId: "vertex-ai" }));
  report.new_without_auth = await outcome(ctx.request(acp.methods.agent.session.new, { cwd: proj, mcpServers: [] }));
});
const vertexEnv = {
  ...withoutCredentials(),
  GOOGLE_GENAI_USE_VERTEXAI: "true",
  GOOGLE_CLOUD_PROJECT: "proj-1",
  GOOGLE_CLOUD_LOCATION: "us-central1",
  GOOGLE_APPLICATION_CREDENTIALS: process.env.SCENARIO_VERTEX_KEY,
  GOOGLE_VERTEX_BASE_URL: process.env.GOOGLE_GEMINI_BASE_URL,
};
const vertex = editor();
await start(vertex.app, vertexEnv, async (ctx) => {
  await init(ctx);
  report.vertex_auth = await outcome(ctx.request(acp.methods.agent.authenticate, { methodId: "vertex-ai" }));
  const s = await ctx.request(acp.methods.agent.session.new, { cwd: proj, mcpServers: [] });
  report.vertex = await said(ctx, vertex.updates, s.sessionId, "Hello Vertex.");
});
writeFileSync(out, JSON.stringify(report, null, 1));
process.exit(0);
