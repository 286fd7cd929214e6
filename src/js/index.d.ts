// Types of the wasmformer package, written by hand next to the JavaScript they describe
// (src/js/*.js). The browser entry (index.js) and the Node entry (node.js, see node.d.ts)
// share everything here; node.d.ts adds the file functions. ModelConfig and
// OptimizerSettings list the config table's fields (src/js/config-table.js), and the
// worker classes the worker protocol's operations (src/js/worker-ops.js): tests/js/config.test.mjs
// holds both lists against those tables.
/// <reference lib="esnext.disposable" />

/** Preset names: `micro` (2 layers, 4 heads, width 64, context 64, 0.1 M weights; the
 * quickest to a good loss), `tiny` (4 layers, 4 heads, width 128, context 64, 0.8 M weights)
 * and `baby` (6 layers, 6 heads, width 384, context 256, 10.7 M weights). Named, micro and
 * tiny bring their recipe: Muon and beta2 0.99, and micro RoPE (bench/ttq/RESULTS.md). */
export type Preset = 'micro' | 'tiny' | 'baby';

/** A complete model config, as `model.config` returns it. */
export interface ModelConfig {
  /** Model family: `decoder` (a GPT: createModel), `encoder` (createEncoder) or
   * `encoder-decoder` (createSeq2Seq). */
  arch: 'decoder' | 'encoder' | 'encoder-decoder';
  /** Normalization layer. */
  norm: 'layernorm' | 'rmsnorm';
  /** Where the norm sits around each sublayer: before it (GPT-2) or after the residual add. */
  block: 'pre_ln' | 'post_ln';
  /** Activation of the feed-forward sublayer. */
  activation: 'gelu' | 'relu' | 'swiglu' | 'relu2' | 'gelu_exact';
  /** Position information: a learned table, fixed sinusoids, or rotary. */
  positions: 'learned' | 'sinusoidal' | 'rope';
  /** true: the output head reuses the token embedding (GPT-2); false: its own matrix. */
  tiedHead: boolean;
  /** true: linear layers and norms have biases. */
  bias: boolean;
  /** Number of token ids the model knows (V). */
  vocabSize: number;
  /** Longest sequence the model sees at once (T). */
  context: number;
  /** Transformer blocks (L). */
  nLayer: number;
  /** Attention heads (NH); must divide dModel. */
  nHead: number;
  /** Width of the residual stream (C). */
  dModel: number;
  /** Width of the feed-forward hidden layer. */
  dFF: number;
  /** Epsilon inside the norm's square root. */
  normEps: number;
  /** Seeds weight init and the batch sampler. */
  seed: number;
  /** An encoder-decoder's encoder layers (0 for the other archs). */
  nEncLayer: number;
  /** Dropout probability during training steps (0 = none). */
  dropout: number;
  /** Widest beam an encoder-decoder can decode with. */
  maxBeam: number;
  /** QK-norm: each head's queries and keys divided by their RMS (no gain), before RoPE. */
  qkNorm: boolean;
  /** The attention and feed-forward output projections start at zero (an init choice). */
  zeroProj: boolean;
  /** Soft-capping of the logits: cap * tanh(logits / cap); 0 = off. */
  logitCap: number;
  /** Key/value heads of self-attention, shared by equal groups of query heads (grouped-query
   * attention; 1 = multi-query); must divide nHead; 0 = one per query head (nHead). */
  nKvHead: number;
  /** RoPE's base theta: pair i turns by position * theta^(-2i / head size) (10000; SmolLM 1e5). */
  ropeTheta: number;
  /** Rank r of the LoRA adapters (0: none); set by Model.addLora rather than by hand. */
  loraRank: number;
  /** LoRA's scale: an adapter adds (loraAlpha / loraRank) x A^T B^T (16). */
  loraAlpha: number;
  /** LoRA's linears as bits: 1 q, 2 k, 4 v, 8 o, 16 fc (SwiGLU's gate), 32 up (SwiGLU), 64 down. */
  loraTargets: number;
}

/** What createModel accepts: a preset name, or any part of a config (the rest comes from
 * `preset`, default `tiny`). `batchSize` and `lr` are training defaults kept with the model. */
export interface ConfigInput extends Partial<Omit<ModelConfig, 'arch' | 'norm' | 'block' | 'activation' | 'positions'>> {
  /** The preset the rest comes from; 'auto' (createModel with `text` and `seconds`): the one
   * expected to reach the lowest held-out loss in that time on this machine. */
  preset?: Preset | 'auto';
  arch?: ModelConfig['arch'] | number;
  norm?: ModelConfig['norm'] | number;
  block?: ModelConfig['block'] | number;
  activation?: ModelConfig['activation'] | number;
  positions?: ModelConfig['positions'] | number;
  /** Default batch size of `train` for this model. */
  batchSize?: number;
  /** The model's peak learning rate until a `train` call sets another. */
  lr?: number;
}

/** Where the wasm module comes from. By default every build's files are found next to the
 * package's glue (`new URL('../../dist/wasmformer.wasm', import.meta.url)`, which Vite,
 * webpack and Parcel follow and copy); nothing is fetched from anywhere else. */
export interface LoadOptions {
  /** Location of `wasmformer.wasm`: a URL (browsers), or a path or file: URL (Node). Names
   * the single-thread simd128 build alone (threads 1). */
  wasmUrl?: string | URL;
  /** A folder holding a copy of the package's `dist/` files (every build: `wasmformer*.wasm`,
   * `.mjs`, `.worker.js`), for bundlers that copy none of them (esbuild): a URL, relative to
   * the page in browsers, or a path or file: URL in Node. Threads and relaxed SIMD then load
   * from there (docs/BUNDLERS.md).
   * @example const model = await createWorkerModel('micro', { distUrl: '/wasmformer/', worker }); */
  distUrl?: string | URL;
  /** The bytes of `wasmformer.wasm`; each call with wasmBinary makes its own instance. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Threads per model, the caller's included. Default: what the platform offers, at most 4
   * (Node: its cores; browsers: their cores on crossOriginIsolated pages, else 1). Above 1
   * the threaded build (`wasmformer-mt.wasm`) loads; 1 picks the single-thread build, as
   * does a wasmUrl or wasmBinary. Results do not depend on it.
   * @example const model = await createModel('tiny', { threads: 1 }); */
  threads?: number;
  /** The kernel set. 'auto' (default): the relaxed-SIMD build (`wasmformer-relaxed*.wasm`:
   * a fused multiply-add per vector product) where the engine validates relaxed SIMD
   * (Chromium, Firefox, Node 22+; Node 20 with --experimental-wasm-relaxed-simd), else
   * SIMD128. 'simd128' gives the same bits on every machine; 'relaxed' may differ between
   * machines in the last bits (within one machine and build, the same seed still gives the
   * same weights), and rejects where the engine lacks it. Node: WASMFORMER_SIMD sets the default.
   * @example const model = await createModel('tiny', { simd: 'simd128' }); */
  simd?: 'auto' | 'relaxed' | 'simd128';
}

export interface CreateModelOptions extends LoadOptions {
  /** A tokenizer the model copies (from any module instance); the caller keeps, and
   * disposes, theirs. Or, with `text`, the kind of tokenizer to learn from it: 'char'
   * (default), 'bpe' (512 tokens) or {kind, vocabSize}. Without either, the first text the
   * model trains on builds a char-level tokenizer. A model with a tokenizer whose config
   * does not set vocabSize gets the tokenizer's size (else the preset's, 96). */
  tokenizer?: Tokenizer | 'char' | 'bpe' | TokenizerOptions;
  /** A text to learn the tokenizer from, as `tokenizer` says.
   * @example const model = await createModel('tiny', { text: novel }); // vocabSize: the novel's characters + 1 */
  text?: string;
  /** With the preset 'auto' (and `text`): the time budget the model is chosen for. Each of
   * micro, tiny and baby trains on `text` for about a second here (smallest first; one that
   * cannot win against those measured, e.g. baby at 5 minutes, is skipped), and the one expected to
   * reach the lowest held-out loss in `seconds` is built (Model.autoChoice says why). Train it
   * for the same time: `model.train(text, { seconds })`.
   * @example const model = await createModel('auto', { text: novel, seconds: 300 }); */
  seconds?: number;
}

export interface TokenizerOptions {
  /** 'char' (default): one token per code point; 'bpe': byte-level byte-pair encoding. */
  kind?: 'char' | 'bpe';
  /** BPE only: the number of tokens, 256 bytes + merges (default 512). */
  vocabSize?: number;
}

/** How a model's linears and token embeddings hold their weights: float32, or ggml's blocks of
 * 32 with an fp16 scale, 8-bit (Q8_0) or 4-bit (Q4_0). */
export type Quantization = 'f32' | 'q8_0' | 'q4_0';

/** Options of the calls that load or import a pretrained model. */
export interface ModelLoadOptions extends LoadOptions {
  /** Quantize the model once loaded (Model.quantize): 'q8_0' or 'q4_0' (a 135M-parameter
   * model's 513 MiB of weights become 144 or 82 MiB), 'f32' (dequantize a quantized file).
   * Default: as the file holds it.
   * @example const model = await loadModel(bytes, { quantize: 'q8_0' }); */
  quantize?: Quantization;
}

/**
 * A model file as loadModel reads it: bytes, a fetch Response (ok and unread), a
 * ReadableStream of bytes, a Blob or File (a file picker's), or an async iterable of bytes
 * (a Node stream). A GGUF file streams into the model's weights, never whole in memory; other
 * files are read whole, then loaded.
 */
export type ModelSource = Uint8Array | ArrayBuffer | Response | ReadableStream<Uint8Array> | Blob | AsyncIterable<Uint8Array>;

/** How far a load has read: bytes so far, and of how many (null: unknown, or a compressed response). */
export interface LoadProgress {
  loaded: number;
  total: number | null;
}

/** loadModel's options: ModelLoadOptions, progress and abort. */
export interface ModelStreamOptions extends ModelLoadOptions {
  /** Called after each piece read. A callback that throws rejects the load.
   * @example await loadModel(await fetch(url), { onProgress: ({ loaded, total }) => console.log(loaded, total) }); */
  onProgress?: (progress: LoadProgress) => void;
  /** Aborts the load: it rejects with the signal's reason (an AbortError), everything it made freed.
   * @example await loadModel(await fetch(url), { signal: AbortSignal.timeout(60_000) }); */
  signal?: AbortSignal;
}

export interface WorkerOptions extends LoadOptions {
  /** A worker you started yourself on `'wasmformer/worker'`, for bundlers that do not follow
   * `new Worker(new URL(...))` (esbuild): a module Worker in browsers, a worker_threads
   * Worker in Node (docs/BUNDLERS.md).
   * @example const wm = await createWorkerModel('micro', { worker: new Worker('/worker.js', { type: 'module' }) }); */
  worker?: Worker | NodeWorker;
}

/** A worker_threads Worker, as far as the package uses one (Node). */
export interface NodeWorker {
  postMessage(value: unknown, transferList?: readonly any[]): void;
  on(event: string, listener: (...args: any[]) => void): unknown;
  terminate(): Promise<number>;
  ref(): void;
  unref(): void;
}

/** The `code` of a WfError: a wf_status name from the C core, or one from the JavaScript side.
 * `WF_ERR_MODULE`: the wasm module trapped (a bug: please report it) and was closed; every
 * later call on any model or tokenizer of that module throws it at once, and the next
 * `createModel`, `loadModel`, `loadTokenizer`... loads a new module (docs/ERRORS.md F12). */
export type ErrorCode =
  | 'WF_ERR_ARG' | 'WF_ERR_CONFIG' | 'WF_ERR_UNSUPPORTED' | 'WF_ERR_NOMEM' | 'WF_ERR_TOKEN'
  | 'WF_ERR_NUMERIC' | 'WF_ERR_STATE' | 'WF_ERR_FORMAT' | 'WF_ERR_THREADS'
  | 'WF_ERR_DISPOSED' | 'WF_ERR_BUSY' | 'WF_ERR_LOAD' | 'WF_ERR_WORKER' | 'WF_ERR_DIVERGED' | 'WF_ERR_MODULE';

/**
 * Every failure of the library: `code` says which kind, `message` is the core's one-line
 * explanation. Cancelled work throws a DOMException named `AbortError` instead.
 * @example
 * try {
 *   await createModel({ nHead: 3 });
 * } catch (e) {
 *   if (e instanceof WfError && e.code === 'WF_ERR_CONFIG') console.log(e.message); // "... does not divide ..."
 * }
 */
export class WfError extends Error {
  /**
   * @example
   * throw new WfError('WF_ERR_ARG', 'steps must be >= 1');
   */
  constructor(code: ErrorCode, message: string);
  readonly name: 'WfError';
  readonly code: ErrorCode;
}

export interface OptimizerSettings {
  /** Peak learning rate. */
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled weight decay on matrices and embeddings. */
  weightDecay: number;
  /** Steps of linear warmup, counted from start. */
  warmup: number;
  /** Steps of cosine decay after warmup; 0 = constant. */
  decaySteps: number;
  /** The decayed learning rate as a fraction of lr. */
  minLrRatio: number;
  /** Clip the global gradient norm to this; 0 = off. */
  gradClip: number;
  /** The step the schedule starts at (train() sets it to the model's step). */
  start: number;
  /** 1: Muon (orthogonalised momentum) for the blocks' weight matrices, AdamW for
   * embeddings, norms, biases and the head, all at the same lr; 0: AdamW everywhere. */
  muon: 0 | 1;
  /** Muon's Nesterov momentum (default 0.95). */
  muonMomentum: number;
}

/** The progress of a training run, as onProgress receives it. At a step that validated
 * (`validated: true`) valLoss is a number, that step's validation loss:
 * `p.validated && console.log(p.valLoss.toFixed(3))` compiles under --strict. */
export type TrainProgress = TrainProgressBase & (
  | {
    /** valLoss was measured at this step. */
    validated: true;
    /** The validation loss measured at this step. */
    valLoss: number;
  }
  | {
    validated: false;
    /** The latest validation loss of this run, or null before the first. */
    valLoss: number | null;
  });

/** What TrainProgress says besides its validation (TrainProgress). */
export interface TrainProgressBase {
  /** The model's step counter: optimizer steps taken so far, counting earlier runs. */
  step: number;
  /** Steps the run has taken so far (earlier calls' included: a run goes on across calls). */
  stepsDone: number;
  /** The run's length in steps; null for a time budget. */
  steps: number | null;
  /** The model's step counter where the run ends (step - stepsDone + steps); null for a time budget. */
  lastStep: number | null;
  /** With a time budget: its seconds, and the training seconds spent so far (earlier calls' included). */
  seconds?: number;
  secondsDone?: number;
  /** The run has reached its end (a run trains on past it at its last rate when asked). */
  finished: boolean;
  /** Training loss of the last batch. */
  loss: number;
  /** With evalMode 'windows': bits per character of the latest validation; else null. */
  valBpc: number | null;
  /** Learning rate of the last step. */
  lr: number;
  /** Global gradient norm of the last step, before clipping. */
  gradNorm: number;
  /** Training tokens per second in this run. */
  tokensPerSecond: number;
  /** Seconds since this run started. */
  elapsed: number;
  /** Estimated seconds left. */
  eta: number;
}

export interface TrainOptions extends Partial<Omit<OptimizerSettings, 'start'>> {
  /** The tokenizer built from the text when the model has none yet: 'char' (default),
   * 'bpe' (as many tokens as the model's vocabSize), {kind, vocabSize}, or a Tokenizer to
   * copy. A model that has one checks that it matches. */
  tokenizer?: 'char' | 'bpe' | TokenizerOptions | Tokenizer;
  /** The run's length in steps (default 1000); beside `seconds`, at most this many in this
   * call; with keepSchedule, this many more. */
  steps?: number;
  /** Train for this many seconds of training time (validation is off the clock) instead of
   * a step count. The learning rate follows the clock: a warmup over the first
   * warmupFraction of the budget, then a cosine down to minLrRatio as the budget ends. The
   * run keeps what it has spent (in the model and its file): keepSchedule goes on from there.
   * With keepSchedule: this many seconds more.
   * @example await model.train(text, { seconds: 300 }); */
  seconds?: number;
  /** The share of a time budget spent warming up (default 0.05). */
  warmupFraction?: number;
  /** Windows per batch (default: the model's, 8 for tiny). */
  batchSize?: number;
  /** Window length (default: the model's context). */
  context?: number;
  /** Go on with the model's run (one stopped early, or loaded: its text must be the same) or,
   * when it has none, its learning-rate schedule as it stands (e.g. the decayed end of an
   * earlier run), instead of a new run, whose schedule warms up over its first tenth (at most
   * 100 steps) and decays to its end. The rate never jumps back up: `steps` or `seconds` more
   * past a run's end train at its last rate. */
  keepSchedule?: boolean;
  /** Restart the batch sampler from this seed. */
  seed?: number;
  /** Fraction of the tokens, at the end, held out for validation (default 0.1; 0 = none). */
  valFraction?: number;
  /** Validate every this many steps and at the end (default 100; 0 = never). */
  evalInterval?: number;
  /** Batches per validation (default 4) in evalMode 'sample'. */
  evalBatches?: number;
  /** How a validation scores the held-out split: 'sample' (default) the mean of evalBatches
   * random batches, cheap and noisy (a standard deviation of about 0.03 nats for 4 batches of
   * 12 x 64); 'windows' all of it in consecutive windows, as evaluate() does: deterministic,
   * with valBpc, and as costly as evaluate() on the split.
   * @example await model.train(text, { evalMode: 'windows', evalInterval: 500 }); */
  evalMode?: 'sample' | 'windows';
  /** Stops the run at the next step: train rejects with the signal's reason (an AbortError
   * unless abort(reason) gave one; AbortSignal.timeout()'s TimeoutError); the steps taken stay. */
  signal?: AbortSignal;
  /** Called at every validation, at the end, and about every yieldMs. A callback that
   * throws stops the call, which rejects with that error. It runs between two steps, and
   * may call the model's save() (a checkpoint of that step) and setMetadata(), though the
   * call holds the model busy (a worker model's callback runs in this thread: there they
   * are WF_ERR_BUSY).
   * @example onProgress: (p) => { if (Date.now() - last > 300e3) { last = Date.now(); keep(model.save()); } } */
  onProgress?: (progress: TrainProgress) => void;
  /** Called with warnings about the text (e.g. the share of characters the model's
   * tokenizer does not know); default console.warn. */
  onWarning?: (message: string) => void;
  /** What a run that diverges (a loss above 1.5 x the larger of ln V and the run's first
   * loss, plus 1; the mean of its last 20 losses climbing more than max(1 nat, 4x their
   * step-to-step noise) above the run's best; a step the core refused) does before the call
   * rejects with WF_ERR_DIVERGED (WF_ERR_NUMERIC for a refused step; the error's `facts` say
   * why): 'rollback' (default) puts the model back to the run's copy, taken where it began
   * and moved at each sound validation (a model whose copy does not fit in the wasm heap goes
   * without, after an onWarning); 'stop' keeps the steps taken. */
  onDivergence?: 'rollback' | 'stop';
  /** Milliseconds between yields to the event loop (default 30). */
  yieldMs?: number;
}

export interface TrainSummary {
  /** Steps this call took. */
  steps: number;
  /** The run reached its end (train() then ends it: Model.run is null). */
  finished: boolean;
  /** Optimizer steps of the model after the run. */
  step: number;
  /** Loss of the last batch. */
  loss: number;
  /** Last validation loss, or null. */
  valLoss: number | null;
  /** With evalMode 'windows': the last validation's bits per character; else null. */
  valBpc: number | null;
  /** Training tokens this run processed. */
  tokens: number;
  /** Wall-clock seconds of the call, validation included (TrainProgress's `elapsed`). */
  elapsed: number;
  tokensPerSecond: number;
  /** Seconds spent in training steps (the time budget's clock). */
  trainSeconds: number;
  /** With a time budget (`seconds` always means one): its seconds, and those spent so far,
   * earlier calls' included. */
  seconds?: number;
  secondsDone?: number;
}

/** startRun's options: train()'s, but how a call is driven (signal, onProgress, yieldMs). */
export type StartRunOptions = Omit<TrainOptions, 'signal' | 'onProgress' | 'yieldMs'>;

/** continueRun's options. */
export interface ContinueRunOptions {
  /** At most this many steps more (past the run's end: at its last learning rate). */
  steps?: number;
  /** At most this many seconds of training more. */
  seconds?: number;
  /** Stops at the next call: continueRun rejects with the signal's reason; the steps taken stay, and the run. */
  signal?: AbortSignal;
  /** As train()'s. */
  onProgress?: (progress: TrainProgress) => void;
  /** Milliseconds of training between yields to the event loop (default 30; 0: every step). */
  yieldMs?: number;
}

/** A model's training run (Model.run): the core's, in the model and its file. */
export interface RunInfo {
  /** Steps and seconds of training it has done. */
  steps: number;
  seconds: number;
  /** Its length: steps, or seconds (a time budget); the other null. */
  lastSteps: number | null;
  lastSeconds: number | null;
  /** It has reached its end. */
  finished: boolean;
  /** Its last step's loss and learning rate (null before its first). */
  loss: number | null;
  lr: number | null;
  /** Its last validation's step and loss, or null. */
  valStep: number | null;
  valLoss: number | null;
  /** Why it diverged, or null: a refused step ('loss', 'gradNorm': not finite; 'update': would
   * overflow), the bound ('bound') or the spike rule ('spike'); at which step. */
  diverged: 'loss' | 'gradNorm' | 'update' | 'bound' | 'spike' | null;
  refused: boolean;
  at: number | null;
  /** The step its roll-back copy holds, or null (onDivergence 'stop', or no room). */
  backup: number | null;
  /** Its settings. */
  batchSize: number;
  context: number;
  valFraction: number;
  evalInterval: number;
  evalMode: 'sample' | 'windows';
  evalBatches: number;
}

export interface EvaluateOptions {
  /** Evaluate only the first maxTokens tokens. */
  maxTokens?: number;
  /** Windows per forward pass. */
  batchSize?: number;
  signal?: AbortSignal;
  /** Called with the share of the text's characters the model's tokenizer does not know
   * (they read as <unk>), when there are any; default console.warn. */
  onWarning?: (message: string) => void;
  /** Milliseconds between yields to the event loop (default 30). */
  yieldMs?: number;
}

export interface EvaluateResult {
  /** Mean cross-entropy per token, in nats. */
  loss: number;
  /** exp(loss). */
  perplexity: number;
  /** Tokens scored. */
  tokens: number;
  /** Characters (code points) the scored tokens decode to; null without a tokenizer. */
  chars: number | null;
  /** Bits per character: loss * tokens / chars / ln 2, comparable across tokenizers (a char
   * tokenizer's is loss / ln 2); null without a tokenizer. */
  bitsPerChar: number | null;
}

export interface GenerateOptions {
  /** Tokens to generate (default 100). */
  maxTokens?: number;
  /** Softmax temperature (default 0.8, as in the CLI; 0 = always the most likely token). */
  temperature?: number;
  /** Allow the char tokenizer's unknown token (<unk>, printed as U+FFFD) to be sampled
   * (default false: it never is). */
  allowUnknown?: boolean;
  /** Sample only among the k most likely tokens (default 0 = all): an integer >= 0
   * (WF_ERR_ARG otherwise, 2.5 and 1e12 included). */
  topK?: number;
  /** Sample only among the most likely tokens whose probabilities add up to p (default 1 = all). */
  topP?: number;
  /** Seed of the sampler: the same seed, model and prompt give the same text. */
  seed?: number;
  /** Text ends before the first of these strings; it is not included. */
  stop?: string | string[];
  signal?: AbortSignal;
  /** Called with each piece the iterator yields and the tokens generated so far. */
  onToken?: (piece: string, tokens: number) => void;
  /** Called with the share of the prompt's characters the model's tokenizer does not know
   * (they read as <unk>), when there are any; default console.warn. */
  onWarning?: (message: string) => void;
  /** Milliseconds between yields to the event loop (default 16). */
  yieldMs?: number;
}

/** Bytes of memory, as doubles. */
export interface MemoryUsage {
  params: number;
  /** The gradients: 0 until the model first trains (a model is made, loaded or imported to
   * generate; the first training call allocates them and the optimizer's moments). */
  grads: number;
  /** AdamW's moments (and Muon's scratch): 0 until the model first trains, as grads. */
  optimizer: number;
  activations: number;
  inference: number;
  total: number;
  /** The parameter count (elements, without the alignment padding the byte counts include). */
  count: number;
  /** The most this build lets one model (total less activations), or one batch's activations,
   * take: 95% of the 4 GB a wasm module addresses. */
  budget: number;
}

export interface TensorInfo {
  /** e.g. 'wte', 'qkvw' */
  name: string;
  shape: number[];
  /** Elements. */
  size: number;
  /** Elements from the start of the flat parameter block; -1 for a quantized tensor. */
  offset: number;
  /** Whether weight decay applies to it. */
  decay: boolean;
  /** How its weights are stored: 'f32', or quantized blocks (model.quantize). */
  dtype: Quantization;
  /** Its slices in the trainable mask: one per layer for a per-layer tensor, else 1. */
  layers: number;
  /** Where its trainable slices' gradients start among the model's gradients; -1: frozen. */
  gradOffset: number;
  /** Where its slices start in the trainable mask. */
  slice0: number;
}

/** A LoRA adapter target: q, k, v, o (attention), fc (the first feed-forward matrix, SwiGLU's
 * gate), up (SwiGLU's), down (the second); or the groups attn, mlp, all. */
export type LoraTarget = 'q' | 'k' | 'v' | 'o' | 'fc' | 'up' | 'down' | 'attn' | 'mlp' | 'all';

export interface LoraOptions {
  /** The adapters' rank r (8). */
  rank?: number;
  /** Their scale's numerator: each adds (alpha / rank) x A^T B^T (2 * rank). */
  alpha?: number;
  /** The linears to adapt ('all'). */
  targets?: LoraTarget | LoraTarget[];
}

/** A model's LoRA settings. */
export interface LoraSettings {
  rank: number;
  alpha: number;
  targets: Array<'q' | 'k' | 'v' | 'o' | 'fc' | 'up' | 'down'>;
}

/** What trains (Model.trainable). */
export interface TrainableInfo {
  /** Parameters that train. */
  trainable: number;
  /** All parameters. */
  total: number;
  /** The tensors that train: true for all of it, else the layers of it that do. */
  tensors: Record<string, true | number[]>;
}

/** Tensors to train or freeze: a tensor name ('lm_head', 'qkvw'), or a group ('all', 'layers',
 * 'embed', 'norm', 'attn', 'mlp', 'cross', 'head', 'lora'), per-layer ones optionally with
 * layers after '@' ('layers@-2': the last two, 'attn@0-3', 'mlp@4-', 'qkvw@5'); or an array. */
export type TrainableSpec = string | string[];

/** LoRA adapters in PEFT's layout (PeftModel.from_pretrained reads a folder of them). */
export interface PeftFiles {
  'adapter_model.safetensors': Uint8Array;
  'adapter_config.json': string;
}

export interface PeftExportOptions {
  /** adapter_config.json's base_model_name_or_path (null without it). */
  baseModel?: string;
}

export interface ModelInfo {
  config: ModelConfig;
  paramCount: number;
  step: number;
  /** Learning rate of the next step. */
  lr: number;
  /** What made the model (the core's wf_origin): 'init' (created here), 'weights' or
   * 'optimizer' (a .wf checkpoint, without or with optimizer state), 'safetensors', 'gguf',
   * 'llama2c' (imported, pretrained elsewhere), 'none' (empty). Training does not change it. */
  origin: 'none' | 'init' | 'weights' | 'optimizer' | 'llama2c' | 'safetensors' | 'gguf';
  optimizer: OptimizerSettings;
  /** Whether the model holds AdamW state training can resume from: false after loading a
   * file saved without it (or safetensors), until the model's first step. */
  optimizerState: boolean;
  memory: MemoryUsage;
  tokenizer: { kind: string; vocabSize: number } | null;
  /** What the model is doing ('training', 'evaluation', 'generation'), or null. */
  busy: string | null;
  /** Threads this model runs on, the caller's included (1: the single-thread build, or no
   * idle pthread worker was left for it). */
  threads: number;
  /** The loaded build's kernel set: 'relaxed' (fused multiply-add) or 'simd128'. */
  simd: 'relaxed' | 'simd128';
  /** What the application saved with the model (setMetadata), or null. */
  metadata: unknown;
  /** Parameters that train (the rest are frozen: Model.trainOnly). */
  trainable: number;
  /** The LoRA adapters' settings, or null. */
  lora: LoraSettings | null;
  /** The batch size train() and evaluate() use unless told otherwise (Model.defaultBatchSize). */
  defaultBatchSize: number;
  /** Model.quantization. */
  quantization: Quantization | 'mixed';
  /** The model's training run, or null (Model.run). */
  run: RunInfo | null;
  /** How createModel('auto', ...) chose the preset, or null (Model.autoChoice). */
  autoChoice: AutoChoice | null;
}

export interface SaveOptions {
  /** Include the optimizer state so that training resumes exactly (default true; a GGUF file: false). */
  optimizer?: boolean;
  /** 'wf' (default): wasmformer's checkpoint. 'gguf': llama.cpp's GGUF v3, for a Llama-shaped
   * model (its weights as they are: float32, Q8_0 or Q4_0; its tokenizer: a SentencePiece or
   * byte-level BPE one, or none: a placeholder vocabulary for token ids). loadModel reads both.
   * @example const gguf = model.save({ format: 'gguf' }); */
  format?: 'wf' | 'gguf';
}

export interface StepResult {
  loss: number;
  gradNorm: number;
  lr: number;
  step: number;
}

/** Self-attention maps of one text (Model.selfAttention). */
export interface AttentionMaps {
  nHead: number;
  /** Tokens of the text the maps cover. */
  T: number;
  /** Their ids. */
  ids: Int32Array;
  /** Each id's text, e.g. for labels. */
  tokens: string[];
  /** One map per layer, [nHead * T * T]: row (query) i, column (key) j. */
  layers: Float32Array[];
}

/** Text to token ids and back. Char-level: id 0 is `<unk>`, then every distinct code point
 * of the text it was built from, in order. Byte-level BPE: 256 byte tokens, then merges
 * learned from the text; any bytes round-trip. 'hf': a Hugging Face tokenizer.json
 * (GPT-2 / SmolLM byte-level BPE, Llama 2 / TinyLlama SentencePiece-style BPE), run as the
 * tokenizers library runs it, without the post-processor's special tokens. 'llama2c':
 * llama2.c's tokenizer.bin, encoded as its run.c does (a leading space, no BOS). */
export class Tokenizer {
  private constructor();
  /** 'char', 'bpe', 'hf' or 'llama2c'. */
  readonly kind: 'char' | 'bpe' | 'hf' | 'llama2c';
  /** Number of ids, `<unk>` and special tokens included. */
  readonly vocabSize: number;
  /** The id a prompt starts with (llama2.c's BOS, 1; a tokenizer.json template's leading
   * special token such as Llama's `<s>`), or null; generate() puts it first. */
  readonly bos: number | null;
  /**
   * UTF-8 text to token ids.
   * @example
   * const tok = await createTokenizer('hello world');
   * tok.encode('hold'); // Int32Array [4, 6, 5, 2]
   */
  encode(text: string): Int32Array;
  /**
   * Token ids to text; `<unk>` becomes U+FFFD.
   * @example
   * tok.decode(tok.encode('hello')); // 'hello'
   */
  decode(ids: ArrayLike<number>): string;
  /**
   * Token ids to UTF-8 bytes.
   * @example
   * tok.decodeBytes([4]); // Uint8Array [104]
   */
  decodeBytes(ids: ArrayLike<number>): Uint8Array;
  /**
   * The tokenizer as the bytes of a tokenizer file (docs/FORMATS.md); see loadTokenizer.
   * @example
   * writeFileSync('vocab.wft', tok.save());
   */
  save(): Uint8Array;
  /**
   * The tokenizer as a Hugging Face tokenizer.json: a BPE one that the Hugging Face
   * libraries encode alike (docs/FORMATS.md), or the file an 'hf' one came from. Char and
   * llama2.c tokenizers have none: WF_ERR_UNSUPPORTED (save() keeps them).
   * @example
   * writeFileSync('tokenizer.json', tok.saveJSON());
   */
  saveJSON(): string;
  /**
   * Frees the tokenizer's wasm memory; using it afterwards throws WF_ERR_DISPOSED.
   * @example
   * tok.dispose();
   */
  dispose(): void;
  /**
   * dispose(), for `using`.
   * @example
   * { using tok = await createTokenizer(text); console.log(tok.vocabSize); }
   */
  [Symbol.dispose](): void;
}

/**
 * A transformer in this thread's wasm memory: train it, evaluate it, generate from it.
 * Long calls (train, evaluate, generate) yield to the event loop and take an AbortSignal;
 * one runs at a time (a second throws WF_ERR_BUSY). Call dispose() when done.
 */
export class Model {
  private constructor();
  /** The config (throws WF_ERR_DISPOSED after dispose, like every member). */
  readonly config: ModelConfig;
  /** Number of weights. */
  readonly paramCount: number;
  /** Optimizer steps taken. */
  readonly step: number;
  /** Learning rate the next step will use. */
  readonly lr: number;
  /** The optimizer settings. */
  readonly optimizer: OptimizerSettings;
  /** The model's tokenizer: null until it is trained on text or given one. */
  readonly tokenizer: Tokenizer | null;
  /** What the model is busy with ('training', 'evaluation', 'generation', 'decoding'), or null. */
  readonly busy: string | null;
  /** The batch size train() and evaluate() use unless told otherwise: the config's
   * batchSize or its preset's (micro 16, tiny 8, baby 4), a loaded model's run's, else 8. */
  readonly defaultBatchSize: number;
  /** How createModel('auto', { text, seconds }) chose the preset: AutoChoice, or null. */
  readonly autoChoice: AutoChoice | null;
  /** The model's training run, or null: what it has done, its length and settings, why it diverged. */
  readonly run: RunInfo | null;

  /**
   * Trains on text (or token ids) and resolves to a summary. The first text builds a
   * char-level tokenizer when the model has none; it joins the model with the first step
   * (a call refused before then leaves the model without one). Ids, here and in every
   * method that takes them, must be integers in [0, vocabSize) (targets: or -1, ignored):
   * a value that is not an integer (2.5, NaN, '7') or beyond int32 (2 ** 32 + 1) is a
   * WF_ERR_TOKEN, never converted.
   * @example
   * const summary = await model.train(text, {
   *   steps: 500, lr: 2e-3, evalInterval: 100,
   *   onProgress: (p) => console.log(p.step, p.loss.toFixed(3), p.valLoss?.toFixed(3), Math.round(p.eta) + 's'),
   * });
   */
  train(data: string | ArrayLike<number>, options?: TrainOptions): Promise<TrainSummary>;

  /**
   * Begins a training run on text without taking a step (the text crosses into the model
   * once); with keepSchedule, the model's run goes on (a loaded one takes its text again).
   * The run lives in the model and its file until another begins or endRun().
   * @example
   * model.startRun(text, { seconds: 60 });
   * await model.continueRun({ seconds: 10 }); // pause: sample, save; then go on
   * await model.continueRun();                // to the end
   */
  startRun(data: string | ArrayLike<number>, options?: StartRunOptions): RunInfo;

  /**
   * Trains the model's run to its end, or `steps` or `seconds` more; an abort keeps the run.
   * @example await model.continueRun({ signal: controller.signal, onProgress: (p) => draw(p) });
   */
  continueRun(options?: ContinueRunOptions): Promise<TrainSummary>;

  /** Ends the model's run: its learning-rate schedule goes on in the optimizer settings.
   * @example model.endRun(); */
  endRun(): void;

  /**
   * Mean loss and perplexity on text, over non-overlapping windows of the context. A text
   * needs the model's tokenizer (WF_ERR_STATE without one); ids need none.
   * @example
   * const { loss, perplexity } = await model.evaluate(heldOutText);
   */
  evaluate(data: string | ArrayLike<number>, options?: EvaluateOptions): Promise<EvaluateResult>;

  /**
   * Generated text as an async iterator of pieces. A prompt longer than the context keeps
   * its end.
   * @example
   * for await (const piece of model.generate('Elizabeth ', { maxTokens: 200, temperature: 0.8, seed: 1 })) {
   *   process.stdout.write(piece);
   * }
   */
  generate(prompt?: string, options?: GenerateOptions): AsyncGenerator<string, void, undefined>;

  /**
   * Generates and resolves to the whole text; pass onToken to stream it.
   * @example
   * const text = await model.generateText('Mr. Darcy', { maxTokens: 100, stop: '\n\n', onToken: (p) => show(p) });
   */
  generateText(prompt?: string, options?: GenerateOptions): Promise<string>;

  /**
   * Everything about the model in one plain object.
   * @example
   * const { paramCount, step, memory } = model.info();
   */
  info(): ModelInfo;

  /**
   * Bytes of weights, gradients, optimizer state, activations and inference buffers.
   * @example
   * console.log((model.memory().total / 1e6).toFixed(1), 'MB');
   */
  memory(): MemoryUsage;

  /**
   * Changes some optimizer settings; the others stay. Returns all of them, as the model
   * now holds them (float32).
   * @example
   * model.setOptimizer({ lr: 1e-3, gradClip: 0.5 });
   */
  setOptimizer(settings: Partial<OptimizerSettings>): OptimizerSettings;

  /** What the application saved with the model (a JSON value), or null. The CLI keeps its
   * run plan here as `{ run: {...} }`. A note another program wrote that is not JSON, or
   * nests arrays and objects more than 64 levels deep, reads as null. */
  readonly metadata: unknown;

  /**
   * Replaces the metadata saved with the model: any JSON-serialisable value (at most 1 MiB
   * as JSON, nested at most 64 levels); null removes it. It travels in save(), load() and
   * model files. Anything else (a cycle, a BigInt, a function) is a WF_ERR_ARG and changes
   * nothing.
   * @example
   * model.setMetadata({ losses: history });
   */
  setMetadata(value: unknown): void;

  /**
   * One optimizer step on a [B, T] batch of token ids (row-major); inputs and targets hold
   * exactly B * T ids each (WF_ERR_ARG otherwise).
   * @example
   * const { loss } = model.trainStep(inputs, targets, 8, 64);
   */
  trainStep(inputs: ArrayLike<number>, targets: ArrayLike<number>, B: number, T: number): StepResult;

  /**
   * A forward pass on a [B, T] batch: the loss (null without targets) and logits [B*T*V].
   * inputs (and targets) hold exactly B * T ids.
   * @example
   * const { logits } = model.forward(ids, null, 1, ids.length);
   */
  forward(inputs: ArrayLike<number>, targets: ArrayLike<number> | null, B: number, T: number): { loss: number | null; logits: Float32Array };

  /**
   * Every layer's self-attention map of a text (or ids), from one forward pass. A text
   * longer than the context keeps its end. In a layer's map, `(h * T + i) * T + j` is how
   * much query i of head h attends to key j; a decoder's row i is 0 past column i.
   * @example
   * const { layers, tokens, T } = model.selfAttention('Mr. Darcy');
   * const aToD = layers[0][(0 * T + 4) * T + 0]; // layer 0, head 0: query 4 ('D') on key 0 ('M')
   */
  selfAttention(data: string | ArrayLike<number>): AttentionMaps;

  /**
   * The parameter tensors, in the core's table order.
   * @example
   * for (const t of model.tensors()) console.log(t.name, t.shape);
   */
  tensors(): TensorInfo[];

  /**
   * Trains only what spec names; the rest is frozen: no gradients, no optimizer state (the
   * memory goes back) and no weight-gradient work. Saved with the model.
   * @example
   * model.trainOnly(['head', 'norm', 'layers@-2']);
   */
  trainOnly(spec: TrainableSpec): TrainableInfo;

  /**
   * Freezes what spec names, the rest as it was.
   * @example
   * model.freeze('embed');
   */
  freeze(spec: TrainableSpec): TrainableInfo;

  /**
   * Makes what spec names train too.
   * @example
   * model.unfreeze('head');
   */
  unfreeze(spec: TrainableSpec): TrainableInfo;

  /**
   * What trains now.
   * @example
   * const { trainable, total } = model.trainable();
   */
  trainable(): TrainableInfo;

  /** The LoRA adapters' settings, or null without adapters. */
  readonly lora: LoraSettings | null;

  /**
   * Adds LoRA adapters (A random, B zero: the model is unchanged until it trains); a
   * model's first adapters train alone, the base frozen. Returns the settings.
   * @example
   * model.addLora({ rank: 8, alpha: 16, targets: ['q', 'v'] });
   */
  addLora(options?: LoraOptions): LoraSettings;

  /**
   * Folds the adapters into their weights (W += alpha/rank B A) and removes them.
   * @example
   * model.mergeLora(); const files = exportSafetensors(model);
   */
  mergeLora(): void;

  /**
   * Removes the adapters without merging: the base model again.
   * @example
   * model.removeLora();
   */
  removeLora(): void;

  /**
   * The adapters in PEFT's layout (GPT-2-, GPT-NeoX- and Llama-shaped models); the base is
   * exportSafetensors(model) before addLora (or after removeLora).
   * @example
   * const files = model.exportPeft({ baseModel: 'gpt2' });
   */
  exportPeft(options?: PeftExportOptions): PeftFiles;

  /**
   * Puts PEFT LoRA adapters on this model (their base), replacing any it has.
   * @example
   * model.importPeft({ 'adapter_config.json': text, 'adapter_model.safetensors': bytes });
   */
  importPeft(files: { 'adapter_config.json': string | Uint8Array | ArrayBuffer; 'adapter_model.safetensors': Uint8Array | ArrayBuffer }): LoraSettings;

  /**
   * Stores the linears' and token embeddings' weights as ggml's blocks of 32 with an fp16
   * scale: 'q8_0' (3.8x smaller) or 'q4_0' (7x smaller), or back as float32 ('f32', exactly).
   * Quantized weights are frozen: LoRA adapters train over them (QLoRA); generation reads
   * them with 8-bit integer dot products, training and evaluation as the floats they hold.
   * Needs dModel and dFF multiples of 32 (WF_ERR_UNSUPPORTED otherwise).
   * @example
   * model.quantize('q4_0');
   * model.addLora({ rank: 8, targets: ['q', 'v'] });
   */
  quantize(type: Quantization): void;

  /** How the linears' and embeddings' weights are stored ('mixed': a GGUF file's mix). */
  readonly quantization: Quantization | 'mixed';

  /**
   * A copy of one tensor's weights (a quantized tensor's: WF_ERR_STATE, quantize('f32') first).
   * @example
   * const wte = model.getTensor('wte'); // Float32Array [V * C]
   */
  getTensor(name: string): Float32Array;

  /**
   * Overwrites one tensor's weights (same number of elements, each a finite float32).
   * @example
   * model.setTensor('wte', new Float32Array(model.getTensor('wte').length));
   */
  setTensor(name: string, values: ArrayLike<number>): void;

  /**
   * The model as checkpoint bytes: config, tokenizer, weights and, unless
   * `optimizer: false`, everything training needs to resume exactly (AdamW moments,
   * optimizer settings, step, the batch sampler's state).
   * @example
   * const bytes = model.save();                       // resumable
   * const small = model.save({ optimizer: false });   // weights only, a third of the size
   */
  save(options?: SaveOptions): Uint8Array;

  /**
   * Replaces the whole model (config, weights, optimizer state, tokenizer) with a
   * checkpoint's, in place. Every part of the bytes is checked first; on any error the
   * model is unchanged.
   * @example
   * model.load(await (await fetch('/models/austen.wf')).arrayBuffer());
   */
  load(bytes: Uint8Array | ArrayBuffer): this;

  /**
   * Frees the model's wasm memory and its tokenizer's. Later use throws WF_ERR_DISPOSED;
   * a second dispose does nothing.
   * @example
   * model.dispose();
   */
  dispose(): void;

  /**
   * dispose(), for `using` (where the runtime has Symbol.dispose).
   * @example
   * { using model = await createModel('tiny'); await model.train(text, { steps: 10 }); } // disposed here
   */
  [Symbol.dispose](): void;
}

/**
 * The Model API with the model in a Web Worker (browsers) or a worker thread (Node), so
 * training never blocks the page. Every method returns a promise; `config`, `paramCount`
 * and `step` are snapshots, refreshed after each call and by progress reports.
 */
export class WorkerModel {
  private constructor();
  readonly config: ModelConfig;
  readonly paramCount: number;
  readonly step: number;
  /** The last `info()` the worker sent: refreshed after each call (and its step by progress reports). */
  readonly snapshot: ModelInfo;

  /**
   * Trains in the worker; onProgress is called in this thread.
   * @example
   * await wm.train(text, { steps: 1000, onProgress: (p) => bar.update(p.step / p.steps) });
   */
  train(data: string | ArrayLike<number>, options?: TrainOptions): Promise<TrainSummary>;

  /**
   * Begins a run in the worker: the text crosses once; continueRun drives it, pausing
   * (abort), sampling and saving between calls without ending it.
   * @example
   * await wm.startRun(text, { seconds: 60 });
   * await wm.continueRun({ signal: pause.signal, onProgress: draw });
   */
  startRun(data: string | ArrayLike<number>, options?: StartRunOptions): Promise<RunInfo>;
  /**
   * Trains the worker's run to its end, or `steps` or `seconds` more.
   * @example await wm.continueRun({ steps: 100 });
   */
  continueRun(options?: ContinueRunOptions): Promise<TrainSummary>;
  /**
   * Ends the worker's run (Model.endRun).
   * @example await wm.endRun();
   */
  endRun(): Promise<void>;
  /** The model's run as of the last call that returned (snapshot.run). */
  readonly run: RunInfo | null;
  /** How the weights are stored (Model.quantization), as of the last call that returned. */
  readonly quantization: Quantization | 'mixed';

  /**
   * Loss and perplexity, computed in the worker.
   * @example
   * const { perplexity } = await wm.evaluate(text);
   */
  evaluate(data: string | ArrayLike<number>, options?: EvaluateOptions): Promise<EvaluateResult>;

  /**
   * Generated text streamed from the worker. Leaving the loop early stops the worker too.
   * The pieces gather in the worker and cross at most once per 16 ms, joined (onToken gets
   * each joined piece with the token count so far), so a fast model cannot flood the page.
   * @example
   * for await (const piece of wm.generate('It is a truth', { maxTokens: 200 })) output.textContent += piece;
   */
  generate(prompt?: string, options?: GenerateOptions): AsyncGenerator<string, void, undefined>;

  /**
   * Generates and resolves to the whole text.
   * @example
   * const text = await wm.generateText('Emma', { maxTokens: 50, temperature: 0 });
   */
  generateText(prompt?: string, options?: GenerateOptions): Promise<string>;

  /**
   * Everything about the model, read now in the worker.
   * @example
   * const { step, memory } = await wm.info();
   */
  info(): Promise<ModelInfo>;

  /**
   * The parameter tensors.
   * @example
   * const names = (await wm.tensors()).map((t) => t.name);
   */
  tensors(): Promise<TensorInfo[]>;

  /**
   * A copy of one tensor's weights, moved out of the worker.
   * @example
   * const wpe = await wm.getTensor('wpe');
   */
  getTensor(name: string): Promise<Float32Array>;

  /**
   * Overwrites one tensor's weights.
   * @example
   * await wm.setTensor('wte', weights);
   */
  setTensor(name: string, values: ArrayLike<number>): Promise<void>;

  /**
   * Changes some optimizer settings; resolves to all of them.
   * @example
   * await wm.setOptimizer({ lr: 5e-4 });
   */
  setOptimizer(settings: Partial<OptimizerSettings>): Promise<OptimizerSettings>;

  /** The learning rate of the next step, as of the last call that returned. */
  readonly lr: number;
  /** The optimizer settings, as of the last call that returned. */
  readonly optimizer: OptimizerSettings;
  /** The tokenizer's kind and size, or null; the Tokenizer stays in the worker (use encode and decode). */
  readonly tokenizer: { kind: string; vocabSize: number } | null;
  /** The LoRA adapters' settings, or null, as of the last call that returned. */
  readonly lora: LoraSettings | null;
  /** What the worker's model is doing as far as this thread knows ('training', 'evaluation',
   * 'generation': a call of that kind is pending), or null. */
  readonly busy: string | null;
  /** The batch size train() and evaluate() use unless told otherwise. */
  readonly defaultBatchSize: number;
  /** How createModel('auto', { text, seconds }) chose the preset: AutoChoice, or null. */
  readonly autoChoice: AutoChoice | null;
  /** The metadata saved with the model, as of the last call that returned. */
  readonly metadata: unknown;

  /**
   * Replaces the metadata saved with the model (see Model.setMetadata).
   * @example
   * await wm.setMetadata({ note: 'fine-tuned on my letters' });
   */
  setMetadata(value: unknown): Promise<void>;

  /**
   * Bytes of memory the model uses, read now in the worker.
   * @example
   * const { total } = await wm.memory();
   */
  memory(): Promise<MemoryUsage>;

  /**
   * One optimizer step on a [B, T] batch of token ids, in the worker.
   * @example
   * const { loss } = await wm.trainStep(inputs, targets, 8, 64);
   */
  trainStep(inputs: ArrayLike<number>, targets: ArrayLike<number>, B: number, T: number): Promise<StepResult>;

  /**
   * A forward pass on a [B, T] batch in the worker; the logits are moved out.
   * @example
   * const { logits } = await wm.forward(ids, null, 1, ids.length);
   */
  forward(inputs: ArrayLike<number>, targets: ArrayLike<number> | null, B: number, T: number): Promise<{ loss: number | null; logits: Float32Array }>;

  /**
   * Token ids of text, with the model's tokenizer.
   * @example
   * const ids = await wm.encode('Mr. Bennet');
   */
  encode(text: string): Promise<Int32Array>;

  /**
   * Text of token ids, with the model's tokenizer.
   * @example
   * const text = await wm.decode(ids);
   */
  decode(ids: ArrayLike<number>): Promise<string>;

  /**
   * Every layer's self-attention map of a text, computed in the worker.
   * @example
   * const { layers, tokens } = await wm.selfAttention('It is a truth');
   */
  selfAttention(data: string | ArrayLike<number>): Promise<AttentionMaps>;

  /**
   * A checkpoint of the model, moved out of the worker without a copy.
   * @example
   * const bytes = await wm.save();
   * localStorage.setItem('model', btoa(String.fromCharCode(...bytes))); // or IndexedDB
   */
  save(options?: SaveOptions): Promise<Uint8Array>;

  /**
   * Model.trainOnly in the worker.
   * @example
   * await wm.trainOnly('lora');
   */
  trainOnly(spec: TrainableSpec): Promise<TrainableInfo>;

  /**
   * Model.freeze in the worker.
   * @example
   * await wm.freeze('embed');
   */
  freeze(spec: TrainableSpec): Promise<TrainableInfo>;

  /**
   * Model.unfreeze in the worker.
   * @example
   * await wm.unfreeze('head');
   */
  unfreeze(spec: TrainableSpec): Promise<TrainableInfo>;

  /**
   * Model.trainable in the worker.
   * @example
   * const { trainable } = await wm.trainable();
   */
  trainable(): Promise<TrainableInfo>;

  /**
   * Model.addLora in the worker.
   * @example
   * await wm.addLora({ rank: 8 });
   */
  addLora(options?: LoraOptions): Promise<LoraSettings>;

  /**
   * Model.mergeLora in the worker.
   * @example
   * await wm.mergeLora();
   */
  mergeLora(): Promise<void>;

  /**
   * Model.removeLora in the worker.
   * @example
   * await wm.removeLora();
   */
  removeLora(): Promise<void>;

  /**
   * Model.exportPeft in the worker.
   * @example
   * const files = await wm.exportPeft();
   */
  exportPeft(options?: PeftExportOptions): Promise<PeftFiles>;

  /**
   * Model.importPeft in the worker.
   * @example
   * await wm.importPeft(files);
   */
  importPeft(files: { 'adapter_config.json': string | Uint8Array | ArrayBuffer; 'adapter_model.safetensors': Uint8Array | ArrayBuffer }): Promise<LoraSettings>;

  /**
   * Model.quantize in the worker.
   * @example
   * await wm.quantize('q8_0');
   */
  quantize(type: Quantization): Promise<void>;

  /**
   * Replaces the model with a checkpoint's, in place (unchanged on failure). The bytes are
   * copied once, then transferred to the worker.
   * @example
   * await wm.load(bytes);
   */
  load(bytes: Uint8Array | ArrayBuffer): Promise<void>;

  /**
   * Ends the worker and frees all its memory. Pending calls reject with WF_ERR_DISPOSED.
   * @example
   * wm.dispose();
   */
  dispose(): void;

  /**
   * dispose(), for `using`.
   * @example
   * { using wm = await createWorkerModel('tiny'); await wm.train(text, { steps: 10 }); }
   */
  [Symbol.dispose](): void;
}

/** One field of the config table (src/js/config-table.js): a model config field or an
 * optimizer setting, as the C core defines it. */
export interface ConfigField<Name extends string = string> {
  /** The JavaScript name (`nLayer`). */
  readonly name: Name;
  /** The C field (`n_layer`). */
  readonly c: string;
  /** 'enum' (a string of `values`), 'bool', 'int' (int32), 'real' (float32) or 'seed' (uint32). */
  readonly type: 'enum' | 'bool' | 'int' | 'real' | 'seed';
  /** The core's default, in the JavaScript form. */
  readonly default: string | number | boolean;
  /** The range the core accepts, from min to max (none when absent); `bounds` says which
   * ends are in: '[]', '[)', '(]' or '()'. */
  readonly min?: number;
  readonly max?: number;
  readonly bounds?: '[]' | '[)' | '(]' | '()';
  /** The range holds for encoder-decoders (the field means nothing to the other archs). */
  readonly encoderDecoderOnly?: boolean;
  /** An enum's names, by C value. */
  readonly values?: readonly string[];
  /** One line of meaning. */
  readonly meaning: string;
}

/**
 * Every field of a model config, in the C struct's order, with its default and range: what
 * the CLI's flags and the web page's form are made from.
 * @example
 * for (const f of CONFIG_FIELDS) console.log(f.name, f.default, f.meaning);
 */
export const CONFIG_FIELDS: readonly ConfigField<keyof ModelConfig>[];

/**
 * Every optimizer setting, in the C struct's order, with its default and range.
 * @example
 * const lr = OPTIM_FIELDS.find((f) => f.name === 'lr')?.default; // 3e-4, the core's default
 */
export const OPTIM_FIELDS: readonly ConfigField<keyof OptimizerSettings>[];

/** The defaults of train()'s own options (the optimizer's are in OPTIM_FIELDS). */
export const TRAIN_DEFAULTS: Readonly<{ steps: number; valFraction: number; evalInterval: number; evalBatches: number; evalMode: 'sample' | 'windows'; yieldMs: number }>;

/** The lowest held-out loss a preset is expected to reach at any number of steps (its curve's
 * last point). Throws WfError WF_ERR_ARG for an unknown preset.
 * @example lossFloor('baby'); // 2.37 */
export function lossFloor(preset: string): number;
/** Whether `preset` could still be chosen for `seconds`: false when a preset of
 * `stepsPerSecond` (measured so far) already expects a loss at or below its floor, so it need
 * not be measured (a tie goes to the smaller, measured first).
 * @example if (mayWin('baby', { seconds: 60, stepsPerSecond: { micro: 40 } })) measure('baby'); // false: skipped */
export function mayWin(preset: string, opts: { seconds: number; stepsPerSecond: Partial<Record<'micro' | 'tiny' | 'baby', number>> }): boolean;
/** The presets preset: 'auto' chooses among, smallest first: ['micro', 'tiny', 'baby']. */
export const AUTO_PRESETS: readonly string[];
/** A preset's expected held-out loss after a whole run of `steps` steps, from the bench's
 * loss-against-steps curves (src/js/auto-curves.js; bench/ttq/jobs-auto.txt): the points
 * joined in log(steps), flat past the last one. Throws WfError WF_ERR_ARG for an unknown preset.
 * @example expectedLoss('micro', 2000); // 1.34 */
export function expectedLoss(preset: string, steps: number): number;
/** The model size for a time budget (preset: 'auto'): the preset with the lowest expected
 * held-out loss after `seconds` at this machine's `stepsPerSecond` (measured at each preset's
 * batch size, e.g. by measurePresetSpeeds); `why` lists every candidate's steps and loss.
 * Presets without a positive speed are left out; a tie goes to the smaller.
 * @example const { preset, why } = choosePreset({ seconds: 300, stepsPerSecond: { micro: 45, tiny: 10, baby: 0.6 } }); */
export function choosePreset(opts: { seconds: number; stepsPerSecond: Partial<Record<'micro' | 'tiny' | 'baby', number>> }): { preset: string; steps: number; loss: number; why: string };
/** How createModel('auto', { text, seconds }) chose a model's preset (Model.autoChoice). */
export interface AutoChoice {
  /** The preset chosen: the lowest expected held-out loss after `seconds` here. */
  preset: Preset;
  /** The steps it is expected to make in that time, at the speed measured here. */
  steps: number;
  /** Its expected held-out loss (the bench's curve at `steps`). */
  loss: number;
  /** Every candidate's steps and expected loss, in words. */
  why: string;
  /** The steps per second measured here for each candidate (measurePresetSpeeds). */
  stepsPerSecond: Partial<Record<Preset, number>>;
}
/** Measures each preset's training steps per second here (a model of each built from `text`,
 * trained for about probeSeconds, then disposed), for choosePreset. `api` is the package.
 * @example const speeds = await measurePresetSpeeds(wf, text); // wf: import * as wf from 'wasmformer' */
export function measurePresetSpeeds(api: { createModel: Function; PRESETS: Record<string, { batchSize: number }> }, text: string, opts?: { probeSeconds?: number; presets?: string[]; tokenizer?: unknown; threads?: number }): Promise<Record<string, number>>;

/** The defaults of generate()'s options. */
export const GENERATE_DEFAULTS: Readonly<{ maxTokens: number; temperature: number; topK: number; topP: number; allowUnknown: boolean; yieldMs: number }>;

/** The presets' configs, with their training defaults `batchSize` and `lr` (and micro's and
 * tiny's `beta2` and `muon`). */
export const PRESETS: Readonly<Record<Preset, Readonly<Partial<ModelConfig> & { batchSize: number; lr: number; beta2?: number; muon?: number }>>>;
/** Each preset's run length in steps, what the command line and the page train for (src/presets.h). */
export const PRESET_STEPS: Readonly<Record<Preset, number>>;
/** The preset the command line and the page start with ('micro'). */
export const DEFAULT_PRESET: Preset;

/**
 * The complete config createModel would build from a preset name or a partial config.
 * @example
 * resolveConfig({ preset: 'tiny', nLayer: 2 }).dModel; // 128
 */
export function resolveConfig(config?: Preset | ConfigInput): ModelConfig & { batchSize: number; lr: number };

/** The loaded wasm module (opaque). */
export interface Runtime {
  readonly M: unknown;
}

/**
 * Loads the wasm module (once per location) ahead of time; every other function does it
 * on first use.
 * @example
 * await load(); // or load({ wasmUrl: '/static/wasmformer.wasm' })
 */
export function load(options?: LoadOptions): Promise<Runtime>;

/**
 * A model with fresh random weights, from a preset name or a partial config. A partial
 * config is over the `tiny` preset, its training defaults (batchSize 8, lr 2e-3) included,
 * unless it names another `preset` or sets them.
 * @example
 * const model = await createModel('tiny');
 * const custom = await createModel({ preset: 'tiny', nLayer: 2, activation: 'relu', positions: 'sinusoidal' });
 */
export function createModel(config?: Preset | 'auto' | ConfigInput, options?: CreateModelOptions): Promise<Model>;

/**
 * A tokenizer learned from text: char-level (default) or byte-level BPE.
 * @example
 * const tok = await createTokenizer(text, { kind: 'bpe', vocabSize: 512 });
 * const model = await createModel({ vocabSize: tok.vocabSize }, { tokenizer: tok });
 */
export function createTokenizer(text: string, options?: TokenizerOptions & LoadOptions): Promise<Tokenizer>;

/**
 * Checks a config without building it: null when valid, else what is wrong.
 * @example
 * const problem = await checkConfig({ nHead: 5 });
 * if (problem) console.log(problem.code, problem.message);
 */
export function checkConfig(config: Preset | ConfigInput, options?: LoadOptions): Promise<{ code: ErrorCode; message: string } | null>;

/**
 * Memory a config needs, trained at batch B and length T (0, 0: without activations).
 * @example
 * const { total } = await estimateMemory('baby', 4, 256);
 */
export function estimateMemory(config: Preset | ConfigInput, B?: number, T?: number, options?: LoadOptions): Promise<MemoryUsage>;

/**
 * createModel with the model in a Web Worker (browsers) or a worker thread (Node).
 * @example
 * const wm = await createWorkerModel('tiny');
 * await wm.train(text, { steps: 200, onProgress: (p) => console.log(p.step) });
 */
export function createWorkerModel(config?: Preset | 'auto' | ConfigInput, options?: WorkerOptions & Pick<CreateModelOptions, 'tokenizer' | 'text' | 'seconds'>): Promise<WorkerModel>;

/**
 * loadModel with the model in a Web Worker (browsers) or a worker thread (Node), from the
 * same sources, streamed inside the worker: a Blob or File is posted (no copy), a Response's
 * body or a ReadableStream transferred where streams transfer (else read into a Blob first),
 * bytes copied once, then transferred. onProgress is called here as the worker reads; an
 * abort (signal) stops the load in the worker.
 * @example
 * const wm = await loadWorkerModel(document.querySelector('input[type=file]').files[0]);
 */
export function loadWorkerModel(source: ModelSource, options?: WorkerOptions & Pick<ModelStreamOptions, 'quantize' | 'onProgress' | 'signal'>): Promise<WorkerModel>;

/**
 * importSafetensors with the model in a Web Worker (browsers) or a worker thread (Node): a
 * model folder's files, copied once, then transferred.
 * @example
 * const wm = await importWorkerSafetensors({ 'config.json': configText, 'model.safetensors': weights });
 */
export function importWorkerSafetensors(
  files: { 'config.json': string | Uint8Array | ArrayBuffer; 'model.safetensors': Uint8Array | ArrayBuffer; 'tokenizer.wft'?: Uint8Array | ArrayBuffer },
  options?: WorkerOptions & { quantize?: Quantization },
): Promise<WorkerModel>;

/**
 * The model as checkpoint bytes; the same as model.save(options).
 * @example
 * const bytes = saveModel(model, { optimizer: false });
 */
export function saveModel(model: Model, options?: SaveOptions): Uint8Array;

/**
 * A model from a model file (a checkpoint, a GGUF or a llama2.c file), with the tokenizer
 * saved in it: bytes, or a source read as it arrives (a Response, a ReadableStream, a Blob or
 * File, an async iterable), a GGUF file streaming into the weights, never whole in memory. A
 * damaged or foreign file throws a WfError (WF_ERR_FORMAT, or WF_ERR_UNSUPPORTED for a newer
 * version) saying what is wrong, and leaves nothing behind.
 * @example
 * const model = await loadModel(await fetch('/models/smollm-135m-q8_0.gguf'), { onProgress: (p) => console.log(p.loaded) });
 */
export function loadModel(source: ModelSource, options?: ModelStreamOptions): Promise<Model>;

/**
 * A tokenizer from the bytes of a tokenizer file: wasmformer's own (tokenizer.save()), a
 * Hugging Face tokenizer.json (string or bytes) or llama2.c's tokenizer.bin, told apart by
 * their first bytes. A component the build does
 * not run is refused (WF_ERR_UNSUPPORTED naming it), a damaged file too (WF_ERR_FORMAT).
 * @example
 * const tok = await loadTokenizer(readFileSync('tokenizer.json'));
 */
export function loadTokenizer(
  bytes: Uint8Array | ArrayBuffer | string,
  options?: LoadOptions,
): Promise<Tokenizer>;

/** Hugging Face files of a model: weights (float32 safetensors), config.json and, with a
 * tokenizer, wasmformer's own tokenizer file and, for BPE and 'hf' tokenizers, a
 * tokenizer.json. */
export interface SafetensorsFiles {
  'model.safetensors': Uint8Array;
  'config.json': string;
  'tokenizer.wft'?: Uint8Array;
  'tokenizer.json'?: string;
}

/**
 * The model as Hugging Face files: a GPT-2 style model is a `GPT2LMHeadModel`, the same with
 * RoPE (micro, the default) a `GPTNeoXForCausalLM`, a Llama-style one a `LlamaForCausalLM`
 * that PyTorch loads without conversion; others in wasmformer's own layout. With a
 * tokenizer, `tokenizer.wft` and (char, BPE, 'hf') `tokenizer.json`. A model with LoRA
 * adapters in a Hugging Face class's layout is refused (WF_ERR_STATE): mergeLora() first,
 * or export the base without them and exportPeft().
 * @example
 * const files = exportSafetensors(model);
 * download(files['model.safetensors'], 'model.safetensors');
 */
export function exportSafetensors(model: Model): SafetensorsFiles;

/**
 * A model from Hugging Face files (as exportSafetensors writes them, or a GPT-2 or Llama
 * saved by PyTorch in float32, float16 or bfloat16), with the tokenizer of tokenizer.wft or
 * else tokenizer.json when given. Everything is checked first.
 * @example
 * const model = await importSafetensors({ 'config.json': configText, 'model.safetensors': weights, 'tokenizer.json': tokText });
 */
export function importSafetensors(
  files: {
    'config.json': string | Uint8Array | ArrayBuffer;
    'model.safetensors': Uint8Array | ArrayBuffer;
    'tokenizer.wft'?: Uint8Array | ArrayBuffer;
    'tokenizer.json'?: string | Uint8Array | ArrayBuffer;
  },
  options?: ModelLoadOptions,
): Promise<Model>;

/**
 * A model from a llama2.c model file (its export.py's legacy `.bin`, as the tinyllamas ship:
 * a Llama-shaped decoder, grouped-query attention when n_kv_heads < n_heads), with its
 * tokenizer when `tokenizer` gives the bytes of its tokenizer.bin (llama2.c keeps it apart).
 * Without one, `forward`, `trainStep` and `train` on token ids work.
 * @example
 * const model = await importLlama2c(readFileSync('stories15M.bin'), { tokenizer: readFileSync('tokenizer.bin') });
 * console.log(await model.generateText('Once upon a time', { maxTokens: 60 }));
 */
export function importLlama2c(bytes: Uint8Array | ArrayBuffer, options?: ModelLoadOptions & { tokenizer?: Uint8Array | ArrayBuffer }): Promise<Model>;

/** A batch for encoders and encoder-decoders: ids or vectors, with optional padding lengths. */
export interface Batch {
  /** Sequences. */
  B: number;
  /** Positions per sequence (the decoder side of an encoder-decoder). */
  T: number;
  /** Source positions per sequence (encoder-decoders). */
  S?: number;
  /** [B*T] token ids. */
  inputs?: ArrayLike<number>;
  /** [B*T*dModel] vectors instead of ids (encoders). */
  inputVecs?: ArrayLike<number>;
  /** [B] real positions per sequence; the rest is padding. */
  lengths?: ArrayLike<number>;
  /** [B*T] ids for cross-entropy; negative = ignored. */
  targets?: ArrayLike<number>;
  /** [B*T*dModel] targets of a mean squared error (encoders). */
  targetVecs?: ArrayLike<number>;
  /** [B*S] source ids (encoder-decoders). */
  src?: ArrayLike<number>;
  /** [B] real source tokens. */
  srcLengths?: ArrayLike<number>;
}

/** Defaults of createEncoder under the caller's config. */
export const ENCODER_DEFAULTS: Readonly<Partial<ModelConfig>>;

/** Defaults of createSeq2Seq under the caller's config. */
export const SEQ2SEQ_DEFAULTS: Readonly<Partial<ModelConfig>>;

/**
 * An encoder-only transformer: bidirectional attention, padding by lengths, per-token
 * cross-entropy or a mean squared error of its final states.
 */
export class Encoder {
  private constructor();
  /** The underlying Model (tensors, memory, optimizer, save). */
  readonly model: Model;
  readonly config: ModelConfig;
  readonly step: number;
  readonly paramCount: number;
  /**
   * A view of a Model whose arch is 'encoder', e.g. one loaded from a checkpoint. The model
   * stays the caller's: the view's dispose() leaves it alone.
   * @example
   * const model = await loadModel(bytes);
   * const enc = Encoder.from(model);
   * const { hidden } = enc.forward({ inputs: [1, 2, 3], B: 1, T: 3 });
   * model.dispose();
   */
  static from(model: Model): Encoder;
  /**
   * Changes optimizer settings; the rest stay.
   * @example
   * enc.setOptimizer({ lr: 3e-4, weightDecay: 0 });
   */
  setOptimizer(settings: Partial<OptimizerSettings>): OptimizerSettings;
  /**
   * One optimizer step on a batch; positions past lengths[b] are padding.
   * @example
   * const { loss } = enc.trainStep({ inputVecs, targetVecs, lengths: [8, 5], B: 2, T: 8 });
   */
  trainStep(batch: Batch): StepResult;
  /**
   * Evaluation forward (no dropout): the loss (null without targets), logits (null with
   * vector targets) and the final states [B*T*dModel].
   * @example
   * const { hidden } = enc.forward({ inputs: [1, 2, 3], B: 1, T: 3 });
   */
  forward(batch: Batch): { loss: number | null; logits: Float32Array | null; hidden: Float32Array };
  /**
   * Ends the encoder: one made by createEncoder frees its model's wasm memory, one made by
   * Encoder.from(model) leaves the model to its owner. Later use throws WF_ERR_DISPOSED.
   * @example
   * enc.dispose();
   */
  dispose(): void;
  /**
   * dispose(), for `using`.
   * @example
   * { using enc = await createEncoder(); enc.trainStep({ inputs: [1, 2], targets: [2, 3], B: 1, T: 2 }); }
   */
  [Symbol.dispose](): void;
}

/** A source and its target: strings (through the shared tokenizer) or id arrays. */
export type Pair = [string | ArrayLike<number>, string | ArrayLike<number>];

/**
 * An encoder-decoder: teacher-forced training on pairs, greedy and beam-search decoding,
 * cross-attention maps. The two highest ids are reserved: bos = vocabSize - 2,
 * eos = vocabSize - 1.
 */
export class Seq2Seq {
  private constructor();
  /** The underlying Model (tensors, memory, optimizer, save). */
  readonly model: Model;
  readonly config: ModelConfig;
  readonly step: number;
  readonly paramCount: number;
  /** The char tokenizer shared by sources and targets, or null (ids only). */
  readonly tokenizer: Tokenizer | null;
  readonly bos: number;
  readonly eos: number;
  /**
   * A view of a Model whose arch is 'encoder-decoder', e.g. one loaded from a checkpoint.
   * The model stays the caller's: the view's dispose() leaves it alone.
   * @example
   * const model = await loadModel(bytes);
   * console.log(await Seq2Seq.from(model).translate('stressed'));
   * model.dispose();
   */
  static from(model: Model): Seq2Seq;
  /**
   * Changes optimizer settings; the rest stay.
   * @example
   * s2s.setOptimizer({ lr: 1e-3 });
   */
  setOptimizer(settings: Partial<OptimizerSettings>): OptimizerSettings;
  /**
   * Ids of a string (through the tokenizer) or a copy of an id array.
   * @example
   * const ids = s2s.ids('stressed');
   */
  ids(x: string | ArrayLike<number>): Int32Array;
  /**
   * A teacher-forced, padded batch from pairs.
   * @example
   * const batch = s2s.makeBatch([['abc', 'cba'], ['hello', 'olleh']]);
   */
  makeBatch(pairs: Pair[]): Batch;
  /**
   * One optimizer step on a batch or on pairs.
   * @example
   * s2s.trainStep([['abc', 'cba'], ['hello', 'olleh']]);
   */
  trainStep(batchOrPairs: Batch | Pair[]): StepResult;
  /**
   * Evaluation forward of a batch or pairs.
   * @example
   * const { loss } = s2s.forward([['abc', 'cba']]);
   */
  forward(batchOrPairs: Batch | Pair[]): { loss: number | null; logits: Float32Array };
  /**
   * Trains on pairs, sampling batches with a seeded generator, through the Model's
   * training loop: optimizer settings given change the model's, the others stay (a new
   * Seq2Seq starts at lr 3e-3, weightDecay 0.01, gradClip 1); a call refused before its
   * first step leaves them as they were.
   * @example
   * await s2s.train(words.map((w) => [w, [...w].reverse().join('')]), { steps: 800, lr: 5e-3 });
   */
  train(pairs: Pair[], options?: Seq2SeqTrainOptions): Promise<Seq2SeqTrainResult>;
  /**
   * Mean cross-entropy per target token over pairs.
   * @example
   * const { loss } = await s2s.evaluate(heldOut);
   */
  evaluate(pairs: Pair[], options?: Seq2SeqEvaluateOptions): Promise<{ loss: number; tokens: number }>;
  /**
   * Decodes one source: greedy (beam 1) or beam search.
   * @example
   * const { ids, finished } = await s2s.decodeIds([5, 6, 7], { beam: 4 });
   */
  decodeIds(source: string | ArrayLike<number>, options?: DecodeOptions): Promise<{ ids: Int32Array; finished: boolean }>;
  /**
   * Decodes a string to a string.
   * @example
   * await s2s.translate('stressed', { beam: 4 }); // 'desserts' once trained to reverse
   */
  translate(text: string, options?: DecodeOptions): Promise<string>;
  /**
   * Exact-match accuracy of decoding every source against its target, in [0, 1].
   * @example
   * const acc = await s2s.accuracy(heldOut, { beam: 4 });
   */
  accuracy(pairs: Pair[], options?: AccuracyOptions): Promise<number>;
  /**
   * Cross-attention weights of an output over its source, per layer [nHead * T * S].
   * @example
   * const { layers, T, S } = s2s.crossAttention('stressed', 'desserts');
   */
  crossAttention(source: string | ArrayLike<number>, output: string | ArrayLike<number>): { nHead: number; T: number; S: number; layers: Float32Array[] };
  /**
   * Ends the model: one made by createSeq2Seq frees its wasm memory (and the tokenizer's),
   * one made by Seq2Seq.from(model) leaves the model to its owner.
   * @example
   * s2s.dispose();
   */
  dispose(): void;
  /**
   * dispose(), for `using`.
   * @example
   * { using s2s = await createSeq2Seq({ dModel: 32 }, { texts: ['abc'] }); s2s.trainStep([['abc', 'cba']]); }
   */
  [Symbol.dispose](): void;
}

/**
 * An encoder with fresh weights (a partial config over ENCODER_DEFAULTS).
 * @example
 * const enc = await createEncoder({ dModel: 64, block: 'post_ln', positions: 'sinusoidal' });
 */
export function createEncoder(config?: ConfigInput, options?: LoadOptions): Promise<Encoder>;

/**
 * An encoder-decoder with fresh weights. With `texts`, a char tokenizer is built from them
 * and vocabSize defaults to its size + 2 (bos, eos); a `tokenizer` given is copied (the
 * caller keeps theirs).
 * @example
 * const s2s = await createSeq2Seq({ dModel: 32, nLayer: 1 }, { texts: words });
 */
export function createSeq2Seq(config?: ConfigInput, options?: LoadOptions & { texts?: string[]; tokenizer?: Tokenizer }): Promise<Seq2Seq>;

/** Options of Seq2Seq.train (and WorkerSeq2Seq.train). */
export interface Seq2SeqTrainOptions {
  steps?: number; batchSize?: number; lr?: number; warmup?: number; decaySteps?: number; minLrRatio?: number;
  weightDecay?: number; gradClip?: number; beta1?: number; beta2?: number; eps?: number; keepSchedule?: boolean;
  seed?: number; signal?: AbortSignal; yieldMs?: number;
  onProgress?: (p: { step: number; steps: number; loss: number; lr: number; gradNorm: number; tokensPerSecond: number; elapsed: number; eta: number }) => void;
}

/** Options of Seq2Seq.evaluate (and WorkerSeq2Seq.evaluate). */
export interface Seq2SeqEvaluateOptions {
  /** Pairs per forward pass (default 32). */
  batchSize?: number;
  signal?: AbortSignal;
  /** Milliseconds between yields to the event loop (default 30). */
  yieldMs?: number;
}

/** Options of Seq2Seq.decodeIds and translate. */
export interface DecodeOptions {
  /** 1 (default): greedy; up to config.maxBeam: beam search of that width. */
  beam?: number;
  /** Most new tokens (default: the context). */
  maxTokens?: number;
  signal?: AbortSignal;
}

/** Options of Seq2Seq.accuracy. */
export interface AccuracyOptions extends DecodeOptions {
  /** Milliseconds between yields to the event loop (default 30). */
  yieldMs?: number;
}

/** What Seq2Seq.train resolves to; tokens counts the decoder positions trained on. */
export interface Seq2SeqTrainResult { steps: number; step: number; loss: number; tokens: number; elapsed: number; tokensPerSecond: number }

/**
 * The Seq2Seq API with the encoder-decoder in a Web Worker (browsers) or a worker thread
 * (Node): every method returns a promise. `config`, `paramCount` and `step` are snapshots,
 * refreshed after each call and by progress reports.
 */
export class WorkerSeq2Seq {
  private constructor();
  readonly config: ModelConfig;
  readonly paramCount: number;
  readonly step: number;
  /** The last `info()` the worker sent: refreshed after each call (and its step by progress reports). */
  readonly snapshot: ModelInfo;

  /**
   * Trains on pairs in the worker; onProgress is called in this thread.
   * @example
   * await ws.train(pairs, { steps: 800, lr: 5e-3, onProgress: (p) => console.log(p.step, p.loss) });
   */
  train(pairs: Pair[], options?: Seq2SeqTrainOptions): Promise<Seq2SeqTrainResult>;
  /**
   * Mean cross-entropy per target token over pairs.
   * @example
   * const { loss } = await ws.evaluate(heldOut);
   */
  evaluate(pairs: Pair[], options?: Seq2SeqEvaluateOptions): Promise<{ loss: number; tokens: number }>;
  /**
   * Decodes one source: greedy (beam 1) or beam search.
   * @example
   * const { ids, finished } = await ws.decodeIds('abc', { beam: 4 });
   */
  decodeIds(source: string | ArrayLike<number>, options?: DecodeOptions): Promise<{ ids: Int32Array; finished: boolean }>;
  /**
   * Decodes a string to a string.
   * @example
   * await ws.translate('stressed'); // 'desserts' once trained to reverse
   */
  translate(text: string, options?: DecodeOptions): Promise<string>;
  /**
   * Exact-match accuracy over pairs, in [0, 1].
   * @example
   * const acc = await ws.accuracy(heldOut, { beam: 4 });
   */
  accuracy(pairs: Pair[], options?: AccuracyOptions): Promise<number>;
  /**
   * Cross-attention weights of an output over its source, per layer [nHead * T * S].
   * @example
   * const { layers, T, S } = await ws.crossAttention('stressed', 'desserts');
   */
  crossAttention(source: string | ArrayLike<number>, output: string | ArrayLike<number>): Promise<{ nHead: number; T: number; S: number; layers: Float32Array[] }>;
  /**
   * Everything about the model, read now in the worker.
   * @example
   * const { step } = await ws.info();
   */
  info(): Promise<ModelInfo>;
  /**
   * The parameter tensors.
   * @example
   * const names = (await ws.tensors()).map((t) => t.name);
   */
  tensors(): Promise<TensorInfo[]>;
  /**
   * A copy of one tensor's weights.
   * @example
   * const wte = await ws.getTensor('wte');
   */
  getTensor(name: string): Promise<Float32Array>;
  /**
   * Overwrites one tensor's weights.
   * @example
   * await ws.setTensor('wte', weights);
   */
  setTensor(name: string, values: ArrayLike<number>): Promise<void>;
  /**
   * Changes some optimizer settings; resolves to all of them.
   * @example
   * await ws.setOptimizer({ lr: 1e-3 });
   */
  setOptimizer(settings: Partial<OptimizerSettings>): Promise<OptimizerSettings>;

  /**
   * Replaces the metadata saved with the model (see Model.setMetadata).
   * @example
   * await ws.setMetadata({ task: 'reverse words' });
   */
  setMetadata(value: unknown): Promise<void>;

  /**
   * Bytes of memory the model uses, read now in the worker.
   * @example
   * const { total } = await ws.memory();
   */
  memory(): Promise<MemoryUsage>;

  /**
   * One optimizer step on a batch or pairs, in the worker.
   * @example
   * const { loss } = await ws.trainStep([['abc', 'cba']]);
   */
  trainStep(batchOrPairs: Batch | Pair[]): Promise<StepResult>;

  /**
   * An evaluation forward of a batch or pairs, in the worker.
   * @example
   * const { loss } = await ws.forward([['abc', 'cba']]);
   */
  forward(batchOrPairs: Batch | Pair[]): Promise<{ loss: number | null; logits: Float32Array }>;
  /**
   * A checkpoint of the model, moved out of the worker without a copy.
   * @example
   * const bytes = await ws.save();
   */
  save(options?: SaveOptions): Promise<Uint8Array>;
  /**
   * Replaces the model with an encoder-decoder checkpoint's, in place; another arch's file
   * fails with WF_ERR_STATE and changes nothing.
   * @example
   * await ws.load(bytes);
   */
  load(bytes: Uint8Array | ArrayBuffer): Promise<void>;
  /**
   * Ends the worker and frees all its memory.
   * @example
   * ws.dispose();
   */
  dispose(): void;
  /**
   * dispose(), for `using`.
   * @example
   * { using ws = await createWorkerSeq2Seq({ dModel: 32 }, { texts: ['abc'] }); await ws.train([['abc', 'cba']], { steps: 10 }); }
   */
  [Symbol.dispose](): void;
}

/**
 * createSeq2Seq with the model in a Web Worker (browsers) or a worker thread (Node).
 * @example
 * const ws = await createWorkerSeq2Seq({ dModel: 32, nLayer: 1, context: 12 }, { texts: ['abcdefgh'] });
 */
export function createWorkerSeq2Seq(config?: ConfigInput, options?: WorkerOptions & { texts?: string[] }): Promise<WorkerSeq2Seq>;

/**
 * An encoder-decoder from checkpoint bytes, in a worker; a file of another arch fails with
 * WF_ERR_STATE.
 * @example
 * const ws = await loadWorkerSeq2Seq(await (await fetch('/models/reverse.wf')).arrayBuffer());
 */
export function loadWorkerSeq2Seq(bytes: Uint8Array | ArrayBuffer, options?: WorkerOptions): Promise<WorkerSeq2Seq>;

/**
 * Node: writes the model's checkpoint to path atomically: a temporary file in the same folder,
 * flushed to disk, then renamed over path, so a crash leaves the old file or the new one.
 * A path that is a symbolic link writes the file it points to; the link stays. A WorkerModel's
 * is taken in its worker. Resolves to the bytes written. A failure rejects with Node's error
 * code (ENOENT, EACCES, EROFS, ENOSPC...) and a message naming path, not the temporary file. (The file helpers
 * below are Node's: in a browser they reject with WF_ERR_UNSUPPORTED; save(), loadModel,
 * exportSafetensors and the others read and write bytes there.)
 * @example
 * await saveModelFile(model, 'austen.wf');
 */
export function saveModelFile(model: Model | WorkerModel, path: string, options?: SaveOptions): Promise<number>;

/**
 * Node: a model from a checkpoint file (or a GGUF or llama2.c model file), read in 4 MB
 * pieces (a GGUF file is never whole in memory).
 * @example
 * const model = await loadModelFile('austen.wf');
 * console.log(await model.generateText('Elizabeth', { maxTokens: 80 }));
 */
export function loadModelFile(path: string, options?: ModelStreamOptions): Promise<Model>;

/**
 * Node: writes the model as Hugging Face files into dir (created if missing): model.safetensors,
 * config.json and, with a tokenizer, tokenizer.wft (and tokenizer.json for char, BPE and 'hf'
 * tokenizers); each atomically; as exportSafetensors (LoRA adapters refused); then
 * wasmformer.sha256, the SHA-256 of each (sha256sum's format). Tokenizer files already in dir
 * are removed first: a model without a tokenizer never lands beside an earlier export's.
 * Resolves to the names. A folder that cannot be made rejects at once with WF_ERR_ARG naming
 * it (/proc/exp, a path through a file).
 * @example
 * await exportSafetensorsDir(model, 'hf/');
 */
export function exportSafetensorsDir(model: Model, dir: string): Promise<string[]>;

/**
 * Node: a model from a directory of Hugging Face files (config.json, model.safetensors and, if
 * present, tokenizer.wft or else tokenizer.json). In a folder exportSafetensorsDir wrote (one
 * with wasmformer.sha256), the tokenizer must be one that export wrote, with its SHA-256:
 * another is a WF_ERR_FORMAT, never paired with the weights.
 * @example
 * const model = await importSafetensorsDir('hf/');
 */
export function importSafetensorsDir(dir: string, options?: ModelLoadOptions): Promise<Model>;

/**
 * Node: writes the model's LoRA adapters in PEFT's layout into dir (created if missing):
 * adapter_model.safetensors and adapter_config.json, each atomically. Resolves to the names.
 * A folder that cannot be made rejects at once with WF_ERR_ARG naming it.
 * @example
 * await exportPeftDir(model, 'adapter/', { baseModel: 'HuggingFaceTB/SmolLM-135M' });
 */
export function exportPeftDir(model: Model | WorkerModel, dir: string, options?: PeftExportOptions): Promise<string[]>;

/**
 * Node: puts the PEFT LoRA adapters of a directory (adapter_config.json, adapter_model.safetensors)
 * on the model, whose base must be theirs. Resolves to the adapters' settings.
 * @example
 * await importPeftDir(model, 'adapter/');
 */
export function importPeftDir(model: Model, dir: string): Promise<LoraSettings>;
