// Summarizes a V8 CPU profile (node --cpu-prof): self time by function and by module, the
// numbers docs/performance.md quotes. Usage: node bench/profile-summary.mjs FILE.cpuprofile [rows]
import { readFileSync } from 'node:fs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const rows = Number(process.argv[3] ?? 30);
const selfTime = new Map();
profile.samples.forEach((id, index) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
const byFunction = new Map();
const byModule = new Map();
let total = 0;
const shortUrl = (url) => (url.includes('node_modules/') ? url.replace(/.*node_modules\//, 'node_modules/') : url.replace(/.*\/(dist|src)\//, '$1/'));
for (const node of profile.nodes) {
  const time = selfTime.get(node.id) ?? 0;
  total += time;
  const { functionName, url, lineNumber } = node.callFrame;
  const fn = `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + time);
  const module = (url.includes('node_modules/') ? url.replace(/.*node_modules\/(@[^/]+\/[^/]+|[^/]+).*/, '$1') : url.replace(/.*\/(dist|src)\//, '$1/')) || functionName;
  byModule.set(module, (byModule.get(module) ?? 0) + time);
}
const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, rows).map(([name, time]) => `${((100 * time) / total).toFixed(1).padStart(5)} %  ${name}`).join('\n');
console.log(`${(total / 1000).toFixed(0)} ms sampled\n\nself time by function\n${top(byFunction)}\n\nself time by module\n${top(byModule)}`);
