#!/usr/bin/env node
// Runs the toolbelt binary of this platform, from the optional dependency npm installed for
// it (agent-toolbelt-<os>-<cpu>), with this process's arguments and stdio; its exit status
// and signals are passed on. No download at install or run time, and no other toolbelt.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const fs = require("node:fs");

const pkg = `agent-toolbelt-${process.platform}-${process.arch}`;
const exe = `toolbelt${process.platform === "win32" ? ".exe" : ""}`;
// Only where npm puts this package's own dependency: beside it in the same node_modules, or in
// its own node_modules. Never Node's search up the folders (~/node_modules, ~/.npm/node_modules),
// where a command could plant a package of that name (issue 46, G14).
const here = fs.realpathSync(path.join(__dirname, ".."));
const places = [path.join(here, "node_modules", pkg)];
if (path.basename(path.dirname(here)) === "node_modules") {
  places.push(path.join(path.dirname(here), pkg));
}
let binary;
try {
  const found = places.find((p) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(p, "package.json"), "utf8")).name === pkg;
    } catch {
      return false;
    }
  });
  if (!found) throw new Error("not installed");
  binary = path.join(found, "bin", exe);
  fs.accessSync(binary, fs.constants.X_OK);
} catch {
  console.error(
    `agent-toolbelt: no build for ${process.platform}-${process.arch} was installed (the package ${pkg}). ` +
      "Builds exist for linux-x64, linux-arm64, darwin-x64 and darwin-arm64; elsewhere build from source: " +
      "cargo install --git https://github.com/toolbelt/toolbelt toolbelt"
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
