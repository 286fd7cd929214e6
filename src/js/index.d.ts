// Types of the wasmformer package, written by hand next to the JavaScript they describe
// (src/js/*.js). The browser entry (index.js) and the Node entry (node.js, see node.d.ts)
// share everything here; node.d.ts adds the file functions.

/** Preset names: `tiny` (4 layers, 4 heads, width 128, context 64, 0.8 M weights) and
 * `baby` (6 layers, 6 heads, width 384, context 256, 10.7 M weights). */
export type Preset = 'tiny' | 'baby';

/** A complete model config, as `model.config` returns it. */
export interface ModelConfig {
  /** Model family. Only `decoder` (a GPT) is built by this version. */
  arch: 'decoder' | 'encoder' | 'encoder-decoder';
  /** Normalization layer. */
  norm: 'layernorm' | 'rmsnorm';
  /** Where the norm sits around each sublayer: before it (GPT-2) or after the residual add. */
  block: 'pre_ln' | 'post_ln';
  /** Activation of the feed-forward sublayer. */
  activation: 'gelu' | 'relu' | 'swiglu';
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
}

/** What createModel accepts: a preset name, or any part of a config (the rest comes from
 * `preset`, default `tiny`). `batchSize` and `lr` are training defaults kept with the model. */
export interface ConfigInput extends Partial<Omit<ModelConfig, 'arch' | 'norm' | 'block' | 'activation' | 'positions'>> {
  preset?: Preset;
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

/** Where the wasm module comes from. By default it is found next to the package's glue
 * module (`new URL('../../dist/wasmformer.wasm', import.meta.url)`); nothing is fetched
 * from anywhere else. */
export interface LoadOptions {
  /** Location of `wasmformer.wasm`: a URL (browsers), or a path or file: URL (Node). */
  wasmUrl?: string | URL;
  /** The bytes of `wasmformer.wasm`; each call with wasmBinary makes its own instance. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

export interface CreateModelOptions extends LoadOptions {
  /** A tokenizer the model takes over (it disposes it). Without one, the first text the
   * model trains on builds a char-level tokenizer. */
  tokenizer?: Tokenizer;
}

export interface WorkerOptions extends LoadOptions {
  /** Browsers: a Worker you started yourself on `wasmformer`'s `src/js/worker.js`, for
   * bundlers that do not follow `new Worker(new URL(...))`. */
  worker?: Worker;
}

/** The `code` of a WfError: a wf_status name from the C core, or one from the JavaScript side. */
export type ErrorCode =
  | 'WF_ERR_ARG' | 'WF_ERR_CONFIG' | 'WF_ERR_UNSUPPORTED' | 'WF_ERR_NOMEM' | 'WF_ERR_TOKEN'
  | 'WF_ERR_NUMERIC' | 'WF_ERR_STATE' | 'WF_ERR_FORMAT'
  | 'WF_ERR_DISPOSED' | 'WF_ERR_BUSY' | 'WF_ERR_LOAD' | 'WF_ERR_WORKER';

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
  /** Step (absolute) at which linear warmup ends. */
  warmup: number;
  /** Steps of cosine decay after warmup; 0 = constant. */
  decaySteps: number;
  /** The decayed learning rate as a fraction of lr. */
  minLrRatio: number;
  /** Clip the global gradient norm to this; 0 = off. */
  gradClip: number;
}

export interface TrainProgress {
  /** Optimizer steps taken so far (counting earlier runs). */
  step: number;
  /** The step this run ends at. */
  steps: number;
  /** Training loss of the last batch. */
  loss: number;
  /** The latest validation loss of this run, or null before the first. */
  valLoss: number | null;
  /** true when valLoss was measured at this step. */
  validated: boolean;
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

export interface TrainOptions extends Partial<OptimizerSettings> {
  /** Steps to take (default 1000). */
  steps?: number;
  /** Windows per batch (default: the model's, 8 for tiny). */
  batchSize?: number;
  /** Window length (default: the model's context). */
  context?: number;
  /** Keep the model's learning-rate schedule (e.g. after load) instead of starting a new
   * one for this call: warmup over its first tenth (at most 100 steps), cosine decay to its end. */
  keepSchedule?: boolean;
  /** Restart the batch sampler from this seed. */
  seed?: number;
  /** Fraction of the tokens, at the end, held out for validation (default 0.1; 0 = none). */
  valFraction?: number;
  /** Validate every this many steps and at the end (default 100; 0 = never). */
  evalInterval?: number;
  /** Batches per validation (default 4). */
  evalBatches?: number;
  /** Stops the run at the next step: train rejects with an AbortError; the steps taken stay. */
  signal?: AbortSignal;
  /** Called at every validation, at the end, and about every yieldMs. */
  onProgress?: (progress: TrainProgress) => void;
  /** Milliseconds between yields to the event loop (default 30). */
  yieldMs?: number;
}

export interface TrainSummary {
  /** Steps this run took. */
  steps: number;
  /** Optimizer steps of the model after the run. */
  step: number;
  /** Loss of the last batch. */
  loss: number;
  /** Last validation loss, or null. */
  valLoss: number | null;
  /** Training tokens this run processed. */
  tokens: number;
  seconds: number;
  tokensPerSecond: number;
}

export interface EvaluateOptions {
  /** Evaluate only the first maxTokens tokens. */
  maxTokens?: number;
  /** Windows per forward pass. */
  batchSize?: number;
  signal?: AbortSignal;
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
}

export interface GenerateOptions {
  /** Tokens to generate (default 100). */
  maxTokens?: number;
  /** Softmax temperature (default 1; 0 = always the most likely token). */
  temperature?: number;
  /** Sample only among the k most likely tokens (default 0 = all). */
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
  /** Milliseconds between yields to the event loop (default 16). */
  yieldMs?: number;
}

/** Bytes of memory, as doubles. */
export interface MemoryUsage {
  params: number;
  grads: number;
  optimizer: number;
  activations: number;
  inference: number;
  total: number;
}

export interface TensorInfo {
  /** e.g. 'wte', 'qkvw' */
  name: string;
  shape: number[];
  /** Elements. */
  size: number;
  /** Elements from the start of the flat parameter block. */
  offset: number;
  /** Whether weight decay applies to it. */
  decay: boolean;
}

export interface ModelInfo {
  config: ModelConfig;
  paramCount: number;
  step: number;
  /** Learning rate of the next step. */
  lr: number;
  optimizer: OptimizerSettings;
  memory: MemoryUsage;
  tokenizer: { kind: string; vocabSize: number } | null;
  /** What the model is doing ('training', 'evaluation', 'generation'), or null. */
  busy: string | null;
}

export interface SaveOptions {
  /** Include the optimizer state so that training resumes exactly (default true). */
  optimizer?: boolean;
}

export interface StepResult {
  loss: number;
  gradNorm: number;
  lr: number;
  step: number;
}

/** Text to token ids and back. Char-level: id 0 is `<unk>`, then every distinct code point
 * of the text it was built from, in order. */
export class Tokenizer {
  private constructor();
  /** 'char' */
  readonly kind: string;
  /** Number of ids, `<unk>` included. */
  readonly vocabSize: number;
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
   * Frees the tokenizer's wasm memory; using it afterwards throws WF_ERR_DISPOSED.
   * @example
   * tok.dispose();
   */
  dispose(): void;
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
  tokenizer: Tokenizer | null;

  /**
   * Trains on text (or token ids) and resolves to a summary. The first text builds a
   * char-level tokenizer when the model has none.
   * @example
   * const summary = await model.train(text, {
   *   steps: 500, lr: 2e-3, evalInterval: 100,
   *   onProgress: (p) => console.log(p.step, p.loss.toFixed(3), p.valLoss?.toFixed(3), Math.round(p.eta) + 's'),
   * });
   */
  train(data: string | ArrayLike<number>, options?: TrainOptions): Promise<TrainSummary>;

  /**
   * Mean loss and perplexity on text, over non-overlapping windows of the context.
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
   * Changes some optimizer settings; the others stay.
   * @example
   * model.setOptimizer({ lr: 1e-3, gradClip: 0.5 });
   */
  setOptimizer(settings: Partial<OptimizerSettings>): void;

  /**
   * One optimizer step on a [B, T] batch of token ids (row-major).
   * @example
   * const { loss } = model.trainStep(inputs, targets, 8, 64);
   */
  trainStep(inputs: ArrayLike<number>, targets: ArrayLike<number>, B: number, T: number): StepResult;

  /**
   * A forward pass on a [B, T] batch: the loss (null without targets) and logits [B*T*V].
   * @example
   * const { logits } = model.forward(ids, null, 1, ids.length);
   */
  forward(inputs: ArrayLike<number>, targets: ArrayLike<number> | null, B: number, T: number): { loss: number | null; logits: Float32Array };

  /**
   * The parameter tensors, in the core's table order.
   * @example
   * for (const t of model.tensors()) console.log(t.name, t.shape);
   */
  tensors(): TensorInfo[];

  /**
   * A copy of one tensor's weights.
   * @example
   * const wte = model.getTensor('wte'); // Float32Array [V * C]
   */
  getTensor(name: string): Float32Array;

  /**
   * Overwrites one tensor's weights (same number of elements).
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

  /**
   * Trains in the worker; onProgress is called in this thread.
   * @example
   * await wm.train(text, { steps: 1000, onProgress: (p) => bar.update(p.step / p.steps) });
   */
  train(data: string | ArrayLike<number>, options?: TrainOptions): Promise<TrainSummary>;

  /**
   * Loss and perplexity, computed in the worker.
   * @example
   * const { perplexity } = await wm.evaluate(text);
   */
  evaluate(data: string | ArrayLike<number>, options?: EvaluateOptions): Promise<EvaluateResult>;

  /**
   * Generated text streamed from the worker. Leaving the loop early stops the worker too.
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
   * A checkpoint of the model, moved out of the worker without a copy.
   * @example
   * const bytes = await wm.save();
   * localStorage.setItem('model', btoa(String.fromCharCode(...bytes))); // or IndexedDB
   */
  save(options?: SaveOptions): Promise<Uint8Array>;

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
}

/** The presets' configs, with their training defaults `batchSize` and `lr`. */
export const PRESETS: Readonly<Record<Preset, Readonly<Partial<ModelConfig> & { batchSize: number; lr: number }>>>;

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
 * A model with fresh random weights, from a preset name or a partial config.
 * @example
 * const model = await createModel('tiny');
 * const custom = await createModel({ preset: 'tiny', nLayer: 2, activation: 'relu', positions: 'sinusoidal' });
 */
export function createModel(config?: Preset | ConfigInput, options?: CreateModelOptions): Promise<Model>;

/**
 * A char-level tokenizer over the distinct code points of text.
 * @example
 * const tok = await createTokenizer(text);
 * const model = await createModel({ vocabSize: tok.vocabSize }, { tokenizer: tok });
 */
export function createTokenizer(text: string, options?: LoadOptions): Promise<Tokenizer>;

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
export function createWorkerModel(config?: Preset | ConfigInput, options?: WorkerOptions): Promise<WorkerModel>;

/**
 * loadModel with the model in a Web Worker (browsers) or a worker thread (Node). The bytes
 * are copied once, then transferred.
 * @example
 * const wm = await loadWorkerModel(await (await fetch('/models/austen.wf')).arrayBuffer());
 */
export function loadWorkerModel(bytes: Uint8Array | ArrayBuffer, options?: WorkerOptions): Promise<WorkerModel>;

/**
 * The model as checkpoint bytes; the same as model.save(options).
 * @example
 * const bytes = saveModel(model, { optimizer: false });
 */
export function saveModel(model: Model, options?: SaveOptions): Uint8Array;

/**
 * A model from checkpoint bytes, with the tokenizer saved in them. A damaged or foreign
 * file throws a WfError (WF_ERR_FORMAT, or WF_ERR_UNSUPPORTED for a newer version) saying
 * what is wrong.
 * @example
 * const model = await loadModel(new Uint8Array(await (await fetch('/models/austen.wf')).arrayBuffer()));
 */
export function loadModel(bytes: Uint8Array | ArrayBuffer, options?: LoadOptions): Promise<Model>;

/**
 * A tokenizer from the bytes of a tokenizer file (tokenizer.save()).
 * @example
 * const tok = await loadTokenizer(readFileSync('vocab.wft'));
 */
export function loadTokenizer(bytes: Uint8Array | ArrayBuffer, options?: LoadOptions): Promise<Tokenizer>;
