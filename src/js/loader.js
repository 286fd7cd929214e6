// Shared by the browser and Node entry points: one cached module instance per build and
// set of load options, and the package's top-level functions over it.
//
// Two builds: dist/wasmformer-mt (SIMD + threads) where threads can run, dist/wasmformer
// (SIMD, one thread) as the fallback. The entry point's `env` says how many threads the
// platform offers (browsers: only when crossOriginIsolated; Node: always), how to read
// a build's .wasm bytes, and how to wrap the threaded glue's instantiation.
import { Runtime } from './runtime.js';
import { Model, resolveConfig, toNative } from './model.js';
import { Tokenizer } from './tokenizer.js';
import { Encoder } from './encoder.js';
import { Seq2Seq } from './seq2seq.js';

const MAX_DEFAULT_THREADS = 4; // the kernels' tasks are sized for a few threads

/** Gives a new model (Model, Encoder or Seq2Seq) the runtime's threads. A model that finds
 * no idle worker left (more threaded models alive than were planned for, or a disposed
 * model's workers not yet returned) runs on one thread; results are the same. */
export function useThreads(rt, obj) {
  const model = obj.model ?? obj;
  if (rt.threads > 1 && rt.M.PThread.unusedWorkers.length >= rt.threads - 1) {
    try {
      model.call(rt.M._wf_model_set_threads(model.handle, rt.threads));
    } catch (e) {
      obj.dispose();
      throw e;
    }
  }
  return obj;
}

export function makeApi(env) {
  const cached = new Map();

  /** Loads (once) and returns the runtime. Options: threads (1 = the single-thread build;
   * default: what the platform offers, at most 4), wasmBinary (bytes) or wasmUrl for the
   * chosen build. */
  async function load(opts = {}) {
    const offered = Math.max(1, Math.min(env.threads(), MAX_DEFAULT_THREADS));
    const threads = Math.max(1, Math.floor(opts.threads ?? offered));
    const threaded = threads > 1 && env.threads() > 1;
    const custom = opts.wasmBinary || opts.wasmUrl;
    const key = threaded ? `mt${threads}` : 'st';
    if (!custom && cached.has(key)) return cached.get(key);
    const promise = instantiate(threaded, threads, opts);
    if (!custom) {
      cached.set(key, promise);
      promise.catch(() => cached.delete(key));
    }
    return promise;
  }

  async function instantiate(threaded, threads, opts) {
    const name = threaded ? 'wasmformer-mt' : 'wasmformer';
    const glue = threaded ? await import('../../dist/wasmformer-mt.mjs') : await import('../../dist/wasmformer.mjs');
    const moduleOpts = {};
    // Web Workers loaded before the module resolves, enough for two threaded models at once
    if (threaded) moduleOpts.wfWorkers = 2 * (threads - 1);
    if (opts.wasmBinary) moduleOpts.wasmBinary = opts.wasmBinary;
    else if (opts.wasmUrl) moduleOpts.locateFile = (f) => (f.endsWith('.wasm') ? String(opts.wasmUrl) : f);
    else if (env.binary) moduleOpts.wasmBinary = await env.binary(`${name}.wasm`);
    const create = () => glue.default(moduleOpts);
    const M = threaded && env.aroundThreadedLoad ? await env.aroundThreadedLoad(create) : await create();
    const rt = new Runtime(M);
    rt.threads = threaded ? threads : 1;
    return rt;
  }

  return {
    load,
    useThreads,
    /** A model with fresh weights from a preset name ('tiny', 'baby') or a partial config.
     * opts.threads picks the build and the model's thread count (see load, useThreads). */
    async createModel(config = 'tiny', opts = {}) {
      const rt = await load(opts);
      return useThreads(rt, Model.create(rt, config, opts));
    },
    /**
     * An encoder-only model (bidirectional, padding masks, cross-entropy or MSE objectives)
     * from a partial config over ENCODER_DEFAULTS.
     * @example const enc = await createEncoder({ dModel: 64, block: 'post_ln', positions: 'sinusoidal' });
     */
    async createEncoder(config = {}, opts = {}) {
      const rt = await load(opts);
      return useThreads(rt, Encoder.create(rt, config));
    },
    /**
     * An encoder-decoder from a partial config over SEQ2SEQ_DEFAULTS. opts.texts builds a
     * char tokenizer shared by sources and targets (vocabSize then defaults to its size + 2).
     * @example const s2s = await createSeq2Seq({ dModel: 32 }, { texts: sources.concat(targets) });
     */
    async createSeq2Seq(config = {}, opts = {}) {
      const rt = await load(opts);
      return useThreads(rt, Seq2Seq.create(rt, config, opts));
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
