// Shared by the browser and Node entry points: one cached wasm module instance per build and
// wasm location, and the package's top-level functions over it. Each entry point says how the
// wasm bytes are found and how many threads the platform offers (`platform`); everything
// else is the same.
//
// Two builds: dist/wasmformer-mt (SIMD + threads) where threads can run (Node; browsers when
// crossOriginIsolated), dist/wasmformer (SIMD, one thread) everywhere else, as the fallback
// when the threaded build cannot load, and whenever the caller passes its own wasmBinary or
// wasmUrl (those name one file: the single-thread build). Each comes in two kernel sets:
// 'simd128' (mul then add: the same bits on every machine) and 'relaxed'
// (dist/wasmformer-relaxed*: f32x4.relaxed_madd, a fused multiply-add where the CPU has one),
// picked where the engine validates relaxed SIMD (Chromium, Firefox, Node 22+; Node 20 with
// --experimental-wasm-relaxed-simd), else simd128, which is also the fallback. Bundlers copy
// every build's files (BUILDS); distUrl names a folder holding them instead (docs/BUNDLERS.md).
import createWasmformerModule from '../../dist/wasmformer.mjs';
import { WfError, throwIfAborted } from './errors.js';
import { LOAD_OPTIONS, checkKeys, show } from './options.js';
import { MEMORY_LIMIT, QUANT, Runtime, asBytes } from './runtime.js';
import { ModelHandle } from './handle.js';
import { PRESETS, resolveConfig, toNative } from './config.js';
import { resolveAuto } from './auto.js';
import { Model, modelHandle } from './model.js';
import { TOKENIZER_KEYS, Tokenizer } from './tokenizer.js';
import { Encoder } from './encoder.js';
import { Seq2Seq } from './seq2seq.js';
import { importSafetensors as importSafetensorsWith } from './safetensors.js';
import { WorkerModel, WorkerSeq2Seq } from './worker-client.js';
import { checkResponse, isStreamSource } from './source.js';

const MAX_DEFAULT_THREADS = 4; // the kernels' tasks are sized for a few threads
// Every file of the four builds, each named as bundlers follow: new URL('literal',
// import.meta.url). Vite, webpack and Parcel copy each into their output and rewrite its URL,
// in the page and in a worker alike. The threaded and relaxed glue is then imported from where
// it landed, at run time (an import() bundlers leave alone): it stays one file, which in
// browsers is also each pthread's module worker (scripts/pthread-glue.mjs). The single-thread
// simd128 glue is imported above, so it is bundled: the fallback where another build cannot load.
const BUILDS = {
  simd128: { wasm: new URL('../../dist/wasmformer.wasm', import.meta.url) },
  'simd128-mt': {
    glue: new URL('../../dist/wasmformer-mt.mjs', import.meta.url),
    wasm: new URL('../../dist/wasmformer-mt.wasm', import.meta.url),
  },
  relaxed: {
    glue: new URL('../../dist/wasmformer-relaxed.mjs', import.meta.url),
    wasm: new URL('../../dist/wasmformer-relaxed.wasm', import.meta.url),
  },
  'relaxed-mt': {
    glue: new URL('../../dist/wasmformer-relaxed-mt.mjs', import.meta.url),
    wasm: new URL('../../dist/wasmformer-relaxed-mt.wasm', import.meta.url),
  },
};
const WASM_URL = BUILDS.simd128.wasm;

/** A build's files ({glue, wasm}): the package's own, or the same names in a folder the caller
 * copied dist/ into (distUrl, a URL ending in '/': for bundlers that copy nothing, as esbuild). */
function filesOf(build, dist) {
  if (!dist) return BUILDS[build];
  const name = { simd128: 'wasmformer', 'simd128-mt': 'wasmformer-mt', relaxed: 'wasmformer-relaxed', 'relaxed-mt': 'wasmformer-relaxed-mt' }[build];
  return Object.fromEntries(Object.keys(BUILDS[build]).map((k) => [k, new URL(name + (k === 'glue' ? '.mjs' : '.wasm'), dist)]));
}

/** What explains a failed load from the package's own files, if a bundler does: Vite's dev
 * server pre-bundles dependencies into node_modules/.vite/deps/, away from the files beside
 * src/js/; a bundler that copies no file (esbuild) leaves them behind. all: not only Vite's. */
export function bundlerHint(all = true) {
  if (/\/node_modules\/\.vite\/deps\//.test(import.meta.url)) {
    return "; Vite's dev server pre-bundled wasmformer away from its wasm and worker files: add optimizeDeps: { exclude: ['wasmformer'] } to vite.config.js (docs/BUNDLERS.md)";
  }
  return all ? "; if a bundler moved the package's code away from its dist/ files, copy them and pass distUrl (docs/BUNDLERS.md)" : '';
}

/** A 37-byte module whose one function is f32x4.relaxed_madd (0xfd 0x85 0x02, the standard
 * opcode): WebAssembly.validate says whether this engine has relaxed SIMD. */
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, // type 0: (v128, v128, v128) -> v128
  0x03, 0x02, 0x01, 0x00, // function 0 has type 0
  0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b, // its body
]);

/** Whether this engine runs relaxed SIMD (checked once, before any glue loads). */
export function hasRelaxedSimd() {
  hasRelaxedSimd.known ??= typeof WebAssembly === 'object' && WebAssembly.validate(RELAXED_PROBE);
  return hasRelaxedSimd.known;
}

const SIMD_CHOICES = ['auto', 'relaxed', 'simd128'];

/** The glue's promise, rejected as soon as one of its pthreads' Web Workers fails to start
 * (its script blocked or missing): the glue itself would wait for them forever. Node's
 * workers report through aroundThreadedLoad's process. */
function untilWorkersFail(ready, M) {
  const workers = (M.PThread?.unusedWorkers ?? []).filter((w) => typeof w.addEventListener === 'function');
  if (!workers.length) return ready;
  const failed = new Promise((resolve, reject) => {
    for (const w of workers) w.addEventListener('error', (e) => reject(new Error(`a pthread worker did not start: ${e.message || 'its script could not load'}`)), { once: true });
  });
  return Promise.race([ready, failed]);
}

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

/** The quantize option of a load or import ('q8_0', 'q4_0', 'f32'), checked before any work. */
function quantizeOption(opts) {
  const q = opts.quantize;
  if (q !== undefined && !QUANT.includes(q)) {
    throw new WfError('WF_ERR_ARG', `the quantize option takes 'q8_0', 'q4_0' or 'f32', not ${show(q)}`);
  }
  return q;
}

/** A loaded model quantized as opts.quantize asks (model.quantize): the model, or a throw
 * (the model disposed). In a worker, the same through its quantize operation. */
function quantized(model, q) {
  if (q === undefined) return model;
  try {
    model.quantize(q);
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}
async function quantizedWorker(wm, q) {
  if (q === undefined) return wm;
  try {
    await wm.quantize(q);
  } catch (e) {
    wm.dispose();
    throw e;
  }
  return wm;
}

/** Whether bytes (ArrayBuffer or a view) start with GGUF's magic. */
function isGguf(x) {
  const b = x instanceof ArrayBuffer ? new Uint8Array(x, 0, Math.min(4, x.byteLength)) : new Uint8Array(x.buffer, x.byteOffset, Math.min(4, x.byteLength));
  return b.length === 4 && b[0] === 0x47 && b[1] === 0x47 && b[2] === 0x55 && b[3] === 0x46;
}

/** Whether this platform transfers a ReadableStream to a worker (Chromium, Node; not every
 * browser): checked once. */
function streamsTransfer() {
  if (streamsTransfer.known === undefined) {
    const rs = new ReadableStream();
    streamsTransfer.known = posts(rs, [rs]);
  }
  return streamsTransfer.known;
}

/** Whether x posts to another thread (transferring `transfer`): tried on a channel. */
function posts(x, transfer = []) {
  const { port1, port2 } = new MessageChannel();
  try {
    port1.postMessage(x, transfer);
    return true;
  } catch {
    return false;
  } finally {
    port1.close();
    port2.close();
  }
}

/** A model source as it crosses to a worker, and what it transfers: [what, transfer]. */
async function forWorker(source) {
  if (!isStreamSource(source)) {
    const copy = transferableCopy(asBytes(source, 'the model file'));
    return [copy, [copy.buffer]];
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) { // a handle on its bytes, not a copy
    if (posts(source)) return [source, []];
    source = source.stream(); // Node's file-backed Blobs (fs.openAsBlob) do not post: their stream does
  }
  const response = typeof Response !== 'undefined' && source instanceof Response;
  if (response) checkResponse(source, 'the model file');
  const stream = response ? source.body ?? new Blob([]).stream() : source;
  if (typeof ReadableStream !== 'undefined' && stream instanceof ReadableStream && streamsTransfer()) return [stream, [stream]];
  if (stream instanceof ReadableStream) return [await new Response(stream).blob(), []];
  const pieces = []; // an async iterable: its pieces, gathered into a Blob
  for await (const piece of source) pieces.push(piece);
  return [new Blob(pieces), []];
}

/** A copy of checkpoint bytes that can be transferred to a worker (the caller's stay). */
function transferableCopy(bytes) {
  return bytes instanceof ArrayBuffer ? new Uint8Array(bytes.slice(0)) : new Uint8Array(bytes);
}

/**
 * platform.readWasm(url): bytes of the wasm at url, or undefined to let the glue fetch it.
 * platform.threads(): threads the platform offers (1: no threaded build).
 * platform.aroundThreadedLoad(create, glueUrl): wraps the threaded glue's instantiation (Node).
 * platform.folderUrl(distUrl): the URL of the folder a distUrl option names.
 * platform.workerPort(opts): a port ({post, listen, onError, terminate[, ref, unref]}, see
 * worker-client.js) over a new worker that serves a model (worker-host.js), or opts.worker.
 * platform.workerLoadOpts(opts): load options as they cross to the worker's thread.
 */
export function makeApi(platform) {
  const cache = new Map(); // build and wasm location -> Promise<Runtime>

  // a wasmUrl naming the default location is the default
  const custom = (opts) => opts.wasmBinary || (opts.wasmUrl && String(opts.wasmUrl) !== String(WASM_URL));

  /** The kernel set: opts.simd 'simd128' (same bits everywhere) or 'relaxed' (a WF_ERR_LOAD
   * where the engine lacks it), else platform.simd() (Node: WASMFORMER_SIMD), else 'auto':
   * relaxed where the engine has it. A wasmBinary or wasmUrl names a simd128 file. */
  function kernelsFor(opts) {
    const want = opts.simd ?? platform.simd?.() ?? 'auto';
    if (!SIMD_CHOICES.includes(want)) throw new WfError('WF_ERR_ARG', `simd must be one of ${SIMD_CHOICES.map((c) => `"${c}"`).join(', ')}, not ${show(want)}`);
    if (custom(opts) || want === 'simd128') return 'simd128';
    if (want === 'relaxed' && !hasRelaxedSimd()) {
      throw new WfError('WF_ERR_LOAD', 'this engine has no relaxed SIMD (Node 20: run with --experimental-wasm-relaxed-simd); use simd: "auto" or "simd128"');
    }
    return hasRelaxedSimd() ? 'relaxed' : 'simd128';
  }

  // opts.threads: 1 = the single-thread build; default: what the platform offers, at most 4
  function threadsFor(opts) {
    const offered = platform.threads?.() ?? 1;
    if (offered < 2 || custom(opts)) return 1;
    return Math.max(1, Math.floor(opts.threads ?? Math.min(offered, MAX_DEFAULT_THREADS)));
  }

  /** opts.distUrl as a folder URL (ending in '/'), or null for the package's own files. */
  function distOf(opts) {
    if (opts.distUrl === undefined) return null;
    if (typeof opts.distUrl !== 'string' && !(opts.distUrl instanceof URL)) {
      throw new WfError('WF_ERR_ARG', `distUrl must be a string or a URL (the folder holding the package's dist/ files), not ${show(opts.distUrl)}`);
    }
    return platform.folderUrl(opts.distUrl);
  }

  async function instantiate(opts, threads, kernels = 'simd128') {
    // The glue reports a failed load by printing and rejecting with a bare string or a
    // RuntimeError; one WfError says what happened instead.
    const moduleOpts = { printErr: () => {} };
    const files = filesOf(`${kernels}${threads > 1 ? '-mt' : ''}`, distOf(opts));
    const wasm = String(files.glue || !opts.wasmUrl ? files.wasm : opts.wasmUrl);
    try {
      if (opts.wasmBinary) {
        moduleOpts.wasmBinary = opts.wasmBinary;
      } else {
        const bytes = await platform.readWasm(wasm);
        if (bytes) moduleOpts.wasmBinary = bytes;
        else moduleOpts.locateFile = (f) => String(f.endsWith('.wasm') ? wasm : new URL(f, files.glue));
      }
      let M;
      if (files.glue) {
        if (threads > 1) moduleOpts.wfWorkers = 2 * (threads - 1); // Web Workers loaded up front: two models' worth
        // an import() bundlers leave alone (the URL is theirs already); where the file is
        // missing, load() falls back
        const glue = await import(/* @vite-ignore */ /* webpackIgnore: true */ files.glue.href);
        const create = () => untilWorkersFail(glue.default(moduleOpts), moduleOpts);
        M = threads > 1 && platform.aroundThreadedLoad ? await platform.aroundThreadedLoad(create, files.glue) : await create();
      } else {
        M = await createWasmformerModule(moduleOpts);
      }
      return new Runtime(M, threads, kernels);
    } catch (e) {
      const where = opts.wasmBinary ? 'the wasmBinary given' : wasm;
      const own = !opts.wasmBinary && !opts.wasmUrl && !opts.distUrl;
      throw new WfError('WF_ERR_LOAD', `could not load the wasmformer wasm module from ${where}: ${e?.message ?? e}${own ? bundlerHint() : ''}`);
    }
  }

  /** Loads (once per build and wasm location) and returns the runtime. Options: threads,
   * simd ('auto', 'relaxed', 'simd128'), wasmBinary (bytes), wasmUrl or distUrl. A wasmBinary
   * always makes a new instance. */
  function load(opts = {}) {
    let threads, kernels, dist;
    try {
      threads = threadsFor(opts);
      kernels = kernelsFor(opts);
      dist = distOf(opts);
    } catch (e) {
      return Promise.reject(e);
    }
    if (opts.wasmBinary) return instantiate(opts, 1);
    const key = `${kernels}:${threads > 1 ? `mt${threads}` : String(opts.wasmUrl ?? WASM_URL)}:${dist ?? ''}`;
    let promise = cache.get(key);
    if (!promise) {
      // the simd128 build is the fallback when a relaxed one cannot load (unless relaxed was
      // insisted on), and the single-thread build when the threaded one cannot
      const fallback = kernels === 'relaxed' && opts.simd !== 'relaxed' ? () => load({ ...opts, simd: 'simd128' })
        : threads > 1 ? () => load({ ...opts, threads: 1 }) : null;
      promise = instantiate(opts, threads, kernels);
      if (fallback) promise = promise.catch(fallback);
      cache.set(key, promise);
      const forget = () => { if (cache.get(key) === promise) cache.delete(key); };
      // a module that died (a trap: Runtime.kill) is never handed out again
      promise.then((rt) => rt.whenDead(forget), forget);
    }
    return promise;
  }

  // a worker-backed model: kind WorkerModel or WorkerSeq2Seq, started with op(args)
  const inWorker = (kind, op, args, opts, transfer = [], events = {}) => kind.start(platform.workerPort(opts), op,
    [...args.slice(0, 1), platform.workerLoadOpts(opts), ...args.slice(1)], transfer, events);

  const api = {
    load,
    useThreads,
    /** A model from a model file (a checkpoint, GGUF or llama2.c file) with its tokenizer:
     * bytes, a fetch Response, a ReadableStream, a Blob or File, or an async iterable of bytes.
     * A GGUF file streams into the core, never whole in memory. Options are load()'s,
     * quantize, onProgress({loaded, total}) and signal.
     * @example const model = await loadModel(await fetch('/models/smollm-135m-q8_0.gguf')); */
    async loadModel(source, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['quantize', 'onProgress', 'signal']], 'loadModel() options');
      const q = quantizeOption(opts);
      if (opts.onProgress !== undefined && typeof opts.onProgress !== 'function') {
        throw new WfError('WF_ERR_ARG', `onProgress must be a function, not ${show(opts.onProgress)}`);
      }
      const rt = await load(opts);
      const gguf = !isStreamSource(source) && (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) && isGguf(source);
      const model = isStreamSource(source) || gguf || opts.onProgress || opts.signal
        ? await Model.fromSource(rt, source, opts) : Model.fromCheckpoint(rt, source);
      return useThreads(rt, quantized(model, q));
    },
    /** A model from Hugging Face files {'config.json', 'model.safetensors', ['tokenizer.wft' or
     * 'tokenizer.json']}.
     * @example const model = await importSafetensors({ 'config.json': text, 'model.safetensors': bytes }); */
    async importSafetensors(files, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['quantize']], 'importSafetensors() options');
      const q = quantizeOption(opts), rt = await load(opts);
      return useThreads(rt, quantized(importSafetensorsWith(rt, files), q));
    },
    /** A model from a llama2.c model file (export.py's legacy .bin, e.g. the tinyllamas) and,
     * with opts.tokenizer (the bytes of its tokenizer.bin), its tokenizer; without one,
     * forward, trainStep and train on ids work.
     * @example const model = await importLlama2c(readFileSync('stories260K.bin'), { tokenizer: readFileSync('tok512.bin') }); */
    async importLlama2c(bytes, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['tokenizer', 'quantize']], 'importLlama2c() options');
      const q = quantizeOption(opts), rt = await load(opts);
      const tok = opts.tokenizer === undefined ? undefined : asBytes(opts.tokenizer, 'the tokenizer option (tokenizer.bin bytes)');
      return useThreads(rt, quantized(new Model(ModelHandle.fromLlama2c(rt, asBytes(bytes, 'the llama2.c file'), tok)), q));
    },
    /** A tokenizer from the bytes of a tokenizer file: a .wft, a Hugging Face tokenizer.json or
     * llama2.c's tokenizer.bin, told apart by their first bytes.
     * @example const tok = await loadTokenizer(readFileSync('tokenizer.json')); */
    async loadTokenizer(bytes, opts = {}) {
      checkKeys(opts, LOAD_OPTIONS, 'loadTokenizer() options');
      return Tokenizer.load(await load(opts), bytes);
    },
    /** createModel in a worker: same API, every method async. */
    async createWorkerModel(config = 'tiny', opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['tokenizer', 'text', 'seconds', 'worker']], 'createWorkerModel() options');
      return inWorker(WorkerModel, 'create', [config], opts);
    },
    /** loadModel in a worker, from the same sources, each streamed inside the worker: a Blob
     * or File is posted (no copy), a Response's body or a ReadableStream transferred where
     * the platform transfers streams (else read into a Blob first), bytes copied once, then
     * transferred. */
    async loadWorkerModel(source, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['worker', 'quantize', 'onProgress', 'signal']], 'loadWorkerModel() options');
      const q = quantizeOption(opts), { onProgress, signal, ...rest } = opts;
      if (onProgress !== undefined && typeof onProgress !== 'function') {
        throw new WfError('WF_ERR_ARG', `onProgress must be a function, not ${show(onProgress)}`);
      }
      throwIfAborted(signal);
      const [what, transfer] = await forWorker(source);
      // the worker reads the source: its progress comes back as events, an abort goes to it
      return quantizedWorker(await inWorker(WorkerModel, 'load', [what, 'model', Boolean(onProgress)], rest, transfer, { onProgress, signal }), q);
    },
    /** importSafetensors in a worker: Hugging Face files {'config.json', 'model.safetensors',
     * ['tokenizer.wft']}, copied once, then transferred. */
    async importWorkerSafetensors(files, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['worker', 'quantize']], 'importWorkerSafetensors() options');
      const q = quantizeOption(opts);
      if (!files || files['config.json'] === undefined || files['model.safetensors'] === undefined) {
        return Promise.reject(new WfError('WF_ERR_ARG', "importWorkerSafetensors needs files['config.json'] and files['model.safetensors']"));
      }
      const copies = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, transferableCopy(asBytes(v, `files['${k}']`))]));
      return quantizedWorker(await inWorker(WorkerModel, 'safetensors', [copies], opts, Object.values(copies).map((c) => c.buffer)), q);
    },
    /** createSeq2Seq in a worker: the Seq2Seq API, every method async. */
    async createWorkerSeq2Seq(config = {}, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['texts', 'tokenizer', 'worker']], 'createWorkerSeq2Seq() options');
      return inWorker(WorkerSeq2Seq, 'createSeq2Seq', [config], opts);
    },
    /** An encoder-decoder from checkpoint bytes in a worker. The bytes are copied once, then
     * transferred; a file of another arch fails with WF_ERR_STATE. */
    async loadWorkerSeq2Seq(bytes, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['worker']], 'loadWorkerSeq2Seq() options');
      const copy = transferableCopy(bytes);
      return inWorker(WorkerSeq2Seq, 'load', [copy, 'seq2seq'], opts, [copy.buffer]);
    },
    /** A model with fresh weights from a preset name ('tiny', 'baby') or a partial config.
     * opts.threads picks the build and the model's thread count (see load, useThreads). */
    async createModel(config = 'tiny', opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...['tokenizer', 'text', 'seconds']], 'createModel() options');
      const { seconds, ...rest } = opts;
      const { config: chosen, choice } = await resolveAuto({ createModel: api.createModel, PRESETS }, config, opts);
      const rt = await load(rest);
      const model = useThreads(rt, Model.create(rt, chosen, rest));
      modelHandle(model).autoChoice = choice;
      return model;
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
      checkKeys(opts, [...LOAD_OPTIONS, ...TOKENIZER_KEYS], 'createTokenizer() options');
      const rt = await load(opts);
      return Tokenizer.fromText(rt, text, Object.fromEntries(TOKENIZER_KEYS.filter((k) => opts[k] !== undefined).map((k) => [k, opts[k]])));
    },
    /** Checks a config without building it: null when createModel would build it, else
     * {code, message} (never throws for a bad config): unknown keys, wrong types, values
     * out of range (the model's, and the training defaults batchSize and lr), and a model
     * too large for this build's memory, each with createModel's code and message. */
    async checkConfig(config, opts = {}) {
      checkKeys(opts, [...LOAD_OPTIONS, ...[]], 'checkConfig() options');
      const rt = await load(opts);
      try {
        const native = Model.check(rt, resolveConfig(config));
        // the core's bound and words (wf_model_init's: the weights and KV cache; training's state comes later)
        const est = rt.memoryEstimate(native, 0, 0), need = est.params + est.inference;
        if (need > est.budget) {
          return { code: 'WF_ERR_NOMEM', message: `the model needs ${(need / 1e9).toFixed(2)} GB for its weights and KV cache; this build addresses at most ${(MEMORY_LIMIT / 1e9).toFixed(2)} GB` };
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
  return api;
}
