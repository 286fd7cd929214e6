// The language-model half of the page: settings, a GPT in a Web Worker (the package's
// WorkerModel), training with pause/resume/stop, the loss chart, generation, the
// attention map, and the state autosave and "Keep your work" need.
//
// Training runs as calls of WorkerModel.train over the remaining steps. Pausing aborts the
// call (the steps taken stay); resuming starts another with keepSchedule, so the learning
// rate schedule, the batch sampler and the optimizer continue exactly. Saving while
// training (autosave, download) pauses the same way for the moment of the save.
import { PRESETS, checkConfig, createWorkerModel, estimateMemory, loadWorkerModel } from './pkg/src/js/index.js';
import { LossChart } from './chart.js';
import { Heatmap } from './heatmap.js';
import { Corpus, NOVELS } from './corpus.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);

/** The page's presets: the package's tiny and baby, and a micro one that trains in minutes
 * on one core. steps is the page's default run length. */
export const PAGE_PRESETS = {
  micro: { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 64, batchSize: 16, lr: 3e-3, steps: 1000 },
  tiny: { ...PRESETS.tiny, steps: 2000 },
  baby: { ...PRESETS.baby, steps: 2000 },
};
const ARCH_DEFAULTS = {
  norm: 'layernorm', block: 'pre_ln', activation: 'gelu', positions: 'learned', tiedHead: true, bias: true,
  normEps: 1e-5, dropout: 0, seed: 1337,
};
// the core's optimizer defaults (wf_optim_default); warmup empty = a tenth of the run, at most 100
const TRAIN_DEFAULTS = { warmup: '', minLrRatio: 0.1, weightDecay: 0.1, gradClip: 1, beta1: 0.9, beta2: 0.95, eps: 1e-8, evalInterval: 100, evalBatches: 4 };
const CFG_FIELDS = ['nLayer', 'nHead', 'dModel', 'dFF', 'context', 'norm', 'block', 'activation', 'positions', 'normEps', 'dropout', 'seed', 'tiedHead', 'bias'];
const TRAIN_FIELDS = ['steps', 'batchSize', 'lr', 'warmup', 'minLrRatio', 'weightDecay', 'gradClip', 'beta1', 'beta2', 'eps', 'evalInterval', 'evalBatches'];
const INTEGER = new Set(['nLayer', 'nHead', 'dModel', 'dFF', 'context', 'seed', 'steps', 'batchSize', 'warmup', 'evalInterval', 'evalBatches']);

/** The largest model the page trains: a wasm32 module addresses at most 4 GB, and the tab
 * needs room besides; devices that say they have little memory get less. */
export function memoryLimit() {
  const device = navigator.deviceMemory ? navigator.deviceMemory * 1e9 / 4 : Infinity;
  return Math.min(2e9, device);
}

const AUTOSAVE_MS = 60_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class LanguageModelUI {
  /** app: {error(text), autosave(record) -> Promise, keepChanged()} */
  constructor(app) {
    this.app = app;
    this.corpus = new Corpus();
    this.chart = new LossChart($('loss-chart'));
    this.heatmap = new Heatmap($('att-map'), $('att-readout'));
    this.wm = null;
    this.phase = 'none'; // none | creating | training | pausing | paused | stopped | done
    this.run = null;     // {target, startStep, abort, reason, during, activeMs, chunkStart}
    this.genAbort = null;
    this.maps = null;    // the last selfAttention result
    this.bpeTokens = null;
    this.lastSave = 0;
    this.problem = null; // why the settings cannot be trained, or null
    this.wire();
    this.applyPreset('tiny');
    this.refreshButtons();
  }

  // ---- settings ----

  wire() {
    $('corpus-source').addEventListener('change', () => this.chooseSource());
    $('corpus-paste').addEventListener('input', () => {
      this.corpus.setPasted($('corpus-paste').value);
      this.corpusChanged();
    });
    $('corpus-file').addEventListener('change', () => this.readFile());
    for (const id of ['tokenizer-kind', 'bpe-vocab', 'val-fraction']) $(id).addEventListener('input', () => this.corpusChanged());
    $('preset').addEventListener('change', () => {
      if ($('preset').value !== 'custom') this.applyPreset($('preset').value);
      this.settingsChanged();
    });
    for (const f of [...CFG_FIELDS.map((k) => `cfg-${k}`), ...TRAIN_FIELDS.map((k) => `tr-${k}`)]) {
      // what a preset sets (the architecture, batch size and learning rate) makes it custom
      $(f).addEventListener('input', () => {
        if (f.startsWith('cfg-') || f === 'tr-batchSize' || f === 'tr-lr') $('preset').value = 'custom';
        this.settingsChanged();
      });
    }
    $('train-start').addEventListener('click', () => this.guard(() => this.startNew(), 'Could not start training'));
    $('train-pause').addEventListener('click', () => (this.phase === 'paused' ? this.guard(() => this.resume(), 'Could not resume') : this.pause()));
    $('train-stop').addEventListener('click', () => this.stop());
    $('train-more').addEventListener('click', () => this.guard(() => this.trainMore(), 'Could not continue training'));
    $('gen-start').addEventListener('click', () => this.guard(() => this.generate(), 'Generation failed'));
    $('gen-stop').addEventListener('click', () => this.genAbort?.abort());
    $('att-show').addEventListener('click', () => this.guard(() => this.showAttention(), 'Could not compute the attention map'));
    $('att-text').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !$('att-show').disabled) $('att-show').click(); });
    $('att-layer').addEventListener('change', () => this.drawAttention());
    $('att-head').addEventListener('change', () => this.drawAttention());
  }

  /** Runs an async action; a failure is shown in words, never swallowed. */
  async guard(fn, doing) {
    try {
      await fn();
    } catch (e) {
      this.app.error(fmt.explain(e, doing));
      this.refreshButtons();
    }
  }

  async chooseSource() {
    const source = $('corpus-source').value;
    $('corpus-paste-row').hidden = source !== 'paste';
    $('corpus-file-row').hidden = source !== 'file';
    $('stat-chars').textContent = '…';
    await this.guard(async () => {
      await this.corpus.select(source);
      this.corpusChanged();
    }, 'Could not load the text');
  }

  async readFile() {
    const file = $('corpus-file').files[0];
    if (!file) return;
    await this.guard(async () => {
      await this.corpus.setFile(file);
      this.corpusChanged();
    }, `Could not read ${file.name}`);
  }

  corpusChanged() {
    $('bpe-row').hidden = $('tokenizer-kind').value !== 'bpe';
    this.bpeTokens = null;
    const text = this.corpus.text;
    $('corpus-preview').textContent = text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
    this.settingsChanged();
  }

  showCorpusStats() {
    const kind = $('tokenizer-kind').value;
    const s = this.corpus.stats({ kind, bpeVocab: this.num('bpe-vocab'), valFraction: this.num('val-fraction'), bpeTokens: this.bpeTokens });
    $('stat-chars').textContent = fmt.count(s.chars);
    $('stat-vocab').textContent = kind === 'bpe' ? `${fmt.count(s.vocab)} BPE tokens` : `${fmt.count(s.vocab)} (${fmt.count(s.distinct)} characters + unknown)`;
    $('stat-tokens').textContent = s.tokens === null ? 'counted when training starts' : fmt.count(s.tokens);
    $('stat-split').textContent = s.tokens === null ? `${fmt.count(100 * (1 - this.num('val-fraction')))}% / ${fmt.count(100 * this.num('val-fraction'))}%`
      : `${fmt.count(s.train)} / ${fmt.count(s.val)} tokens`;
  }

  applyPreset(name) {
    const p = { ...ARCH_DEFAULTS, ...TRAIN_DEFAULTS, ...PAGE_PRESETS[name] };
    for (const k of CFG_FIELDS) this.setField(`cfg-${k}`, p[k]);
    for (const k of TRAIN_FIELDS) this.setField(`tr-${k}`, p[k]);
    $('preset').value = name;
  }

  setField(id, v) {
    const el = $(id);
    if (el.type === 'checkbox') el.checked = !!v;
    else el.value = v ?? '';
  }

  num(id) {
    const v = $(id).value.trim();
    return v === '' ? undefined : Number(v);
  }

  /** The settings as {config, train}, or throws an Error naming the first bad field. */
  readSettings() {
    const read = (id, key) => {
      const el = $(id);
      if (el.type === 'checkbox') return el.checked;
      if (el.tagName === 'SELECT') return el.value;
      const v = this.num(id);
      if (v === undefined) return undefined;
      const name = el.closest('label')?.firstChild?.textContent.trim() ?? key;
      if (!Number.isFinite(v) || (INTEGER.has(key) && !Number.isInteger(v)) || v < 0) {
        throw new Error(`“${name}” must be a${INTEGER.has(key) ? ' whole' : ''} number of at least 0, not “${el.value}”`);
      }
      return v;
    };
    const config = {};
    for (const k of CFG_FIELDS) config[k] = read(`cfg-${k}`, k);
    for (const k of ['nLayer', 'nHead', 'dModel', 'dFF', 'context']) {
      if (!config[k]) throw new Error(`“${k}” must be a whole number of at least 1`);
    }
    const train = {};
    for (const k of TRAIN_FIELDS) train[k] = read(`tr-${k}`, k);
    if (!train.steps) throw new Error('“Steps” must be at least 1');
    if (!train.batchSize) throw new Error('“Batch size” must be at least 1');
    if (train.lr === undefined) throw new Error('give a learning rate');
    const kind = $('tokenizer-kind').value;
    const bpeVocab = this.num('bpe-vocab');
    if (kind === 'bpe' && !(Number.isInteger(bpeVocab) && bpeVocab >= 257)) throw new Error('the BPE vocabulary needs at least 257 tokens (256 bytes and one merge)');
    config.vocabSize = kind === 'bpe' ? bpeVocab : this.corpus.chars().distinct + 1;
    const valFraction = this.num('val-fraction') ?? 0;
    if (!(valFraction >= 0 && valFraction < 1)) throw new Error('the validation fraction must be in [0, 1)');
    return { config, train: { ...train, valFraction }, tokenizer: kind === 'bpe' ? { kind: 'bpe', vocabSize: bpeVocab } : 'char' };
  }

  /** Re-checks the settings (config, memory) after any change; shows a reason to refuse. */
  settingsChanged() {
    this.showCorpusStats();
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.checkSettings(), 150);
  }

  async checkSettings() {
    const seq = (this.checkSeq = (this.checkSeq ?? 0) + 1);
    let problem = null, estimate = null, config = null;
    try {
      const s = this.readSettings();
      config = s.config;
      const bad = await checkConfig(config, { threads: 1 });
      if (bad) problem = `These settings do not make a model: ${bad.message}.`;
      else {
        estimate = await estimateMemory(config, s.train.batchSize, config.context, { threads: 1 });
        const limit = memoryLimit();
        if (estimate.total > limit) {
          problem = `This model would need ${fmt.bytes(estimate.total)} to train (weights ${fmt.bytes(estimate.params)}, ` +
            `gradients and optimizer ${fmt.bytes(estimate.grads + estimate.optimizer)}, activations ${fmt.bytes(estimate.activations)}); ` +
            `this page trains models up to ${fmt.bytes(limit)}, because a WebAssembly module addresses at most 4 GB and the ` +
            'tab needs room besides. Use fewer layers, a smaller width or context, or a smaller batch.';
        }
      }
    } catch (e) {
      problem = `These settings cannot be used: ${fmt.explain(e)}`;
    }
    if (seq !== this.checkSeq) return; // a newer check is on its way
    $('stat-params').textContent = estimate ? fmt.count(estimate.count) : '–';
    $('stat-memory').textContent = estimate ? fmt.bytes(estimate.total) : '–';
    $('stat-acts').textContent = estimate ? fmt.bytes(estimate.activations) : '–';
    this.problem = problem;
    $('model-problem').textContent = problem ?? '';
    $('model-problem').hidden = !problem;
    this.refreshButtons();
  }

  // ---- training ----

  get busyGenerating() { return this.genAbort !== null; }

  refreshButtons() {
    const p = this.phase, has = !!this.wm, gen = this.busyGenerating;
    const running = p === 'training' || p === 'pausing' || p === 'creating';
    $('train-start').disabled = running || gen || !!this.problem;
    $('train-pause').disabled = !(p === 'training' || p === 'paused') || gen;
    $('train-pause').textContent = p === 'paused' ? 'Resume' : 'Pause';
    $('train-stop').disabled = !(p === 'training' || p === 'paused');
    $('train-more').disabled = !has || running || p === 'paused' || gen || !!this.problem;
    const ready = has && !running && this.wm.snapshot?.tokenizer;
    $('gen-start').disabled = !ready || gen;
    $('gen-stop').disabled = !gen;
    $('att-show').disabled = !ready || gen;
    if (ready) {
      if ($('gen-status').textContent.startsWith('Train a model')) $('gen-status').textContent = 'Ready to generate.';
      if ($('att-status').textContent.startsWith('Train a model')) $('att-status').textContent = 'Ready: type a text and show its attention.';
    }
    this.app.keepChanged();
  }

  setStatus(text) { $('train-status').textContent = text; }

  async startNew() {
    const s = this.readSettings();
    if (!this.corpus.text.length) throw new Error('the text is empty: pick a novel, paste some text or open a file first');
    clearTimeout(this.checkTimer);
    await this.checkSettings(); // the settings of this moment, not of the last debounced check
    if (this.problem) throw new Error(this.problem);
    await this.stopAndWait();
    this.phase = 'creating';
    this.refreshButtons();
    this.setStatus('Starting the model’s worker…');
    this.wm?.dispose();
    this.wm = null;
    this.maps = null;
    this.heatmap.clear('nothing shown yet');
    this.chart.clear();
    this.bpeTokens = null;
    try {
      this.wm = await createWorkerModel({ ...s.config, batchSize: s.train.batchSize, lr: s.train.lr });
    } catch (e) {
      this.phase = 'none';
      this.setStatus('No model yet.');
      throw e;
    }
    this.settings = s;
    this.app.threads(this.wm.snapshot.threads ?? 1);
    this.fillAttentionSelects();
    await this.runTraining({ steps: s.train.steps, fresh: true });
  }

  async trainMore() {
    const s = this.readSettings();
    if (!this.corpus.text.length) throw new Error('the text is empty: pick a novel, paste some text or open a file first');
    this.settings = { ...s, config: this.wm.config };
    await this.runTraining({ steps: s.train.steps, fresh: true });
  }

  /** A run to step (now + steps); fresh: a new learning-rate schedule for it. */
  async runTraining({ steps, fresh }) {
    const start = this.wm.step;
    this.run = { target: start + steps, startStep: start, fresh, activeMs: 0, reason: null, saves: [], abort: null, chunkStart: null };
    this.chart.setTarget(this.run.target);
    await this.trainLoop();
  }

  async resume() {
    if (this.phase !== 'paused' || !this.run) return;
    this.run.reason = null;
    await this.trainLoop();
  }

  /** Calls train until the run's target, a pause or a stop. Between two calls it runs the
   * saves that asked for an idle model (checkpoint). */
  async trainLoop() {
    const run = this.run, wm = this.wm, s = this.settings;
    this.phase = 'training';
    this.refreshButtons();
    this.lastSave = performance.now();
    const flush = async () => {
      while (run.saves.length) await run.saves.shift()();
    };
    for (;;) {
      const remaining = run.target - wm.step;
      if (remaining <= 0 || run.reason === 'stop') break;
      if (run.reason === 'pause') {
        this.phase = 'paused';
        await flush();
        this.setStatus(`Paused at step ${fmt.count(wm.step)} of ${fmt.count(run.target)}. Generate, look at the attention, or resume.`);
        $('stat-eta').textContent = '–';
        this.refreshButtons();
        await this.autosave();
        return;
      }
      run.abort = new AbortController();
      const opts = {
        steps: remaining, batchSize: s.train.batchSize, valFraction: s.train.valFraction,
        evalInterval: s.train.evalInterval ?? 0, evalBatches: s.train.evalBatches ?? 4,
        signal: run.abort.signal, onProgress: (p) => this.progress(p),
      };
      if (run.fresh) {
        for (const k of ['lr', 'warmup', 'minLrRatio', 'weightDecay', 'gradClip', 'beta1', 'beta2', 'eps']) {
          if (s.train[k] !== undefined) opts[k] = s.train[k];
        }
        if (!wm.snapshot.tokenizer) opts.tokenizer = s.tokenizer;
      } else {
        opts.keepSchedule = true;
      }
      this.setStatus(`Training: ${fmt.count(remaining)} steps to go.`);
      run.chunkStart = performance.now();
      let failure = null;
      try {
        await wm.train(this.corpus.text, opts);
      } catch (e) {
        if (e.name !== 'AbortError') failure = e;
      }
      run.activeMs += performance.now() - run.chunkStart;
      run.chunkStart = null;
      run.abort = null;
      await wm.info().catch(() => {}); // the step and the tokenizer after the call
      // the schedule is set once a call took a step (one aborted before restores the old one)
      if (wm.step > run.startStep) run.fresh = false;
      if (failure) {
        this.phase = wm.step > run.startStep ? 'paused' : 'stopped';
        run.reason = 'pause';
        await flush().catch(() => {});
        this.setStatus(`Training stopped at step ${fmt.count(wm.step)} because of an error.`);
        this.refreshButtons();
        throw failure;
      }
      if (this.bpeTokens === null && $('tokenizer-kind').value === 'bpe' && wm.snapshot.tokenizer?.kind === 'bpe') {
        this.bpeTokens = (await wm.encode(this.corpus.text)).length;
        this.showCorpusStats();
      }
      await flush();
    }
    this.phase = wm.step >= run.target ? 'done' : 'stopped';
    await flush();
    this.setStatus(this.phase === 'done'
      ? `Done: ${fmt.count(wm.step)} steps in ${fmt.duration(run.activeMs / 1000)}.`
      : `Stopped at step ${fmt.count(wm.step)}.`);
    $('stat-eta').textContent = '–';
    this.refreshButtons();
    await this.autosave();
  }

  progress(p) {
    const run = this.run;
    this.chart.addTrain(p.step, p.loss);
    if (p.validated && p.valLoss !== null) this.chart.addVal(p.step, p.valLoss);
    const elapsed = (run.activeMs + (performance.now() - run.chunkStart)) / 1000;
    $('stat-step').textContent = `${fmt.count(p.step)} / ${fmt.count(run.target)}`;
    $('stat-loss').textContent = fmt.loss(p.loss);
    $('stat-val').textContent = fmt.loss(this.chart.val.at(-1)?.[1]);
    $('stat-speed').textContent = fmt.rate(p.tokensPerSecond);
    $('stat-elapsed').textContent = fmt.duration(elapsed);
    $('stat-eta').textContent = fmt.duration(p.eta);
    $('train-progress').max = run.target - run.startStep;
    $('train-progress').value = p.step - run.startStep;
    if (this.app.autosaveOn() && performance.now() - this.lastSave > AUTOSAVE_MS && !run.reason && !run.saves.length) {
      this.lastSave = performance.now();
      this.checkpoint(() => this.autosave()).catch((e) => this.app.error(fmt.explain(e, 'Autosave failed')));
    }
  }

  pause() {
    if (this.phase !== 'training' || !this.run) return;
    this.run.reason = 'pause';
    this.phase = 'pausing';
    this.setStatus('Pausing after this step…');
    this.refreshButtons();
    this.run.abort?.abort();
  }

  stop() {
    if (this.phase === 'paused') {
      this.phase = 'stopped';
      this.setStatus(`Stopped at step ${fmt.count(this.wm.step)}.`);
      this.refreshButtons();
      return;
    }
    if ((this.phase !== 'training' && this.phase !== 'pausing') || !this.run) return;
    this.run.reason = 'stop';
    this.phase = 'pausing';
    this.setStatus('Stopping after this step…');
    this.refreshButtons();
    this.run.abort?.abort();
  }

  /** Ends training and generation, if any, and waits until the worker is idle. */
  async stopAndWait() {
    this.stop();
    this.genAbort?.abort();
    while (this.phase === 'pausing' || this.phase === 'training' || this.busyGenerating) await sleep(20);
  }

  /** Runs fn with the model idle: while training, between two train calls. */
  async checkpoint(fn) {
    while (this.phase === 'pausing' || this.phase === 'creating') await sleep(20);
    if (this.phase !== 'training') return fn();
    return new Promise((resolve, reject) => {
      this.run.saves.push(() => fn().then(resolve, reject));
      this.run.abort?.abort();
    });
  }

  /** The record autosave keeps, bytes included. */
  async record() {
    const bytes = await this.wm.save();
    const info = this.wm.snapshot;
    return {
      version: 1, kind: 'lm', savedAt: Date.now(), bytes, step: info.step, paramCount: info.paramCount,
      target: this.run && this.wm.step < this.run.target ? this.run.target : null,
      chart: this.chart.snapshot(),
      corpus: {
        source: this.corpus.source, name: this.corpus.name,
        text: NOVELS[this.corpus.source] ? null : this.corpus.text,
      },
      settings: this.formValues(),
    };
  }

  async autosave() {
    if (!this.wm || !this.app.autosaveOn()) return;
    this.lastSave = performance.now();
    const record = await this.record();
    await this.app.autosave(record);
  }

  formValues() {
    const out = {};
    for (const el of document.querySelectorAll('#lm-mode input:not([type=file]), #lm-mode select, #lm-mode textarea')) {
      if (el.id === 'corpus-paste') continue; // kept as corpus.text
      out[el.id] = el.type === 'checkbox' ? el.checked : el.value;
    }
    return out;
  }

  restoreForm(values) {
    for (const [id, v] of Object.entries(values ?? {})) {
      const el = $(id);
      if (!el || el.type === 'file') continue;
      if (el.type === 'checkbox') el.checked = v;
      else el.value = v;
    }
  }

  /** Takes a saved record back: the model into a new worker, the chart, the text, the form. */
  async restore(record) {
    await this.stopAndWait();
    const wm = await loadWorkerModel(record.bytes);
    this.wm?.dispose();
    this.wm = wm;
    this.restoreForm(record.settings);
    const c = record.corpus ?? {};
    $('corpus-source').value = c.source in NOVELS || c.source === 'paste' || c.source === 'file' ? c.source : 'pride_and_prejudice';
    if (c.text !== null && c.text !== undefined) {
      if (c.source === 'file') {
        this.corpus.fileText = c.text;
        this.corpus.fileName = c.name;
      } else {
        this.corpus.pasted = c.text;
        $('corpus-paste').value = c.text;
      }
    }
    await this.chooseSource();
    this.settings = { ...this.readSettings(), config: wm.config };
    this.chart.restore(record.chart);
    this.app.threads(wm.snapshot.threads ?? 1);
    this.fillAttentionSelects();
    const step = wm.step;
    if (record.target && record.target > step) {
      this.run = { target: record.target, startStep: step, fresh: false, activeMs: 0, reason: 'pause', saves: [], abort: null, chunkStart: null };
      this.phase = 'paused';
      this.setStatus(`Restored at step ${fmt.count(step)} of ${fmt.count(record.target)}: resume training, or generate.`);
    } else {
      this.run = null;
      this.phase = 'stopped';
      this.setStatus(`Restored the model trained for ${fmt.count(step)} steps.`);
    }
    $('stat-step').textContent = fmt.count(step);
    $('stat-loss').textContent = fmt.loss(record.chart?.train?.at(-1)?.[1]);
    $('stat-val').textContent = fmt.loss(record.chart?.val?.at(-1)?.[1]);
    this.refreshButtons();
  }

  /** Uses a WorkerModel loaded from a file. */
  async adopt(wm, fileName) {
    await this.stopAndWait();
    this.wm?.dispose();
    this.wm = wm;
    const cfg = wm.config;
    for (const k of CFG_FIELDS) this.setField(`cfg-${k}`, cfg[k]);
    const preset = Object.entries(PAGE_PRESETS).find(([, p]) => ['nLayer', 'nHead', 'dModel', 'dFF', 'context'].every((k) => p[k] === cfg[k]));
    $('preset').value = preset ? preset[0] : 'custom';
    const tok = wm.snapshot.tokenizer;
    if (tok) {
      $('tokenizer-kind').value = tok.kind;
      if (tok.kind === 'bpe') $('bpe-vocab').value = tok.vocabSize;
    }
    this.corpusChanged();
    this.settings = { ...this.readSettings(), config: cfg };
    this.run = null;
    this.phase = 'stopped';
    this.chart.clear();
    this.maps = null;
    this.heatmap.clear('nothing shown yet');
    this.app.threads(wm.snapshot.threads ?? 1);
    this.fillAttentionSelects();
    $('stat-step').textContent = fmt.count(wm.step);
    for (const id of ['stat-loss', 'stat-val', 'stat-speed', 'stat-elapsed', 'stat-eta']) $(id).textContent = '–';
    this.setStatus(`Opened ${fileName}: ${fmt.count(wm.paramCount)} parameters, trained for ${fmt.count(wm.step)} steps.`);
    this.refreshButtons();
  }

  // ---- generation and attention ----

  async generate() {
    if (!this.wm || this.busyGenerating) return;
    const prompt = $('gen-prompt').value;
    const get = (id, fallback) => this.num(id) ?? fallback;
    const maxTokens = get('gen-max', 100), temperature = get('gen-temperature', 1), topK = get('gen-topk', 0), topP = get('gen-topp', 1);
    for (const [name, v, ok] of [['Tokens to generate', maxTokens, Number.isInteger(maxTokens) && maxTokens >= 1],
      ['Temperature', temperature, temperature >= 0], ['Top-k', topK, Number.isInteger(topK) && topK >= 0], ['Top-p', topP, topP > 0 && topP <= 1]]) {
      if (!ok) throw new Error(`“${name}” cannot be ${v}`);
    }
    let seed = this.num('gen-seed');
    if (seed === undefined) seed = crypto.getRandomValues(new Uint32Array(1))[0];
    else if (!Number.isInteger(seed) || seed < 0) throw new Error(`the seed must be a whole number of at least 0, not ${seed}`);
    const out = $('gen-output');
    out.textContent = '';
    const shown = document.createElement('span');
    shown.className = 'prompt';
    shown.textContent = prompt;
    const text = document.createTextNode('');
    out.append(shown, text);
    this.genAbort = new AbortController();
    this.refreshButtons();
    $('gen-status').textContent = `Generating with seed ${seed}…`;
    let tokens = 0;
    try {
      for await (const piece of this.wm.generate(prompt, {
        maxTokens, temperature, topK, topP, seed, signal: this.genAbort.signal,
        onToken: (_, n) => { tokens = n; },
      })) {
        text.data += piece;
      }
      $('gen-status').textContent = `Generated ${fmt.count(tokens)} tokens with seed ${seed}.`;
    } catch (e) {
      if (e.name !== 'AbortError') throw e;
      $('gen-status').textContent = `Stopped after ${fmt.count(tokens)} tokens (seed ${seed}).`;
    } finally {
      this.genAbort = null;
      this.refreshButtons();
    }
  }

  fillAttentionSelects() {
    const cfg = this.wm.config;
    const layer = $('att-layer'), head = $('att-head');
    layer.replaceChildren(...Array.from({ length: cfg.nLayer }, (_, l) => new Option(`${l + 1} of ${cfg.nLayer}`, String(l))));
    layer.value = String(cfg.nLayer - 1);
    head.replaceChildren(new Option('mean of all heads', 'mean'),
      ...Array.from({ length: cfg.nHead }, (_, h) => new Option(`${h + 1} of ${cfg.nHead}`, String(h))));
  }

  async showAttention() {
    const text = $('att-text').value;
    if (!text.length) throw new Error('type a text to look at');
    $('att-status').textContent = 'Computing…';
    let all = 0;
    this.maps = await this.checkpoint(async () => {
      all = (await this.wm.encode(text)).length;
      return this.wm.selfAttention(text);
    });
    const cut = this.maps.T < all ? ` (the last ${this.maps.T} of its ${all}: the model’s context)` : '';
    $('att-status').textContent = `${this.maps.T} tokens${cut}.`;
    this.drawAttention();
  }

  drawAttention() {
    const m = this.maps;
    if (!m) return;
    const l = Number($('att-layer').value), hv = $('att-head').value, T = m.T;
    const layer = m.layers[Math.min(l, m.layers.length - 1)];
    let values;
    if (hv === 'mean') {
      values = new Float32Array(T * T);
      for (let h = 0; h < m.nHead; h++) for (let i = 0; i < T * T; i++) values[i] += layer[h * T * T + i] / m.nHead;
    } else {
      values = layer.subarray(Number(hv) * T * T, (Number(hv) + 1) * T * T);
    }
    this.heatmap.show({ rows: m.tokens, cols: m.tokens, values, caption: `layer ${l + 1}, ${hv === 'mean' ? 'mean of all heads' : `head ${Number(hv) + 1}`}` });
  }
}
