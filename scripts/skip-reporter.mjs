// A node:test reporter for npm test (scripts/test.mjs), beside the one on the screen: one
// JSON line per test that passed or skipped ({file, name, skip}: skip is the reason, or
// null for a test that ran), so that the run's last lines can list every test that skipped
// in each stage that ran it (a tool or PyTorch missing) with the command that enables it.
import { fileURLToPath } from 'node:url';

export default async function* skipReporter(source) {
  for await (const { type, data } of source) {
    if (type !== 'test:pass' || data.todo) continue;
    const skip = data.skip === undefined || data.skip === false ? null : data.skip === true ? 'skipped' : String(data.skip);
    const file = data.file?.startsWith('file:') ? fileURLToPath(data.file) : data.file ?? null; // Node 18 gives a URL
    yield `${JSON.stringify({ file, name: data.name, skip })}\n`;
  }
}

/** From the JSON lines of every stage: the tests that skipped and never ran, each once, as
 * {file, name, skip} (a test that one stage skips by design and another runs is not one). */
export function neverRan(lines) {
  const ran = new Set(), skipped = new Map();
  for (const line of lines) {
    if (!line.trim()) continue;
    const r = JSON.parse(line), key = `${r.file}\0${r.name}`;
    if (r.skip === null) ran.add(key);
    else if (!skipped.has(key)) skipped.set(key, r);
  }
  return [...skipped].filter(([key]) => !ran.has(key)).map(([, r]) => r);
}
