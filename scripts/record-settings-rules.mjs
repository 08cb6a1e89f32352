// Records upstream Gemini CLI's own conversion of settings into policy rules
// (`createPolicyEngineConfig` in @google/gemini-cli-core 0.61, policy/config.js) for every case in
// crates/core/tests/fixtures/settings_rules.json, and writes the rules back into that file under
// `upstream`. The project's tests compare toolbelt's conversion with these records; CI never runs
// this script (it needs the oracle's install, see ../shared/oracle/README.md).
//
// Usage: node scripts/record-settings-rules.mjs [CORE_DIST_SRC]
// As upstream's CLI does, a headless case (`interactive: false`) adds `ask_user` to tools.exclude.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const core = process.argv[2] ??
  path.join(os.homedir(), '.cache/toolbelt-oracle/node_modules/@google/gemini-cli-core/dist/src');
const fixture = new URL('../crates/core/tests/fixtures/settings_rules.json', import.meta.url);
// No user or system policy files may leak into the records.
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'record-rules-'));
process.env.HOME = home;
process.env.GEMINI_CLI_HOME = home;
const { createPolicyEngineConfig } = await import(path.join(core, 'policy/config.js'));
const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'record-rules-empty-'));

const doc = JSON.parse(fs.readFileSync(fixture, 'utf8'));
for (const c of doc.cases) {
  const settings = structuredClone(c.settings);
  if (c.interactive === false) {
    settings.tools = settings.tools ?? {};
    settings.tools.exclude = [...(settings.tools.exclude ?? []), 'ask_user'];
  }
  const cfg = await createPolicyEngineConfig(settings, 'default', empty, c.interactive !== false);
  c.upstream = cfg.rules
    .filter((r) => String(r.source).startsWith('Settings'))
    .map((r) => {
      const out = { toolName: r.toolName, decision: r.decision, priority: r.priority };
      if (r.argsPattern) out.argsPattern = r.argsPattern.source;
      if (r.mcpName !== undefined) out.mcpName = r.mcpName;
      if (r.modes) out.modes = r.modes;
      return out;
    });
}
fs.writeFileSync(fixture, JSON.stringify(doc, null, 2) + '\n');
console.log(`recorded ${doc.cases.length} cases`);
