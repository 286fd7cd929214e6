#!/usr/bin/env node
// Does preset 'auto' pick the best preset for a time budget (issue 28)? For each budget and
// text: each of micro, tiny and baby trains the steps it makes in that many seconds on this
// machine (its steps per second from bench/ttq/presets.mjs), as one whole run with its schedule
// fitted to those steps, and its held-out loss is read; auto's pick (choosePreset at the same
// speeds) is then compared with the best of the three. The runs are the native curve's
// (bench/ttq/curve.c, the recipes of jobs-auto.txt): step counts, not clocks, so the losses do
// not depend on the load while they run; the machine enters only through the measured speeds.
//   node bench/ttq/presets.mjs --threads 1 --out /tmp/speeds.json
//   node bench/ttq/auto-check.mjs --speeds /tmp/speeds.json --seconds 300 [--texts a.txt,b.txt] [--out DIR]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AUTO_PRESETS, choosePreset } from '../../src/js/auto.js';

const here = new URL('.', import.meta.url).pathname;
const { values: o } = parseArgs({
  options: {
    speeds: { type: 'string' }, seconds: { type: 'string', default: '300' },
    texts: { type: 'string', default: 'data/austen/pride_and_prejudice.txt,data/rv1909/rv1909.txt' },
    out: { type: 'string', default: 'bench/ttq/results/auto-check' }, parallel: { type: 'string', default: '1' },
  },
});
if (!o.speeds) {
  console.error('--speeds FILE: the steps per second of each preset, from node bench/ttq/presets.mjs --threads 1 --out FILE');
  process.exit(2);
}
const measured = JSON.parse(readFileSync(o.speeds, 'utf8'));
const stepsPerSecond = Object.fromEntries(measured.rows.filter((r) => r.threads === 1).map((r) => [r.preset, r.steps_per_s]));

// each preset's recipe: its line in jobs-auto.txt, less the run's length
const recipe = {};
for (const line of readFileSync(`${here}jobs-auto.txt`, 'utf8').split('\n')) {
  const m = line.match(/^nat-(\w+)-\d+ (.*)$/);
  if (m && !recipe[m[1]]) recipe[m[1]] = m[2].split(' ').filter((a) => !/^(steps|warmup)=/.test(a)).join(' ');
}

mkdirSync(o.out, { recursive: true });
const seconds = o.seconds.split(',').map(Number), texts = o.texts.split(',');
const name = (text, preset, s) => `nat-${text.split('/').pop().replace(/\..*$/, '').replace(/\W/g, '')}-${preset}-${s}s`;
const jobs = [];
for (const s of seconds) {
  for (const preset of AUTO_PRESETS) { // the slowest last: a queue cut short has the contenders
    for (const text of texts) {
      const steps = Math.floor(s * stepsPerSecond[preset]);
      // the schedule of jobs-auto.txt: warm-up a tenth of the run, at most 100 steps
      jobs.push(`${name(text, preset, s)} ${recipe[preset]} steps=${steps} warmup=${Math.min(100, Math.floor(steps / 10))} text=${text}`);
    }
  }
}
writeFileSync(`${o.out}/jobs.txt`, `# made by bench/ttq/auto-check.mjs from ${o.speeds}\n${jobs.join('\n')}\n`);
execFileSync('sh', [`${here}queue.sh`, `${o.out}/jobs.txt`, o.out], { stdio: 'inherit', env: { ...process.env, PARALLEL: o.parallel } });

// a run's summary line, or null (not run, still running, or failed: its .err says why)
const summary = (file) => readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('{"kind":"summary"')).map((l) => JSON.parse(l))[0] ?? null;
const lines = [`Speeds (steps/s, one thread, ${measured.clock ?? 'wall'} clock, ${measured.node}, load average ${measured.loadavg.map((x) => x.toFixed(1)).join(' -> ')}): `
  + AUTO_PRESETS.map((p) => `${p} ${stepsPerSecond[p].toFixed(2)}`).join(', '), '',
'| budget | text | micro | tiny | baby | auto picks | best | auto at most the best? |', '|---|---|---:|---:|---:|---|---|---|'];
const results = [];
for (const s of seconds) {
  const pick = choosePreset({ seconds: s, stepsPerSecond });
  for (const text of texts) {
    const row = {};
    for (const preset of AUTO_PRESETS) {
      const f = `${o.out}/${name(text, preset, s)}.jsonl`;
      const r = existsSync(f) ? summary(f) : null;
      row[preset] = r ? { steps: r.steps, loss: r.val_loss } : null;
    }
    const done = AUTO_PRESETS.filter((p) => row[p]);
    const best = done.length ? done.reduce((a, b) => (row[b].loss < row[a].loss ? b : a)) : null;
    const met = row[pick.preset] && best ? row[pick.preset].loss <= row[best].loss : null; // null: not all ran
    results.push({ seconds: s, text, pick: pick.preset, best, met, row });
    lines.push(`| ${s} s | ${text.split('/').pop()} | ${AUTO_PRESETS.map((p) => (row[p] ? `${row[p].loss.toFixed(4)} (${row[p].steps} steps)` : '–')).join(' | ')} | ${pick.preset} | ${best ?? '–'} | ${met === null ? 'not measured' : met ? 'yes' : `no: +${(row[pick.preset].loss - row[best].loss).toFixed(4)}`} |`);
  }
}
writeFileSync(`${o.out}/table.md`, `${lines.join('\n')}\n`);
writeFileSync(`${o.out}/summary.json`, `${JSON.stringify({ speeds: measured, stepsPerSecond, results }, null, 1)}\n`);
console.log(lines.join('\n'));
