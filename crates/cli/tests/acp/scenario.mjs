// Drives `toolbelt acp` through one editor session with the official TypeScript ACP SDK
// (`@agentclientprotocol/sdk`), the same steps as scenario.py, and writes what it saw as JSON.
//
// Usage: node scenario.mjs SDK_DIR AGENT PROJECT OUT.json
import { spawn, execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, agent, projArg, out] = process.argv.slice(2);
const require = createRequire(join(sdkDir, "package.json"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const proj = resolve(projArg);
const notes = join(proj, "notes.txt");
const UNSAVED = "(an unsaved line in the editor)\n";
const MARKER = "sleep 17.25";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const processes = (pattern) =>
  execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.includes(pattern) && !l.includes("ps -eo"))
    .map((l) => l.trim());

function editor() {
  const state = { events: [], answer: "allow_once", buffers: new Map() };
  const log = (kind, data) => state.events.push({ kind, ...data });
  const app = acp
    .client({ name: "scenario" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      log("permission", { toolCall: params.toolCall, options: params.options, answer: state.answer });
      const kind = { allow_once: "allow_once", allow_always: "allow_always", reject: "reject_once" }[state.answer];
      const chosen = params.options.find((o) => o.kind === kind);
      return { outcome: { outcome: "selected", optionId: chosen.optionId } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => log("update", { update: params.update }))
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      log("fs_read", { path: params.path });
      if (state.buffers.has(params.path)) return { content: state.buffers.get(params.path) };
      if (!existsSync(params.path)) throw acp.RequestError.resourceNotFound(params.path);
      return { content: readFileSync(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      log("fs_write", { path: params.path, content: params.content });
      state.buffers.delete(params.path);
      writeFileSync(params.path, params.content);
      return {};
    });
  return { state, app };
}

function start(app, body) {
  const child = spawn(agent, ["acp"], { cwd: proj, stdio: ["pipe", "pipe", "inherit"], env: process.env });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return app.connectWith(stream, body).finally(() => child.stdin.end());
}

const caps = { fs: { readTextFile: true, writeTextFile: true }, terminal: false };
const clientInfo = { name: "scenario", version: "1" };
const report = { steps: [] };
const { state, app } = editor();
state.buffers.set(notes, readFileSync(notes, "utf8") + UNSAVED);
let sid;
await start(app, async (ctx) => {
  report.initialize = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps, clientInfo,
  });
  report.new_session = await ctx.request(acp.methods.agent.session.new, { cwd: proj, mcpServers: [] });
  sid = report.new_session.sessionId;
  const seenShells = new Set();
  const step = async (name, text, answer = "allow_once", during = null) => {
    state.answer = answer;
    const n = state.events.length;
    const entry = { name };
    const turn = ctx.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text }] });
    if (during) Object.assign(entry, await during());
    try {
      entry.stop = (await turn).stopReason;
    } catch (e) {
      entry.error = String(e?.message ?? e);
    }
    await sleep(50); // notifications handled after the answer
    entry.events = state.events.slice(n);
    report.steps.push(entry);
  };
  const cancelWhenRunning = async () => {
    for (let i = 0; i < 600; i++) {
      const running = state.events.some((e) => e.kind === "update" && e.update.status === "in_progress"
        && e.update.toolCallId.startsWith("run_shell_command") && !seenShells.has(e.update.toolCallId));
      if (running && processes(MARKER).length) break;
      await sleep(50);
    }
    const before = processes(MARKER);
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: sid });
    return { running_before_cancel: before };
  };
  await step("read-grep", "What is in notes.txt, and where is banana?");
  await step("todos", "Plan the work.");
  await step("edit", "Uppercase apple, then cherry.", "allow_always");
  report.after_edit = readFileSync(notes, "utf8");
  await step("shell", "Print three lines slowly.");
  for (const e of state.events) if (e.kind === "update" && e.update.toolCallId) seenShells.add(e.update.toolCallId);
  await step("cancel", "Wait for a long time.", "allow_once", cancelWhenRunning);
  await sleep(1000);
  report.left_after_cancel = processes(MARKER);
  report.set_plan = await ctx.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: "plan" });
  await step("plan-edit", "Uppercase banana.");
  report.after_plan = readFileSync(notes, "utf8");
  await ctx.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: "default" });
  await step("new-file", "Create new.txt.");
  const created = join(proj, "new.txt");
  report.new_file = existsSync(created) ? readFileSync(created, "utf8") : null;
  await step("reject", "Create rejected.txt.", "reject");
  report.rejected_exists = existsSync(join(proj, "rejected.txt"));
  try {
    await ctx.request(acp.methods.agent.session.prompt, { sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }] });
    report.unknown_session = "answered";
  } catch (e) {
    report.unknown_session = `${e?.code ?? ""} ${e?.message ?? e}`;
  }
});
// A new agent process: the session is loaded again and its history replayed.
const loader = editor();
await start(loader.app, async (ctx) => {
  await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps, clientInfo });
  const response = await ctx.request(acp.methods.agent.session.load, { cwd: proj, sessionId: sid, mcpServers: [] });
  await sleep(50);
  report.load = { response, events: loader.state.events };
});
writeFileSync(out, JSON.stringify(report, null, 1));
process.exit(0);
