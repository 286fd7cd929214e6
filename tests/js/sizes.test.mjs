// Issue 25 in the wasm build, where size_t is 32 bits and a count that became bytes wrapped at
// 4 GB into a small buffer (docs/ERRORS.md E22; the trap that followed is F12, in
// faults.test.mjs; tests/test_sizes.c holds the same files natively and in the 32-bit build):
// tokenizer.json expansion bombs are refused at load and a trained model in the same module
// keeps every byte; one word of 2^28 bytes gets WF_ERR_NOMEM and the tokenizer goes on; many
// long added tokens with one prefix encode (the C test counts the matcher's steps); a
// safetensors file whose tensors share bytes is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createModel, importSafetensors, loadTokenizer, WfError } from '../../src/js/node.js';

const SMALL = { nLayer: 2, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 40, batchSize: 4, seed: 25 };
const TEXT = 'the cat sat on the mat. '.repeat(100);
const file = (path) => readFileSync(new URL(`../${path}`, import.meta.url));
const same = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
const refused = (code, re) => (e) => e instanceof WfError && e.code === code && re.test(e.message);

test('E22: tokenizer.json expansion bombs are refused at load; a trained model in the module keeps every byte', async () => {
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 3, evalInterval: 0 });
  const before = model.save();
  const text = await model.generateText('the', { maxTokens: 12, seed: 3 });
  // 6655a24: the first loaded, encoded "c" to 0 ids and overwrote this model's tensors; the
  // second trapped ("memory access out of bounds"); the third loaded to 543 MB
  for (const [name, re] of [['issue25-replace7.json', /the normalizer can make a text 268435456 times longer/],
    ['issue25-replace8-added.json', /the normalizer can make a text 4294967296 times longer/],
    ['issue25-decoder7.json', /the decoder can make a text 268435456 times longer .*at most 8 times/]]) {
    await assert.rejects(loadTokenizer(file(`fuzz/regressions/tokjson/${name}`)), refused('WF_ERR_FORMAT', re), name);
  }
  assert.ok(same(model.save(), before), 'the model beside them changed');
  assert.equal(await model.generateText('the', { maxTokens: 12, seed: 3 }), text);
  model.dispose();
});

test('E22: one word of 2^28 bytes through the GPT-2 tokenizer: WF_ERR_NOMEM at once, and the tokenizer goes on', async () => {
  const tok = await loadTokenizer(file('fixtures/tokenizers/gpt2.json'));
  const ids = tok.encode("It's a word");
  // 6655a24: its symbols' bytes (2^30 int32) wrapped to 0, the heap was written past its end
  // and the call never returned; 2^26 and 2^27 gave WF_ERR_NOMEM in 6-11 s
  assert.throws(() => tok.encode('a'.repeat(2 ** 28)), refused('WF_ERR_NOMEM', /at a word of 268435456 bytes \(merging it takes 6\.44 GB/));
  assert.deepEqual(tok.encode("It's a word"), ids);
  tok.dispose();
});

test('E22: 2,000 added tokens of 994 bytes with one prefix encode as leftmost-longest matches', async () => {
  // issue 25's file (2.26 MB there): 4,000 characters took 9.9 s, 16,000 took 57 s; the C
  // test (test_sizes.c) counts the matcher's steps, linear in the text
  const added = Array.from({ length: 2000 }, (_, i) => ({ id: 1 + i, content: `${'x'.repeat(990)}${String(i).padStart(4, '0')}`, special: true }));
  const tok = await loadTokenizer(new TextEncoder().encode(JSON.stringify({
    model: { type: 'BPE', vocab: { x: 0 }, merges: [] }, added_tokens: added,
  })));
  // units of 495 x's (id 0 each) and one whole token, then 1,110 x's
  let text = '';
  for (let j = 0; j < 10; j++) text += `${'x'.repeat(495)}${added[j * 7].content}`;
  text += 'x'.repeat(1110);
  const ids = tok.encode(text);
  const want = [];
  for (let j = 0; j < 10; j++) want.push(...Array(495).fill(0), 1 + j * 7);
  want.push(...Array(1110).fill(0));
  assert.deepEqual([...ids], want);
  tok.dispose();
});

test('E22: safetensors whose tensors share bytes are refused (a 12-layer model from a 2-layer file)', async () => {
  // the fuzz regression: a u16 length, config.json, then the file; layers 2 to 11 name layer
  // 1's bytes (6655a24 built the model: an 8.4 MB file became 151.5M parameters)
  const input = file('fuzz/regressions/safetensors/issue25-aliased');
  const k = input.readUInt16LE(0);
  const files = { 'config.json': input.subarray(2, 2 + k).toString('utf8'), 'model.safetensors': input.subarray(2 + k) };
  await assert.rejects(importSafetensors(files), refused('WF_ERR_FORMAT', /tensors "transformer\.h\.\d+\.[^"]+" and "transformer\.h\.\d+\.[^"]+" share bytes/));
});
