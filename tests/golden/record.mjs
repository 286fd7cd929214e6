#!/usr/bin/env node
// The golden record of the wasm build (tests/golden/README.md): every architecture trained
// 50 steps on fixed data through the package's public API, then its losses, gradient norms,
// learning rates, validation loss, generations or decodes and the SHA-256 of its checkpoint
// and safetensors bytes, as one JSON document. tests/golden/record.c does the same calls
// natively, case for case; tests/js/golden.test.mjs compares this with wasm.json.
//
// Usage: node tests/golden/record.mjs > tests/golden/wasm.json
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEncoder, createModel, createSeq2Seq, createTokenizer, exportSafetensors } from 'wasmformer';

const TEXT_BYTES = 16384; // the start of the novel: plain ASCII
const TEXT = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url))
  .subarray(0, TEXT_BYTES).toString('latin1');
const BPE_VOCAB = 320;
const STEPS = 50;
const SMALL = { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 16 }; // big enough for the matmuls to use threads
const DECODER_B = 32, ENCODER_B = 8, SEQ2SEQ_B = 16; // T = the context
// the record is simd128's bits (the same on every machine): forced, since Node 22 and later
// (and browsers) pick the relaxed-SIMD build by default
const SIMD = 'simd128';
// warmup, cosine decay to a constant tail (steps 46-50) and clipping that bites
const OPTIM = { lr: 3e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, warmup: 5, decaySteps: 40, minLrRatio: 0.1, gradClip: 0.5 };
const SAMPLER = { seed: 42, valFraction: 0.1, evalInterval: STEPS, evalBatches: 2 };
const PROMPT = 'Elizabeth', GEN_TOKENS = 48; // 9 + 48 tokens through a window of 16: several slides
const GREEDY = { temperature: 0, seed: 1 }, SAMPLED = { temperature: 0.8, topK: 20, topP: 0.9, seed: 7 };
const LETTERS = 'abcdefgh', WORDS = 200, HELD = 8; // seq2seq: reverse strings of 3 to 8 letters

// kind: decoder (trains on TEXT with `tokenizer`), encoder_ce (per-token next-id
// cross-entropy on TEXT's char ids), encoder_mse (vectors to vectors), seq2seq (reversal).
export const CASES = [
  { name: 'gpt2', kind: 'decoder', tokenizer: 'char',
    config: { norm: 'layernorm', block: 'pre_ln', activation: 'gelu', positions: 'learned', tiedHead: true, bias: true, dropout: 0, seed: 11 } },
  { name: 'llama', kind: 'decoder', tokenizer: 'bpe',
    config: { norm: 'rmsnorm', block: 'pre_ln', activation: 'swiglu', positions: 'rope', tiedHead: false, bias: false, dropout: 0, seed: 12 } },
  { name: 'post_ln', kind: 'decoder', tokenizer: 'char',
    config: { norm: 'layernorm', block: 'post_ln', activation: 'relu', positions: 'sinusoidal', tiedHead: true, bias: true, dropout: 0, seed: 13 } },
  { name: 'dropout', kind: 'decoder', tokenizer: 'char',
    config: { norm: 'layernorm', block: 'pre_ln', activation: 'gelu', positions: 'learned', tiedHead: true, bias: true, dropout: 0.1, seed: 14 } },
  { name: 'encoder_ce', kind: 'encoder_ce', tokenizer: 'char',
    config: { norm: 'rmsnorm', block: 'pre_ln', activation: 'swiglu', positions: 'rope', tiedHead: false, bias: false, dropout: 0.1, seed: 15 } },
  { name: 'encoder_mse', kind: 'encoder_mse', tokenizer: null,
    config: { norm: 'layernorm', block: 'post_ln', activation: 'gelu', positions: 'sinusoidal', tiedHead: true, bias: true, dropout: 0, seed: 16 } },
  { name: 'seq2seq', kind: 'seq2seq', tokenizer: 'letters',
    config: { norm: 'layernorm', block: 'pre_ln', activation: 'gelu', positions: 'learned', tiedHead: true, bias: true, dropout: 0, seed: 17, nEncLayer: 1, maxBeam: 4 } },
];

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const idsSha256 = (ids) => sha256(Buffer.from(Int32Array.from(ids).buffer)); // int32 little-endian

/** x, a float32 value, as the shortest decimal that reads back as the same float32. */
function f32(x) {
  for (let p = 1; p <= 9; p++) {
    const s = Number(x.toPrecision(p));
    if (Math.fround(s) === x) return s;
  }
  return x; // NaN or infinity: null in JSON
}

/** mulberry32 as an integer stream, for the recorders' own data (the same in record.c).
 * Seq2Seq.train samples its batches with the same generator; this copy stays put when the
 * code under test changes. */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Encoder batch k: B windows of T, rows past lengths[b] padding; ids (next-id targets) or
 * vectors in [-1, 1) whose targets are the real rows reversed and halved. */
function encoderBatch(k, T, C, ids) {
  const B = ENCODER_B;
  const lengths = Int32Array.from({ length: B }, (_, b) => T - 2 * ((k + b) % 4));
  if (ids) {
    const inputs = new Int32Array(B * T), targets = new Int32Array(B * T);
    for (let b = 0; b < B; b++) {
      const start = ((k * B + b) * 131) % (ids.length - T - 1);
      inputs.set(ids.subarray(start, start + T), b * T);
      targets.set(ids.subarray(start + 1, start + T + 1), b * T);
    }
    return { inputs, targets, lengths, B, T };
  }
  const next = mulberry32(1000 + k);
  const inputVecs = Float32Array.from({ length: B * T * C }, () => ((next() >>> 8) / 16777216) * 2 - 1);
  const targetVecs = new Float32Array(B * T * C);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < lengths[b]; t++) {
      for (let c = 0; c < C; c++) targetVecs[(b * T + t) * C + c] = 0.5 * inputVecs[(b * T + lengths[b] - 1 - t) * C + c];
    }
  }
  return { inputVecs, targetVecs, lengths, B, T };
}

/** WORDS training pairs and HELD held-out ones: a word of 3 to 8 letters and its reverse. */
function reversePairs() {
  const next = mulberry32(7);
  return Array.from({ length: WORDS + HELD }, () => {
    const n = 3 + (next() % 6);
    let w = '';
    for (let i = 0; i < n; i++) w += LETTERS[next() % LETTERS.length];
    return [w, [...w].reverse().join('')];
  });
}


function checkpoints(model) {
  const files = exportSafetensors(model);
  return {
    checkpoint: { full: sha256(model.save()), weights: sha256(model.save({ optimizer: false })) },
    safetensors: { model: sha256(files['model.safetensors']), config: sha256(files['config.json']) },
  };
}

/** One case trained and probed on `threads` threads (1: the single-thread build). */
async function runCase(c, threads) {
  const config = { ...SMALL, ...c.config };
  // every step's record, from onProgress (yieldMs 0: each step) or trainStep
  const log = { loss: [], grad_norm: [], lr: [] };
  const logStep = (p) => { log.loss.push(f32(p.loss)); log.grad_norm.push(f32(p.gradNorm)); log.lr.push(f32(p.lr)); };
  const out = { name: c.name, param_count: 0, train: log, val_loss: null, generate: null, decode: null };
  let model, valLoss;
  if (c.kind === 'decoder') {
    const tokenizer = c.tokenizer === 'bpe' ? { kind: 'bpe', vocabSize: BPE_VOCAB } : 'char';
    model = await createModel(config, { text: TEXT, tokenizer, threads, simd: SIMD });
    const summary = await model.train(TEXT, { ...OPTIM, ...SAMPLER, steps: STEPS, batchSize: DECODER_B, yieldMs: 0, onProgress: logStep });
    valLoss = summary.valLoss;
    out.generate = {
      greedy: await model.generateText(PROMPT, { maxTokens: GEN_TOKENS, ...GREEDY }),
      sampled: await model.generateText(PROMPT, { maxTokens: GEN_TOKENS, ...SAMPLED }),
    };
  } else if (c.kind === 'seq2seq') {
    const pairs = reversePairs(), held = pairs.splice(WORDS);
    const s2s = await createSeq2Seq(config, { texts: [LETTERS], threads, simd: SIMD });
    model = s2s.model;
    await s2s.train(pairs, { ...OPTIM, steps: STEPS, batchSize: SEQ2SEQ_B, seed: 3, yieldMs: 0, onProgress: logStep });
    valLoss = (await s2s.evaluate(held)).loss;
    const decode = async (beam) => {
      const all = [];
      for (const [w] of held) {
        const { ids, finished } = await s2s.decodeIds(w, { beam });
        all.push({ ids: Array.from(ids), finished });
      }
      return all;
    };
    out.decode = { greedy: await decode(1), beam: await decode(4) };
  } else {
    let ids = null, vocabSize = 96; // an MSE encoder's ids are unused: the default vocabulary
    if (c.kind === 'encoder_ce') {
      const tok = await createTokenizer(TEXT, { kind: c.tokenizer, threads, simd: SIMD });
      ids = tok.encode(TEXT);
      vocabSize = tok.vocabSize;
      tok.dispose();
    }
    const enc = await createEncoder({ ...config, vocabSize }, { threads, simd: SIMD });
    model = enc.model;
    enc.setOptimizer(OPTIM);
    for (let k = 0; k < STEPS; k++) logStep(enc.trainStep(encoderBatch(k, config.context, config.dModel, ids)));
    valLoss = f32(enc.forward(encoderBatch(STEPS, config.context, config.dModel, ids)).loss);
  }
  if (log.loss.length !== STEPS) throw new Error(`${c.name}: ${log.loss.length} step records, not ${STEPS}`);
  out.param_count = model.paramCount;
  out.val_loss = valLoss;
  Object.assign(out, checkpoints(model));
  model.dispose();
  return out;
}

/** The whole record: the data, its tokenizers, then each case, checked on two threads. */
export async function record() {
  const tokenizers = {};
  for (const [name, opts] of [['char', { kind: 'char' }], ['bpe', { kind: 'bpe', vocabSize: BPE_VOCAB }]]) {
    const tok = await createTokenizer(TEXT, { ...opts, threads: 1, simd: SIMD });
    const ids = tok.encode(TEXT);
    tokenizers[name] = { vocab_size: tok.vocabSize, file_sha256: sha256(tok.save()), n_ids: ids.length, ids_sha256: idsSha256(ids) };
    tok.dispose();
  }
  const cases = [];
  for (const c of CASES) {
    const one = await runCase(c, 1);
    const two = await runCase(c, 2);
    if (JSON.stringify(two) !== JSON.stringify(one)) console.error(`record.mjs: ${c.name} differs on 2 threads`);
    cases.push({ ...one, threads2_same: JSON.stringify(two) === JSON.stringify(one) });
  }
  return { fingerprint: `wasm32 ${SIMD}`, text: { bytes: TEXT_BYTES, sha256: sha256(TEXT) }, tokenizers, cases };
}

/** JSON with objects one key a line and arrays of numbers on one line (record.c writes the
 * same layout, so native.json and wasm.json diff line by line). */
export function format(v, indent = '') {
  const inner = indent + '  ';
  if (Array.isArray(v) && !v.some((x) => x !== null && typeof x === 'object')) return `[${v.map((x) => JSON.stringify(x)).join(', ')}]`;
  if (Array.isArray(v)) return `[\n${v.map((x) => inner + format(x, inner)).join(',\n')}\n${indent}]`;
  if (v !== null && typeof v === 'object') {
    return `{\n${Object.entries(v).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${format(x, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(v);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  process.stdout.write(format(await record()) + '\n');
  console.error(`record.mjs: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
