// Generation's text across the C/JS boundary (issue 24): one call into the module per token,
// wf_model_gen_next, samples the token and writes its text (the bytes it adds after the token
// before it); the package's streaming decoder joins characters split across tokens. Counted
// through a wrapped module: every exported function call (a crossing) and every malloc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createModel, loadTokenizer } from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';

const TEXT = `${readFileSync('data/austen/pride_and_prejudice.txt', 'utf8').slice(0, 3000)} naïve café — ünïcödé 😀 日本語 `.repeat(3);
const SHAPE = { nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 32, seed: 5 };
const fixture = (name) => readFileSync(new URL(`../fixtures/tokenizers/${name}`, import.meta.url));

/** The models under test: a char, a BPE, a Hugging Face and a llama2.c tokenizer. */
async function models() {
  const out = [
    ['char', await createModel(SHAPE, { text: TEXT, threads: 1 })],
    ['bpe', await createModel({ ...SHAPE, vocabSize: 300 }, { text: TEXT, tokenizer: { kind: 'bpe', vocabSize: 300 }, threads: 1 })],
  ];
  for (const [kind, file] of [['hf', 'llama.json'], ['llama2c', 'llama2c_tok.bin']]) {
    const tok = await loadTokenizer(fixture(file), { threads: 1 });
    out.push([kind, await createModel({ ...SHAPE, vocabSize: tok.vocabSize }, { tokenizer: tok, threads: 1 })]);
    tok.dispose();
  }
  return out;
}

/** Counts the calls into rt's module while fn runs: {crossings, mallocs}. */
async function counted(rt, fn) {
  const real = rt.M;
  const n = { crossings: 0, mallocs: 0 };
  rt.M = new Proxy(real, {
    get(target, key) {
      const v = target[key];
      if (typeof key !== 'string' || !key.startsWith('_') || typeof v !== 'function') return v;
      return (...args) => {
        n.crossings++;
        if (key === '_malloc') n.mallocs++;
        return v(...args);
      };
    },
  });
  try {
    await fn();
  } finally {
    rt.M = real;
  }
  return n;
}

test('one crossing and no malloc per generated token, whatever the tokenizer', async () => {
  for (const [kind, model] of await models()) {
    const rt = modelHandle(model).rt;
    const opts = { temperature: 1, seed: 9, yieldMs: 1e9 };
    const short = await counted(rt, () => model.generateText('It', { ...opts, maxTokens: 20 }));
    const long = await counted(rt, () => model.generateText('It', { ...opts, maxTokens: 80 }));
    const perToken = (long.crossings - short.crossings) / 60;
    console.log(`${kind}: ${perToken} crossings per token, ${(long.mallocs - short.mallocs) / 60} mallocs; ${short.crossings} for 20 tokens`);
    assert.equal(perToken, 1, `${kind}: crossings per token`);
    assert.equal(long.mallocs, short.mallocs, `${kind}: mallocs do not grow with the tokens`);
    model.dispose();
  }
});

test("each token's text is what decoding it after the token before adds; split characters join", async () => {
  for (const [kind, model] of await models()) {
    const core = modelHandle(model), rt = core.rt, tok = model.tokenizer;
    const opts = { temperature: 1, topK: 0, topP: 1, allowUnknown: true };
    const prompt = tok.bos === null ? tok.encode('It') : Int32Array.from([tok.bos, ...tok.encode('It')]);
    for (const seed of [1, 2, 3]) {
      const pieces = [];
      const text = await model.generateText('It', { ...opts, seed, maxTokens: 60, onToken: (p) => pieces.push(p) });
      // the same tokens drawn without a tokenizer (the model's vocabulary is the tokenizer's)
      const ps = rt.putSampling({ temperature: 1, topK: 0, topP: 1, nVocab: tok.vocabSize, noUnk: 0 });
      const ids = [];
      try {
        rt.genStart(core.live(), prompt, seed);
        for (let i = 0; i < 60; i++) ids.push(rt.genNext(core.live(), ps));
      } finally {
        rt.free(ps);
      }
      // the stream the package decoded before the core wrote the text: decoding [prev, id]
      // less decoding [prev], through one streaming TextDecoder
      const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
      let want = '', prev = prompt[prompt.length - 1];
      for (const id of ids) {
        const both = tok.decodeBytes([prev, id]);
        want += decoder.decode(both.subarray(tok.decodeBytes([prev]).length), { stream: true });
        prev = id;
      }
      want += decoder.decode();
      assert.equal(text, want, `${kind}, seed ${seed}`);
      assert.equal(pieces.join(''), text);
      if (kind === 'bpe' || kind === 'char') assert.equal(text, tok.decode(ids), `${kind}: the pieces are the ids' text`);
    }
    model.dispose();
  }
});
