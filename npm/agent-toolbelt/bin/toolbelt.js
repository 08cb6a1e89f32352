#!/usr/bin/env node
// Runs the toolbelt binary of this platform, from the optional dependency npm installed for
// it (agent-toolbelt-<os>-<cpu>), with this process's arguments and stdio; its exit status
// and signals are passed on. No download at install or run time.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const pkg = `agent-toolbelt-${process.platform}-${process.arch}`;
let binary;
try {
  binary = require.resolve(`${pkg}/bin/toolbelt${process.platform === "win32" ? ".exe" : ""}`);
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
