// Compiled (not run) by types.test.mjs against the package's hand-written .d.ts, the way a
// TypeScript user would import it: by package name, strict mode.
import {
  createModel, createTokenizer, createWorkerModel, checkConfig, estimateMemory, load, resolveConfig,
  PRESETS, WfError, Model, WorkerModel, Tokenizer, createSeq2Seq, createEncoder, exportSafetensors, importSafetensors,
  loadModel, loadTokenizer, importLlama2c, Seq2Seq, type Pair, CONFIG_FIELDS, OPTIM_FIELDS, TRAIN_DEFAULTS,
  type TrainProgress, type ModelConfig, type GenerateOptions, type ErrorCode, type LoadProgress, loadWorkerModel,
} from 'wasmformer';

/** A hosted GGUF file streamed, with progress and a time limit; a picked file in a worker. */
export async function hosted(url: string, file: File): Promise<number> {
  let seen: LoadProgress = { loaded: 0, total: null };
  const model = await loadModel(await fetch(url), { onProgress: (p) => { seen = p; }, signal: AbortSignal.timeout(60_000), quantize: 'q8_0' });
  const fromBlob = await loadModel(file, { threads: 1 });
  const wm = await loadWorkerModel(file);
  const n = seen.loaded + (seen.total ?? 0) + model.paramCount + fromBlob.paramCount;
  wm.dispose();
  return n;
}

export async function main(text: string): Promise<string> {
  await load({ wasmUrl: new URL('https://example.invalid/wasmformer.wasm') });
  const tok: Tokenizer = await createTokenizer(text);
  const ids: Int32Array = tok.encode('abc');
  const back: string = tok.decode(ids);
  const model: Model = await createModel({ preset: 'tiny', nLayer: 2, activation: 'relu', positions: 'sinusoidal', tiedHead: false }, { tokenizer: tok });
  const cfg: ModelConfig = model.config;
  const names: (keyof ModelConfig)[] = CONFIG_FIELDS.map((f) => f.name);
  const lr = OPTIM_FIELDS.find((f) => f.name === 'lr')?.default;
  const every: number = TRAIN_DEFAULTS.evalInterval;
  tok[Symbol.dispose];
  const layers: number = cfg.nLayer + PRESETS.baby.batchSize + resolveConfig('baby').dModel;
  const ac = new AbortController();
  const summary = await model.train(text, {
    steps: 10, batchSize: 4, lr: 1e-3, warmup: 2, gradClip: 1, valFraction: 0.1, evalInterval: 5, seed: 1,
    signal: ac.signal, onProgress: (p: TrainProgress) => { if (p.valLoss !== null) ac.abort(); },
  });
  const { loss, perplexity } = await model.evaluate(text, { maxTokens: 1000 });
  const opts: GenerateOptions = { maxTokens: 20, temperature: 0.8, topK: 40, topP: 0.95, seed: 1, stop: ['\n'] };
  let out = '';
  for await (const piece of model.generate('Elizabeth', opts)) out += piece;
  out += await model.generateText('Darcy', { onToken: (piece: string, n: number) => void [piece, n] });
  const problem = await checkConfig({ nHead: 3 });
  const code: ErrorCode | undefined = problem?.code;
  const mem = await estimateMemory('tiny', 8, 64);
  const wm: WorkerModel = await createWorkerModel('tiny');
  const s2 = await wm.train(text, { steps: 5 });
  for await (const piece of wm.generate('x')) out += piece;
  wm.dispose();
  try {
    model.trainStep([1, 2], [2, 3], 1, 2);
  } catch (e) {
    if (e instanceof WfError) out += e.code;
  }
  const files = exportSafetensors(model);
  const imported: Model = await importSafetensors(files);
  const bpe = await createTokenizer(text, { kind: 'bpe', vocabSize: 300 });
  const json: string = bpe.saveJSON();
  const hf: Tokenizer = await loadTokenizer(json);
  const bos: number | null = hf.bos;
  const kind: 'char' | 'bpe' | 'hf' | 'llama2c' = hf.kind;
  const l2: Model = await importLlama2c(new Uint8Array(28), { tokenizer: new Uint8Array(8) });
  const both: Model = await importSafetensors({ 'config.json': files['config.json'], 'model.safetensors': files['model.safetensors'], 'tokenizer.json': files['tokenizer.json'] });
  out += String(bos) + kind + l2.paramCount + both.paramCount;
  await model.train(text, { tokenizer: { kind: 'bpe', vocabSize: 300 } });
  const pairs: Pair[] = [['abc', 'cba']];
  const s2s = await createSeq2Seq({ dModel: 32 }, { texts: ['abc', 'cba'] });
  await s2s.train(pairs, { steps: 3 });
  const rev: string = await s2s.translate('abc', { beam: 2, signal: ac.signal });
  const again: Seq2Seq = Seq2Seq.from(await loadModel(s2s.model.save()));
  const enc = await createEncoder({ block: 'post_ln' });
  const hidden: Float32Array = enc.forward({ inputs: [1, 2], B: 1, T: 2 }).hidden;
  out += rev + hidden.length + bpe.kind + again.bos + imported.paramCount + names.length + String(lr) + every;
  model.dispose();
  return [out, back, layers, summary.tokensPerSecond, loss, perplexity, code, mem.total, s2.step].join(' ');
}
