// Tokenizers in the wasm build: byte-level BPE (round trips of any bytes, determinism, the
// vocabulary size, wasm == native byte for byte), char's unknown characters, and the
// tokenizer option of training.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withNativeDump } from './fixture.js';
import { createModel, createSeq2Seq, createTokenizer, loadModel, loadTokenizer, WfError } from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';
import { tokenizerHandle } from '../../src/js/tokenizer.js';

const NOVEL = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const NATIVE_BPE = 'build/native/test_bpe';

function sameBytes(a, b) {
  return a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
}

function randomBytes(n, seed) {
  const out = new Uint8Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

test('BPE: vocabulary size, determinism, and exact round trips of any bytes', async () => {
  const t0 = performance.now();
  const bpe = await createTokenizer(NOVEL, { kind: 'bpe', vocabSize: 512 });
  const ms = performance.now() - t0;
  assert.equal(bpe.kind, 'bpe');
  assert.equal(bpe.vocabSize, 512);
  const ids = bpe.encode(NOVEL);
  console.log(`BPE 512 on Pride and Prejudice in wasm: ${ms.toFixed(0)} ms (first call, includes the module's start), ${ids.length} tokens`);
  assert.ok(ids.length < NOVEL.length / 2, 'compresses at least 2x');
  assert.equal(bpe.decode(ids), NOVEL);
  // the same text gives the same merges
  const again = await createTokenizer(NOVEL, { kind: 'bpe', vocabSize: 512 });
  assert.ok(sameBytes(again.save(), bpe.save()));
  // any bytes: random, every value, invalid UTF-8
  for (let k = 0; k < 20; k++) {
    const bytes = randomBytes(k * 97, k + 1);
    assert.ok(sameBytes(bpe.decodeBytes(bpe.encode(bytes)), bytes), `random bytes ${k}`);
  }
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.ok(sameBytes(bpe.decodeBytes(bpe.encode(all)), all));
  const invalid = Uint8Array.from([0x63, 0x61, 0x66, 0xC3, 0x20, 0x80, 0xC0, 0xAF, 0xED, 0xA0, 0x80, 0xF4, 0x90, 0x80, 0x80, 0xE2, 0x82]);
  assert.ok(sameBytes(bpe.decodeBytes(bpe.encode(invalid)), invalid), 'invalid UTF-8 round-trips');
  // saved and loaded: the same ids
  const loaded = await loadTokenizer(bpe.save());
  assert.equal(loaded.kind, 'bpe');
  assert.deepEqual(loaded.encode(NOVEL.slice(0, 50000)), bpe.encode(NOVEL.slice(0, 50000)));
  // a tiny text runs out of pairs before the size asked for
  const small = await createTokenizer('ab ab ab', { kind: 'bpe', vocabSize: 1000 });
  assert.equal(small.vocabSize, 258);
  assert.deepEqual([...small.encode('ab ab')], [256, 257]);
  for (const t of [bpe, again, loaded, small]) t.dispose();
});

test('BPE in wasm equals BPE in the native build, byte for byte', async (t) => {
  await withNativeDump(t, NATIVE_BPE, async (dir) => {
    const tok = await createTokenizer(NOVEL, { kind: 'bpe', vocabSize: 1024 });
    assert.ok(sameBytes(tok.save(), readFileSync(join(dir, 'bpe1024.wft'))), 'same merges as native');
    tok.dispose();
  });
});

test('tokenizer errors', async () => {
  await assert.rejects(createTokenizer(NOVEL, { kind: 'bpe', vocabSize: 100 }), (e) => e instanceof WfError && e.code === 'WF_ERR_ARG' && /256/.test(e.message));
  await assert.rejects(createTokenizer(NOVEL, { kind: 'word' }), (e) => e.code === 'WF_ERR_ARG');
  await assert.rejects(createTokenizer('', { kind: 'bpe' }), (e) => e.code === 'WF_ERR_ARG' && /empty/.test(e.message));
  const bpe = await createTokenizer('hello hello', { kind: 'bpe', vocabSize: 300 });
  assert.throws(() => bpe.decode([bpe.vocabSize]), (e) => e.code === 'WF_ERR_TOKEN');
  bpe.dispose();
  assert.throws(() => bpe.encode('x'), (e) => e.code === 'WF_ERR_DISPOSED');
  // char: unknown characters are id 0 and come back as U+FFFD
  const chars = await createTokenizer('abc');
  assert.equal(chars.kind, 'char');
  assert.deepEqual([...chars.encode('abx')], [1, 2, 0]);
  assert.equal(chars.decode(chars.encode('abx')), 'ab\uFFFD');
  chars.dispose();
});

test('training with a BPE tokenizer: generation, checkpoints, and the option rules', async () => {
  const text = NOVEL.slice(0, 60000);
  const config = { nLayer: 1, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 320, batchSize: 4 };
  const model = await createModel(config);
  await model.train(text, { steps: 30, lr: 3e-3, evalInterval: 0, tokenizer: 'bpe' });
  assert.equal(model.tokenizer.kind, 'bpe');
  assert.equal(model.tokenizer.vocabSize, 320, 'defaults to the model vocabulary');
  const out = await model.generateText('Elizabeth', { maxTokens: 20, temperature: 0.8, seed: 2 });
  assert.ok(out.length >= 20, `BPE tokens decode to text: ${JSON.stringify(out)}`);
  const copy = await loadModel(model.save());
  assert.equal(copy.tokenizer.kind, 'bpe');
  assert.equal(await copy.generateText('Elizabeth', { maxTokens: 20, temperature: 0.8, seed: 2 }), out);
  // the option only applies to a model without a tokenizer, and must fit the vocabulary
  await model.train(text, { steps: 1, evalInterval: 0, tokenizer: 'bpe' });
  await assert.rejects(model.train(text, { steps: 1, tokenizer: 'char' }), (e) => e.code === 'WF_ERR_STATE' && /already has a bpe/.test(e.message));
  const narrow = await createModel(config);
  await assert.rejects(narrow.train(text, { steps: 1, tokenizer: { kind: 'bpe', vocabSize: 400 } }), (e) => e.code === 'WF_ERR_CONFIG' && /does not fit/.test(e.message));
  assert.equal(narrow.tokenizer, null, 'a refused tokenizer is not kept');
  // a Tokenizer passed in is copied: the caller keeps theirs
  const mine = await createTokenizer(text, { kind: 'bpe', vocabSize: 300 });
  const third = await createModel(config);
  await third.train(text, { steps: 2, evalInterval: 0, tokenizer: mine });
  assert.equal(third.tokenizer.vocabSize, 300);
  assert.notEqual(third.tokenizer, mine);
  third.dispose();
  assert.equal(mine.decode(mine.encode('still usable')), 'still usable');
  for (const x of [model, copy, narrow, mine]) x.dispose();
});

test('a tokenizer given to createModel is copied into the model\'s module instance; the caller keeps theirs', async () => {
  const text = 'the cat sat on the mat. '.repeat(50);
  const config = { nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 40, batchSize: 4 };
  // Node's default is the threaded build; threads: 1 is another module instance with its own heap
  const mine = await createTokenizer(text);
  const model = await createModel(config, { threads: 1, tokenizer: mine });
  assert.notEqual(modelHandle(model).rt, tokenizerHandle(mine).rt, 'two module instances');
  assert.equal(tokenizerHandle(model.tokenizer).rt, modelHandle(model).rt, 'the model\'s tokenizer lives in its heap');
  assert.ok(sameBytes(model.tokenizer.save(), mine.save()));
  await model.train(text, { steps: 1, evalInterval: 0 });
  const copy = await loadModel(model.save(), { threads: 1 });
  assert.ok(sameBytes(copy.tokenizer.save(), mine.save()), 'the checkpoint holds the tokenizer');
  model.dispose();
  copy.dispose();
  assert.equal(mine.decode(mine.encode('the mat')), 'the mat', 'disposing the model leaves the caller\'s tokenizer');

  // a failure never disposes the caller's tokenizer, wherever it happens
  for (const bad of [{ ...config, vocabSize: 5 }, { ...config, nHead: 3 }]) {
    await assert.rejects(createModel(bad, { tokenizer: mine }), (e) => e.code === 'WF_ERR_CONFIG');
    await assert.rejects(createModel(bad, { threads: 1, tokenizer: mine }), (e) => e.code === 'WF_ERR_CONFIG');
    assert.equal(mine.vocabSize, new Set(text).size + 1, 'still usable');
  }
  for (const bad of [{ vocabSize: 5 }, { nHead: 3 }]) {
    await assert.rejects(createSeq2Seq(bad, { threads: 1, tokenizer: mine }), (e) => e.code === 'WF_ERR_CONFIG');
    assert.equal(mine.vocabSize, new Set(text).size + 1, 'still usable');
  }
  const s2s = await createSeq2Seq({ nLayer: 1, dModel: 16, dFF: 32 }, { threads: 1, tokenizer: mine });
  assert.equal(s2s.config.vocabSize, mine.vocabSize + 2);
  assert.ok(s2s.tokenizer !== mine && tokenizerHandle(s2s.tokenizer).rt === modelHandle(s2s.model).rt, 'a copy in the model\'s heap');
  s2s.dispose();
  assert.equal(mine.decode(mine.encode('sat')), 'sat');
  mine.dispose();
  await assert.rejects(createModel(config, { tokenizer: mine }), (e) => e.code === 'WF_ERR_DISPOSED');
});

test('createModel with text: the tokenizer is learned first and sizes the vocabulary unless the config sets it', async () => {
  const text = 'Ωμέγα and ünïcödé, 中文 text. '.repeat(40);
  const distinct = new Set(text).size;
  const char = await createModel({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 16 }, { text });
  assert.deepEqual([char.config.vocabSize, char.tokenizer.kind, char.tokenizer.vocabSize], [distinct + 1, 'char', distinct + 1]);
  const bpe = await createModel('tiny', { text: NOVEL.slice(0, 20000), tokenizer: { kind: 'bpe', vocabSize: 300 } });
  assert.deepEqual([bpe.config.vocabSize, bpe.tokenizer.kind], [300, 'bpe']);
  const wide = await createModel({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 64 }, { text });
  assert.equal(wide.config.vocabSize, 64, 'a vocabSize given is kept');
  await assert.rejects(createModel({ vocabSize: 8 }, { text }), (e) => e.code === 'WF_ERR_CONFIG' && /the tokenizer has \d+ tokens but vocabSize is 8/.test(e.message));
  await assert.rejects(createModel('tiny', { tokenizer: 'bpe' }), (e) => e.code === 'WF_ERR_ARG' && /a kind to learn from the text option/.test(e.message));
  for (const m of [char, bpe, wide]) m.dispose();
});
