// Shared by the browser and Node entry points: one cached wasm module instance per build and
// wasm location, and the package's top-level functions over it. Each entry point says how the
// wasm bytes are found and how many threads the platform offers (`platform`); everything
// else is the same.
//
// Two builds: dist/wasmformer-mt (SIMD + threads) where threads can run (Node; browsers when
// crossOriginIsolated), dist/wasmformer (SIMD, one thread) everywhere else, as the fallback
// when the threaded build cannot load (e.g. a bundler did not copy it), and whenever the
// caller passes its own wasmBinary or wasmUrl (those name one file: the single-thread build).
import createWasmformerModule from '../../dist/wasmformer.mjs';
import { WfError } from './errors.js';
import { LOAD_OPTIONS, checkKeys } from './options.js';
import { MEMORY_LIMIT, Runtime } from './runtime.js';
import { resolveConfig, toNative } from './config.js';
import { Model, modelHandle } from './model.js';
import { Tokenizer } from './tokenizer.js';
import { Encoder } from './encoder.js';
import { Seq2Seq } from './seq2seq.js';
import { importSafetensors as importSafetensorsWith } from './safetensors.js';
import { WorkerModel, WorkerSeq2Seq } from './worker-client.js';

const MAX_DEFAULT_THREADS = 4; // the kernels' tasks are sized for a few threads
// where the two builds are by default, found as bundlers follow: new URL(..., import.meta.url)
const WASM_URL = new URL('../../dist/wasmformer.wasm', import.meta.url);
const WASM_MT_URL = new URL('../../dist/wasmformer-mt.wasm', import.meta.url);
const MT_GLUE = ['..', '..', 'dist', 'wasmformer-mt.mjs'].join('/');

/** Gives a new model (Model, Encoder or Seq2Seq) the runtime's threads. A model that finds
 * no idle worker left (more threaded models alive than were planned for, or a disposed
 * model's workers not yet returned), or whose workers do not start in time, runs on one
 * thread; results are the same. */
export function useThreads(rt, obj) {
  if (rt.threads > 1 && rt.M.PThread.unusedWorkers.length >= rt.threads - 1) {
    // a failure (the workers could not start) leaves the model its one thread
    rt.modelSetThreads(modelHandle(obj.model ?? obj).live(), rt.threads);
  }
  return obj;
}

/** A copy of checkpoint bytes that can be transferred to a worker (the caller's stay). */
function transferableCopy(bytes) {
  return bytes instanceof ArrayBuffer ? new Uint8Array(bytes.slice(0)) : new Uint8Array(bytes);
}

/**
 * platform.readWasm(url): bytes of the wasm at url, or undefined to let the glue fetch it.
 * platform.threads(): threads the platform offers (1: no threaded build).
 * platform.aroundThreadedLoad(create): wraps the threaded glue's instantiation (Node).
 * platform.workerPort(opts): a port ({post, listen, onError, terminate[, ref, unref]}, see
 * worker-client.js) over a new worker that serves a model (worker-host.js), or opts.worker.
 * platform.workerLoadOpts(opts): load options as they cross to the worker's thread.
 */
export function makeApi(platform) {
  const cache = new Map(); // build and wasm location -> Promise<Runtime>

  // a wasmUrl naming the default location is the default
  const custom = (opts) => opts.wasmBinary || (opts.wasmUrl && String(opts.wasmUrl) !== String(WASM_URL));

  // opts.threads: 1 = the single-thread build; default: what the platform offers, at most 4
  function threadsFor(opts) {
    const offered = platform.threads?.() ?? 1;
    if (offered < 2 || custom(opts)) return 1;
    return Math.max(1, Math.floor(opts.threads ?? Math.min(offered, MAX_DEFAULT_THREADS)));
  }

  async function instantiate(opts, threads) {
    // The glue reports a failed load by printing and rejecting with a bare string or a
    // RuntimeError; one WfError says what happened instead.
    const moduleOpts = { printErr: () => {} };
    const defaultUrl = threads > 1 ? WASM_MT_URL : WASM_URL;
    const glueUrl = new URL(MT_GLUE, import.meta.url); // the threaded glue; its worker script sits beside it
    try {
      if (opts.wasmBinary) {
        moduleOpts.wasmBinary = opts.wasmBinary;
      } else {
        const url = String(threads > 1 ? defaultUrl : opts.wasmUrl ?? defaultUrl);
        const bytes = await platform.readWasm(url);
        if (bytes) moduleOpts.wasmBinary = bytes;
        else moduleOpts.locateFile = (f) => (f.endsWith('.wasm') ? url : new URL(f, glueUrl).href);
      }
      let M;
      if (threads > 1) {
        moduleOpts.wfWorkers = 2 * (threads - 1); // Web Workers loaded up front: two models' worth
        // a computed specifier: bundlers leave the threaded glue (and its worker script, which
        // needs Node's modules under Node) alone; where it is missing, load() falls back
        const glue = await import(/* @vite-ignore */ /* webpackIgnore: true */ glueUrl.href);
        const create = () => glue.default(moduleOpts);
        M = platform.aroundThreadedLoad ? await platform.aroundThreadedLoad(create) : await create();
      } else {
        M = await createWasmformerModule(moduleOpts);
      }
      return new Runtime(M, threads);
    } catch (e) {
      const where = opts.wasmBinary ? 'the wasmBinary given' : String(opts.wasmUrl ?? defaultUrl);
      throw new WfError('WF_ERR_LOAD', `could not load the wasmformer wasm module from ${where}: ${e?.message ?? e}`);
    }
  }

  /** Loads (once per build and wasm location) and returns the runtime. Options: threads,
   * wasmBinary (bytes) or wasmUrl. A wasmBinary always makes a new instance. */
  function load(opts = {}) {
    const threads = threadsFor(opts);
    if (opts.wasmBinary) return instantiate(opts, 1);
    const key = threads > 1 ? `mt${threads}` : String(opts.wasmUrl ?? WASM_URL);
    let promise = cache.get(key);
    if (!promise) {
      // the single-thread build is the fallback when the threaded one cannot load
      promise = threads > 1 ? instantiate(opts, threads).catch(() => load({ ...opts, threads: 1 }))
        : instantiate(opts, threads);
      cache.set(key, promise);
      promise.catch(() => cache.delete(key));
    }
    return promise;
  }

  // a worker-backed model: kind WorkerModel or WorkerSeq2Seq, started with op(args)
  const inWorker = (kind, op, args, opts, transfer = []) => kind.start(platform.workerPort(opts), op,
    [...args.slice(0, 1), platform.workerLoadOpts(opts), ...args.slice(1)], transfer);

  return {
    load,
    useThreads,
    /** A model from checkpoint bytes (Uint8Array, ArrayBuffer or Buffer), with its tokenizer.
     * Options are load()'s. @example const model = await loadModel(bytes); */
    async loadModel(bytes, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...[]], 'loadModel() options');
      const rt = await load(opts);
      return useThreads(rt, Model.fromCheckpoint(rt, bytes));
    },
    /** A model from Hugging Face files {'config.json', 'model.safetensors', ['tokenizer.wft']}.
     * @example const model = await importSafetensors({ 'config.json': text, 'model.safetensors': bytes }); */
    async importSafetensors(files, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...[]], 'importSafetensors() options');
      const rt = await load(opts);
      return useThreads(rt, importSafetensorsWith(rt, files));
    },
    /** A tokenizer from the bytes of a tokenizer file. @example const tok = await loadTokenizer(bytes); */
    async loadTokenizer(bytes, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...[]], 'loadTokenizer() options');
      return Tokenizer.load(await load(opts), bytes);
    },
    /** createModel in a worker: same API, every method async. */
    createWorkerModel(config = 'tiny', opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['tokenizer', 'text', 'worker']], 'createWorkerModel() options');
      return inWorker(WorkerModel, 'create', [config], opts);
    },
    /** loadModel in a worker. The bytes are copied once, then transferred. */
    loadWorkerModel(bytes, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['worker']], 'loadWorkerModel() options');
      const copy = transferableCopy(bytes);
      return inWorker(WorkerModel, 'load', [copy], opts, [copy.buffer]);
    },
    /** createSeq2Seq in a worker: the Seq2Seq API, every method async. */
    createWorkerSeq2Seq(config = {}, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['texts', 'tokenizer', 'worker']], 'createWorkerSeq2Seq() options');
      return inWorker(WorkerSeq2Seq, 'createSeq2Seq', [config], opts);
    },
    /** An encoder-decoder from checkpoint bytes in a worker. The bytes are copied once, then
     * transferred; a file of another arch fails with WF_ERR_STATE. */
    loadWorkerSeq2Seq(bytes, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['worker']], 'loadWorkerSeq2Seq() options');
      const copy = transferableCopy(bytes);
      return inWorker(WorkerSeq2Seq, 'load', [copy, 'seq2seq'], opts, [copy.buffer]);
    },
    /** A model with fresh weights from a preset name ('tiny', 'baby') or a partial config.
     * opts.threads picks the build and the model's thread count (see load, useThreads). */
    async createModel(config = 'tiny', opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['tokenizer', 'text']], 'createModel() options');
      const rt = await load(opts);
      return useThreads(rt, Model.create(rt, config, opts));
    },
    /**
     * An encoder-only model (bidirectional, padding masks, cross-entropy or MSE objectives)
     * from a partial config over ENCODER_DEFAULTS.
     * @example const enc = await createEncoder({ dModel: 64, block: 'post_ln', positions: 'sinusoidal' });
     */
    async createEncoder(config = {}, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...[]], 'createEncoder() options');
      const rt = await load(opts);
      return useThreads(rt, Encoder.create(rt, config));
    },
    /**
     * An encoder-decoder from a partial config over SEQ2SEQ_DEFAULTS. opts.texts builds a
     * char tokenizer shared by sources and targets (vocabSize then defaults to its size + 2).
     * @example const s2s = await createSeq2Seq({ dModel: 32 }, { texts: sources.concat(targets) });
     */
    async createSeq2Seq(config = {}, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['texts', 'tokenizer']], 'createSeq2Seq() options');
      const rt = await load(opts);
      return useThreads(rt, Seq2Seq.create(rt, config, opts));
    },
    /** A tokenizer learned from text: {kind: 'char'} (default) or {kind: 'bpe', vocabSize}. */
    async createTokenizer(text, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['kind', 'vocabSize']], 'createTokenizer() options');
      const rt = await load(opts);
      return Tokenizer.fromText(rt, text, opts);
    },
    /** Checks a config without building it: null when createModel would build it, else
     * {code, message} (never throws for a bad config): unknown keys, wrong types, values
     * out of range, and a model too large for this build's memory. */
    async checkConfig(config, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...[]], 'checkConfig() options');
      const rt = await load(opts);
      try {
        const native = toNative(resolveConfig(config));
        const refused = rt.configCheck(native);
        if (refused) return refused;
        const need = rt.memoryEstimate(native, 0, 0);
        if (need.total > MEMORY_LIMIT) {
          return { code: 'WF_ERR_NOMEM', message: `the model needs ${(need.total / 1e9).toFixed(2)} GB for its weights, gradients and optimizer state; this build addresses at most ${(MEMORY_LIMIT / 1e9).toFixed(2)} GB` };
        }
        return null;
      } catch (e) {
        if (e instanceof WfError) return { code: e.code, message: e.message };
        throw e;
      }
    },
    /** Memory in bytes a config needs, trained at batch B and length T. */
    async estimateMemory(config, B = 0, T = 0, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...[]], 'estimateMemory() options');
      const rt = await load(opts);
      return rt.memoryEstimate(toNative(resolveConfig(config)), B, T);
    },
  };
}
