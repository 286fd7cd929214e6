// Issue 14: bits per character in evaluate(), train()'s deterministic validation (evalMode
// 'windows'), and the time-to-quality bench's run core (bench/ttq/core.mjs) on a short text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as wf from '../../src/js/node.js';
import { crossing, median, parseConfig, runTtq } from '../../bench/ttq/core.mjs';

const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').slice(0, 12000);
const small = { nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 16, seed: 3 };

test('evaluate() gives bits per character: loss / ln 2 for chars, the decoded length for BPE', async () => {
  const m = await wf.createModel(small, { text });
  const r = await m.evaluate(text.slice(0, 2000));
  assert.equal(r.chars, r.tokens); // one character a token
  assert.ok(Math.abs(r.bitsPerChar - r.loss / Math.LN2) < 1e-12);
  m.dispose();
  const tok = await wf.createTokenizer(text, { kind: 'bpe', vocabSize: 300 });
  const b = await wf.createModel({ ...small, vocabSize: tok.vocabSize }, { tokenizer: tok });
  const ids = tok.encode(text.slice(0, 3000));
  const e = await b.evaluate(ids);
  const chars = Array.from(tok.decode(ids.subarray(1, e.tokens + 1))).length;
  assert.equal(e.chars, chars);
  assert.ok(chars > e.tokens * 1.2, `BPE tokens hold more than a character (${chars} chars, ${e.tokens} tokens)`);
  assert.ok(Math.abs(e.bitsPerChar - (e.loss * e.tokens) / chars / Math.LN2) < 1e-12);
  b.dispose();
  tok.dispose();
});

test("train({evalMode: 'windows'}) validates on all of the held-out split, as evaluate() does", async () => {
  const m = await wf.createModel(small, { text });
  const seen = [];
  const r = await m.train(text, { steps: 6, batchSize: 4, evalInterval: 3, evalMode: 'windows', onProgress: (p) => p.validated && seen.push(p) });
  assert.deepEqual(seen.map((p) => p.step), [3, 6]);
  const ids = m.tokenizer.encode(text);
  const held = ids.subarray(ids.length - Math.floor(ids.length * 0.1));
  const e = await m.evaluate(held, { batchSize: 4 });
  assert.equal(r.valLoss, e.loss); // the same windows in the same batches
  assert.equal(r.valBpc, e.bitsPerChar);
  assert.equal(seen[1].valBpc, e.bitsPerChar);
  assert.notEqual(seen[0].valLoss, seen[1].valLoss);
  const s = await m.train(text, { steps: 2, evalInterval: 1 }); // the default, 'sample': no bpc
  assert.equal(s.valBpc, null);
  await assert.rejects(m.train(text, { steps: 1, evalMode: 'all' }), { code: 'WF_ERR_ARG', message: /evalMode must be "sample" or "windows"/ });
  m.dispose();
});

test('the bench core: a run by steps scores every evaluation the same way, and crossing() interpolates', async () => {
  const lines = [];
  const summary = await runTtq(wf, { text, other: text.slice(0, 1500) }, {
    steps: '4', evalEvery: '2', batch: '4', config: 'nLayer=1,nHead=2,dModel=16,dFF=32,context=16', warmup: '1', sample: 'It',
  }, (x) => lines.push(x));
  assert.equal(lines[0].kind, 'settings');
  const evals = lines.filter((l) => !l.kind);
  assert.deepEqual(evals.map((l) => l.step), [0, 2, 4]);
  assert.ok(evals.every((l) => Math.abs(l.val_bpc - l.val_loss / Math.LN2) < 1e-4));
  assert.equal(summary.steps, 4);
  assert.equal(summary.val_loss, evals[2].val_loss);
  assert.ok(summary.sample.startsWith('It') && summary.sample.length > 100);
  // a time budget: one run, its learning rate decayed to the floor by the end of its seconds
  const timed = [];
  const t = await runTtq(wf, { text, other: text.slice(0, 1500) }, {
    seconds: '0.5', evalEvery: '0.25s', batch: '4', config: 'nLayer=1,nHead=2,dModel=16,dFF=32,context=16',
  }, (x) => timed.push(x));
  assert.ok(t.steps > 0 && t.train_seconds >= 0.5, `steps ${t.steps} in ${t.train_seconds} s`);
  const lastLr = timed.filter((l) => !l.kind).at(-1).lr;
  assert.ok(lastLr < 0.5 * timed.filter((l) => !l.kind)[0].lr, `the schedule decays over the budget: lr ${lastLr}`);
  assert.deepEqual(parseConfig('nLayer=2,bias=false,activation=relu2'), { nLayer: 2, bias: false, activation: 'relu2' });
  const pts = [{ step: 0, elapsed: 0, val_loss: 3 }, { step: 100, elapsed: 10, val_loss: 2 }, { step: 200, elapsed: 30, val_loss: 1 }];
  assert.equal(crossing(pts, 1.5, 'step'), 150);
  assert.equal(crossing(pts, 1.5, 'elapsed'), 20);
  assert.equal(crossing(pts, 0.5, 'step'), null);
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([null, null, 1]), null);
});
