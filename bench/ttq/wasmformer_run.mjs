#!/usr/bin/env node
// wasmformer's side of bench/ttq/reference.py in Node: one run of bench/ttq/core.mjs (the same
// recipe as far as the package's options go, scored by the shared evaluation of
// bench/ttq/README.md), printing the same JSON lines.
//
//   node bench/ttq/wasmformer_run.mjs --seed 1                    # the recipe of `wasmformer train --batch 12 --lr 1e-3`
//   node bench/ttq/wasmformer_run.mjs --seed 1 --nanogpt          # nanoGPT's recipe (GAP.md: every difference matched)
//   node bench/ttq/wasmformer_run.mjs --seconds 120 --eval-every 10s --config '{"activation":"relu2"}'
//
// Flags are core.mjs's OPTIONS in kebab case (--eval-every, --min-lr-ratio, --weight-decay,
// --max-steps), plus --text, --other and --other-chars (the second held-out text).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import * as wf from '../../src/js/node.js';
import { OPTIONS, runTtq } from './core.mjs';

const root = new URL('../../', import.meta.url);
const kebab = (k) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const options = Object.fromEntries(Object.entries(OPTIONS).map(([k, v]) => [kebab(k), { type: 'string', default: v }]));
options.nanogpt = { type: 'boolean', default: false };
const { values } = parseArgs({
  options: {
    ...options,
    text: { type: 'string', default: new URL('data/austen/pride_and_prejudice.txt', root).pathname },
    other: { type: 'string', default: new URL('data/austen/emma.txt', root).pathname },
    'other-chars': { type: 'string', default: '50000' },
  },
});
const opts = Object.fromEntries(Object.keys(OPTIONS).map((k) => [k, String(values[kebab(k)])]));
const text = readFileSync(values.text, 'utf8');
const other = Array.from(readFileSync(values.other, 'utf8')).slice(0, Number(values['other-chars'])).join(''); // code points
const emit = (x) => process.stdout.write(`${JSON.stringify(x.kind === 'summary' ? { ...x, side: 'node', loadavg: loadavg() } : x)}\n`);
await runTtq(wf, { text, other }, { ...opts, text: values.text, other: values.other }, emit);
