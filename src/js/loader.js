// Shared by the browser and Node entry points: one cached module instance per set of
// load options, and the package's top-level functions over it.
import createWasmformerModule from '../../dist/wasmformer.mjs';
import { Runtime } from './runtime.js';
import { Model, resolveConfig, toNative } from './model.js';
import { Tokenizer } from './tokenizer.js';
import { Encoder } from './encoder.js';
import { Seq2Seq } from './seq2seq.js';

export function makeApi(defaultBinary) {
  let cached = null;

  /** Loads (once) and returns the runtime. Options: wasmBinary (bytes) or wasmUrl. */
  async function load(opts = {}) {
    const custom = opts.wasmBinary || opts.wasmUrl;
    if (!custom && cached) return cached;
    const moduleOpts = {};
    if (opts.wasmBinary) moduleOpts.wasmBinary = opts.wasmBinary;
    else if (opts.wasmUrl) moduleOpts.locateFile = () => String(opts.wasmUrl);
    else if (defaultBinary) moduleOpts.wasmBinary = await defaultBinary();
    const promise = createWasmformerModule(moduleOpts).then((M) => new Runtime(M));
    if (!custom) {
      cached = promise;
      promise.catch(() => { cached = null; });
    }
    return promise;
  }

  return {
    load,
    /** A model with fresh weights from a preset name ('tiny', 'baby') or a partial config. */
    async createModel(config = 'tiny', opts = {}) {
      const rt = await load(opts);
      return Model.create(rt, config, opts);
    },
    /**
     * An encoder-only model (bidirectional, padding masks, cross-entropy or MSE objectives)
     * from a partial config over ENCODER_DEFAULTS.
     * @example const enc = await createEncoder({ dModel: 64, block: 'post_ln', positions: 'sinusoidal' });
     */
    async createEncoder(config = {}, opts = {}) {
      const rt = await load(opts);
      return Encoder.create(rt, config);
    },
    /**
     * An encoder-decoder from a partial config over SEQ2SEQ_DEFAULTS. opts.texts builds a
     * char tokenizer shared by sources and targets (vocabSize then defaults to its size + 2).
     * @example const s2s = await createSeq2Seq({ dModel: 32 }, { texts: sources.concat(targets) });
     */
    async createSeq2Seq(config = {}, opts = {}) {
      const rt = await load(opts);
      return Seq2Seq.create(rt, config, opts);
    },
    /** A tokenizer learned from text: {kind: 'char'} (default) or {kind: 'bpe', vocabSize}. */
    async createTokenizer(text, opts = {}) {
      const rt = await load(opts);
      return Tokenizer.fromText(rt, text, opts);
    },
    /** Checks a config without building it: null when valid, else {code, message}. */
    async checkConfig(config, opts = {}) {
      const rt = await load(opts);
      return rt.checkConfig(toNative(resolveConfig(config)));
    },
    /** Memory in bytes a config needs, trained at batch B and length T. */
    async estimateMemory(config, B = 0, T = 0, opts = {}) {
      const rt = await load(opts);
      return rt.memoryEstimate(toNative(resolveConfig(config)), B, T);
    },
  };
}
