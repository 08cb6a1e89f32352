#!/usr/bin/env node
// Runs the toolbelt binary of this platform, from the optional dependency npm installed for
// it (agent-toolbelt-<os>-<cpu>), with this process's arguments and stdio; its exit status
// and signals are passed on. No download at install or run time, and no other toolbelt.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const fs = require("node:fs");

// On Linux the C library decides between the glibc and the musl build (Alpine): Node's own
// report says which C library it runs on.
function linuxLibc() {
  try {
    const header = process.report.getReport().header;
    return header.glibcVersionRuntime ? "glibc" : "musl";
  } catch {
    return "glibc";
  }
}
const base = `agent-toolbelt-${process.platform}-${process.arch}`;
const musl = process.platform === "linux" && linuxLibc() === "musl";
// The build for this C library first; a static musl build also runs on glibc.
const pkgs = process.platform !== "linux" ? [base] : musl ? [`${base}-musl`] : [base, `${base}-musl`];
const exe = `toolbelt${process.platform === "win32" ? ".exe" : ""}`;
// Only where npm puts this package's own dependency: beside it in the same node_modules, or in
// its own node_modules. Never Node's search up the folders (~/node_modules, ~/.npm/node_modules),
// where a command could plant a package of that name (issue 46, G14).
const here = fs.realpathSync(path.join(__dirname, ".."));
const places = [];
for (const pkg of pkgs) {
  places.push({ pkg, dir: path.join(here, "node_modules", pkg) });
  if (path.basename(path.dirname(here)) === "node_modules") {
    places.push({ pkg, dir: path.join(path.dirname(here), pkg) });
  }
}
let binary;
try {
  const found = places.find(({ pkg, dir }) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).name === pkg;
    } catch {
      return false;
    }
  });
  if (!found) throw new Error("not installed");
  binary = path.join(found.dir, "bin", exe);
  fs.accessSync(binary, fs.constants.X_OK);
} catch {
  const wanted = pkgs[0];
  const known = ["linux-x64", "linux-x64-musl", "linux-arm64", "linux-arm64-musl", "darwin-x64", "darwin-arm64"];
  const has = known.includes(wanted.replace("agent-toolbelt-", ""));
  console.error(
    has
      ? `agent-toolbelt: its binary for this platform, the package ${wanted}, is not installed. ` +
          "npm installs it as an optional dependency: reinstall without --omit=optional / --no-optional, " +
          `or install ${wanted} beside agent-toolbelt (the same version).`
      : `agent-toolbelt: there is no build for ${process.platform}-${process.arch}${musl ? " (musl)" : ""}. ` +
          `Builds exist for ${known.join(", ")}; elsewhere build from source: ` +
          "cargo install --locked --git https://github.com/agent-toolbelt/toolbelt agent-toolbelt"
  );
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (e) => {
  console.error(`agent-toolbelt: cannot run ${binary}: ${e.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
