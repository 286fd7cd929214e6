// What starting a train call costs on a text the model has just trained on (issue 16): the
// page ends its train call for each sample it writes and starts another, and each call used
// to encode the whole text again. A micro model on Pride and Prejudice (the page's default)
// takes 1-step train calls in rounds: the same text twice (the second call finds its ids
// kept by the handle: "kept"), then a text that differs by one character (encoded anew:
// "encoded"), the two texts swapping roles every round. Clock: this process's CPU time (on
// a machine shared with other jobs it counts only this process's running time). Prints the
// median CPU time of a 1-step call each way and their difference: what encoding the text
// again cost each call before the handle kept its ids.
//   node bench/restart.mjs [--rounds N] [--json]
import { readFileSync } from 'node:fs';
import { createModel } from '../src/js/node.js';
import { median } from './configs.mjs';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1]) || 15;
const json = args.includes('--json');
const novel = readFileSync(new URL('../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const texts = [novel, `${novel} `];

const model = await createModel({ preset: 'micro' }, { threads: 1 });
const opts = { evalInterval: 0, valFraction: 0.1 };
await model.train(novel, { ...opts, steps: 1 }); // learns the tokenizer

const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
async function call(text) {
  const t0 = cpuMs();
  await model.train(text, { ...opts, steps: 1, keepSchedule: true });
  return cpuMs() - t0;
}
const kept = [], encoded = [];
for (let r = 0; r < rounds + 1; r++) {
  const [a, b] = r % 2 ? [texts[1], texts[0]] : texts;
  await call(a);           // a's ids are now kept
  const hit = await call(a);
  const miss = await call(b); // b differs from a: encoded anew
  if (r === 0) continue;   // warmup
  kept.push(hit);
  encoded.push(miss);
}
model.dispose();
const out = {
  text_chars: novel.length, rounds, call_kept_ms: median(kept), call_encoded_ms: median(encoded),
  encoding_ms: median(encoded) - median(kept), clock: 'process CPU time',
};
if (json) console.log(JSON.stringify(out));
else {
  console.log(`a 1-step train call on ${out.text_chars.toLocaleString('en-US')} characters, micro, 1 thread, median of ${rounds} rounds (CPU time):`);
  console.log(`  text kept from the call before: ${out.call_kept_ms.toFixed(2)} ms`);
  console.log(`  text encoded anew:             ${out.call_encoded_ms.toFixed(2)} ms  (encoding: ${out.encoding_ms.toFixed(2)} ms a call)`);
}
