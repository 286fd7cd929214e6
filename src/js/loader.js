// Shared by the browser and Node entry points: one cached wasm module instance per wasm
// location, and the package's top-level functions over it. Each entry point says how the
// wasm bytes are found (`platform`); everything else is the same.
import createWasmformerModule from '../../dist/wasmformer.mjs';
import { Runtime, WfError } from './runtime.js';
import { Model, resolveConfig, toNative } from './model.js';
import { Tokenizer } from './tokenizer.js';
import { Encoder } from './encoder.js';
import { Seq2Seq } from './seq2seq.js';

/**
 * platform.wasmUrl: where the wasm is by default (a URL, found through import.meta.url).
 * platform.readWasm(url): bytes of the wasm at url, or undefined to let the glue fetch it.
 */
export function makeApi(platform) {
  const cache = new Map(); // wasm location -> Promise<Runtime>

  async function instantiate(opts) {
    // The glue reports a failed load by printing and rejecting with a bare string or a
    // RuntimeError; one WfError says what happened instead.
    const moduleOpts = { printErr: () => {} };
    try {
      if (opts.wasmBinary) {
        moduleOpts.wasmBinary = opts.wasmBinary;
      } else {
        const url = String(opts.wasmUrl ?? platform.wasmUrl);
        const bytes = await platform.readWasm(url);
        if (bytes) moduleOpts.wasmBinary = bytes;
        else moduleOpts.locateFile = () => url;
      }
      return new Runtime(await createWasmformerModule(moduleOpts));
    } catch (e) {
      const where = opts.wasmBinary ? 'the wasmBinary given' : String(opts.wasmUrl ?? platform.wasmUrl);
      throw new WfError('WF_ERR_LOAD', `could not load the wasmformer wasm module from ${where}: ${e?.message ?? e}`);
    }
  }

  /** Loads (once per wasm location) and returns the runtime. Options: wasmBinary (bytes)
   * or wasmUrl. A wasmBinary always makes a new instance. */
  function load(opts = {}) {
    if (opts.wasmBinary) return instantiate(opts);
    const key = String(opts.wasmUrl ?? platform.wasmUrl);
    let promise = cache.get(key);
    if (!promise) {
      promise = instantiate(opts);
      cache.set(key, promise);
      promise.catch(() => cache.delete(key));
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
