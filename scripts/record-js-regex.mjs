// Records what JavaScript's `new RegExp(pattern)` (no flags) says of each pattern in
// crates/tools/src/search/js_syntax/cases.json, as upstream's grep_search checks its patterns
// (tools/ripGrep.js, validateToolParamValues), and writes the answers back into that file:
// `null` when the pattern is accepted, V8's message otherwise. The fixed cases are kept; the
// random ones are drawn again from a seed. CI never runs this (the tests read the file).
//
// Usage: node scripts/record-js-regex.mjs
import fs from 'node:fs';

const file = new URL('../crates/tools/src/search/js_syntax/cases.json', import.meta.url);
const old = JSON.parse(fs.readFileSync(file, 'utf8'));
const PIECES = ['a', 'b', '(', ')', '(?:', '(?=', '(?!', '(?<=', '(?<!', '(?<n>', '(?<m>', '\\k<n>',
  '\\k', '[', ']', '[^', '-', '{', '}', '{2}', '{1,}', '{3,2}', ',', '*', '+', '?', '|', '^', '$',
  '\\', '\\b', '\\d', '\\w', '\\1', '\\c', '\\x4', '\\u00', '.', 'é', '<', '>', '=', '!', '0', '9'];
let seed = 47;
const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const random = [];
for (let i = 0; i < 3000; i++) {
  let p = '';
  for (let k = 1 + rand(7); k > 0; k--) p += PIECES[rand(PIECES.length)];
  random.push(p);
}
const answer = (p) => {
  try { new RegExp(p); return null; } catch (e) {
    const prefix = `Invalid regular expression: /${p}/: `;
    return e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  }
};
const cases = [...new Set([...old.fixed.map(([p]) => p), ...random])];
const out = {
  node: process.version,
  fixed: old.fixed.map(([p]) => [p, answer(p)]),
  random: random.map((p) => [p, answer(p)]),
};
fs.writeFileSync(file, JSON.stringify(out, null, 0).replace(/\],\[/g, '],\n[') + '\n');
console.log(`${cases.length} patterns recorded with node ${process.version}`);
