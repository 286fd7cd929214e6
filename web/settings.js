// The language model's settings form: the text (a novel, pasted text or a file), its
// tokenizer and validation split, the size preset, and the advanced settings, which are
// made here from the package's config table (fields.js) with the package's defaults. Any
// change re-checks the settings with the core (checkConfig, estimateMemory) and says why
// they cannot be trained, if they cannot.
import { CONFIG_FIELDS, DEFAULT_PRESET, OPTIM_FIELDS, PRESETS, PRESET_STEPS, TRAIN_DEFAULTS, checkConfig, estimateMemory } from './pkg/src/js/index.js';
import { Corpus } from './corpus.js';
import { AutoPreset } from './auto.js';
import { FIELDS, fieldControl, labelOf, numberIn, readField, setField } from './fields.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);

/** The page's presets: the package's, with their run length in steps (both from the core's
 * one table, src/presets.h). micro and tiny bring their recipe (Muon, beta2 0.99; micro RoPE
 * too: bench/ttq/RESULTS.md). */
export const PAGE_PRESETS = Object.fromEntries(Object.entries(PRESETS).map(([name, p]) => [name, { ...p, steps: PRESET_STEPS[name] }]));
const SHAPE = ['nLayer', 'nHead', 'dModel', 'dFF', 'context']; // what a preset sets of the architecture

// The advanced settings the page shows, in its order (their words: fields.js's LABELS): the
// config fields but those the page decides (a decoder; the vocabulary is the tokenizer's),
// then the training settings. A config field the table has and this list does not comes
// last, in the table's words.
const MODEL_KEYS = ['nLayer', 'nHead', 'dModel', 'dFF', 'context', 'norm', 'block', 'activation', 'positions', 'normEps',
  'dropout', 'seed', 'tiedHead', 'bias'];
// LoRA's fields come with fine-tuning an opened model (trainer.js), not with a new one
const PAGE_DECIDES = new Set(['arch', 'vocabSize', 'nEncLayer', 'maxBeam', 'loraRank', 'loraAlpha', 'loraTargets']);
// train()'s own options the form has, as rows of the table's shape
const TRAIN_ROWS = {
  batchSize: { name: 'batchSize', type: 'int', min: 1, max: 1024 },
  evalInterval: { name: 'evalInterval', type: 'int', min: 0 },
  evalBatches: { name: 'evalBatches', type: 'int', min: 1, max: 1000 },
  steps: { name: 'steps', type: 'int', min: 1, max: 10000000 },
};
const TRAIN_KEYS = ['batchSize', 'lr', 'warmup', 'minLrRatio', 'weightDecay', 'gradClip', 'beta1', 'beta2', 'eps', 'muon',
  'evalInterval', 'evalBatches'];
const RECIPE = ['batchSize', 'lr', 'beta2', 'muon']; // the training settings a preset owns besides the architecture
const CONTROL = { dropout: { max: 0.9, step: 0.05 } }; // where the page's spinner is finer than the table's range

const modelKeys = [...MODEL_KEYS, ...CONFIG_FIELDS.map((f) => f.name).filter((k) => !PAGE_DECIDES.has(k) && !MODEL_KEYS.includes(k))];
const rowOf = (k) => FIELDS[k] ?? TRAIN_ROWS[k];

/** Every advanced setting's value before a preset's: the core's defaults, and the run's
 * (warmup empty: a tenth of the run, at most 100). */
const DEFAULTS = {
  ...Object.fromEntries([...CONFIG_FIELDS, ...OPTIM_FIELDS].map((f) => [f.name, f.default])),
  warmup: '', evalInterval: TRAIN_DEFAULTS.evalInterval, evalBatches: TRAIN_DEFAULTS.evalBatches,
};

/** The largest model the page trains: a wasm32 module addresses at most 4 GB, and the tab
 * needs room besides; devices that say they have little memory get less. */
export function memoryLimit() {
  const device = navigator.deviceMemory ? navigator.deviceMemory * 1e9 / 4 : Infinity;
  return Math.min(2e9, device);
}

export class SettingsForm {
  /** app: {error(text)}; changed(): called when what can be trained may have changed */
  constructor(app, changed) {
    this.app = app;
    this.changed = changed;
    this.corpus = new Corpus();
    this.problem = null; // why the settings cannot be trained, or null
    this.bpeTokens = null; // tokens of the text once a BPE tokenizer has been learned
    this.build();
    this.wire();
    this.applyPreset(DEFAULT_PRESET); // micro: the preset that writes words soonest (about a minute on 2 cores)
    this.auto = new AutoPreset(); // the default, 'auto': micro's settings shown until it has chosen
    $('preset').value = 'auto';
  }

  /** The run's time budget in seconds, or null (a number of steps, or until stopped). */
  budget() {
    return /^\d+$/.test($('tr-for').value) ? Number($('tr-for').value) : null;
  }

  /** Measures this computer for 'auto' in the background (the page's first moments, before a
   * click), then shows what it would choose. */
  async prepareAuto() {
    const seconds = this.budget();
    if (seconds) await this.auto.measure(this.corpus.text, seconds);
    if ($('preset').value === 'auto') await this.resolveAuto();
  }

  /** With 'auto' chosen: the preset for the run as the form sets it, in the fields (the select
   * stays 'auto'), and why in one line. For a click (`click`), data-click-waited-ms says how
   * long it waited for the measurement. */
  async resolveAuto({ click = false } = {}) {
    if ($('preset').value !== 'auto') return;
    const t0 = performance.now();
    const choice = await this.auto.choose(this.corpus.text, this.budget(), $('tokenizer-kind').value);
    if ($('preset').value !== 'auto') return; // the user chose meanwhile
    // what the preset owns (its architecture and recipe); the run's length, validation and the
    // rest stay as the user set them
    const p = { ...DEFAULTS, ...PAGE_PRESETS[choice.preset] };
    for (const k of modelKeys) setField($(`cfg-${k}`), p[k]);
    for (const k of RECIPE) setField($(`tr-${k}`), p[k]);
    $('preset-why').dataset.preset = choice.preset;
    if (click) $('preset-why').dataset.clickWaitedMs = (performance.now() - t0).toFixed(0);
    $('preset-why').textContent = choice.why;
    this.settingsChanged();
  }

  /** The advanced settings' controls, from the package's tables, and the validation
   * split's default. */
  build() {
    setField($('val-fraction'), TRAIN_DEFAULTS.valFraction);
    $('cfg-fields').replaceChildren(...modelKeys.map((k) => fieldControl(FIELDS[k], { id: `cfg-${k}`, ...CONTROL[k] })));
    $('tr-fields').replaceChildren(...TRAIN_KEYS.map((k) => fieldControl(rowOf(k), { id: `tr-${k}` })));
  }

  wire() {
    $('corpus-source').addEventListener('change', () => this.chooseSource());
    $('corpus-paste').addEventListener('input', () => {
      this.corpus.setPasted($('corpus-paste').value);
      this.corpusChanged();
    });
    $('corpus-file').addEventListener('change', () => this.readFile());
    $('tr-for').addEventListener('change', () => {
      $('tr-steps-row').hidden = $('tr-for').value !== 'steps';
      fmt.guard(this.app, 'Could not choose a size', () => this.prepareAuto());
    });
    for (const id of ['tokenizer-kind', 'bpe-vocab', 'val-fraction']) $(id).addEventListener('input', () => this.corpusChanged());
    $('preset').addEventListener('change', () => {
      if ($('preset').value === 'auto') fmt.guard(this.app, 'Could not choose a size', () => this.prepareAuto());
      else if ($('preset').value !== 'custom') this.applyPreset($('preset').value);
      $('preset-why').hidden = $('preset').value !== 'auto';
      this.settingsChanged();
    });
    for (const id of [...modelKeys.map((k) => `cfg-${k}`), ...TRAIN_KEYS.map((k) => `tr-${k}`), 'tr-steps']) {
      // what a preset sets (the architecture, batch size and learning rate) makes it custom
      $(id).addEventListener('input', () => {
        if (id.startsWith('cfg-') || RECIPE.some((k) => id === `tr-${k}`)) $('preset').value = 'custom';
        this.settingsChanged();
      });
    }
  }

  async chooseSource() {
    const source = $('corpus-source').value;
    $('corpus-paste-row').hidden = source !== 'paste';
    $('corpus-file-row').hidden = source !== 'file';
    $('stat-chars').textContent = '…';
    await fmt.guard(this.app, 'Could not load the text', async () => {
      await this.corpus.select(source);
      this.corpusChanged();
    });
  }

  async readFile() {
    const file = $('corpus-file').files[0];
    if (!file) return;
    await fmt.guard(this.app, `Could not read ${file.name}`, async () => {
      await this.corpus.setFile(file);
      this.corpusChanged();
    });
  }

  corpusChanged() {
    $('bpe-row').hidden = $('tokenizer-kind').value !== 'bpe';
    this.bpeTokens = null;
    const text = this.corpus.text;
    $('corpus-preview').textContent = text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
    this.settingsChanged();
  }

  /** The number of tokens a learned BPE tokenizer made of the text, for the stats. */
  setBpeTokens(n) {
    this.bpeTokens = n;
    this.showCorpusStats();
  }

  showCorpusStats() {
    const kind = $('tokenizer-kind').value, valFraction = numberIn($('val-fraction'));
    const s = this.corpus.stats({ kind, bpeVocab: numberIn($('bpe-vocab')), valFraction, bpeTokens: this.bpeTokens });
    $('stat-chars').textContent = fmt.count(s.chars);
    // with a model loaded, its vocabulary (the text's tokens are its tokenizer's); else a new one's
    const tok = this.loaded?.tokenizer;
    $('stat-vocab-label').textContent = tok ? 'Vocabulary of the loaded model' : 'Vocabulary';
    $('stat-vocab').textContent = tok ? `${fmt.count(tok.vocabSize)} ${tok.kind === 'char' ? 'tokens (characters + unknown)' : 'tokens'}`
      : kind === 'bpe' ? `${fmt.count(s.vocab)} BPE tokens` : `${fmt.count(s.vocab)} (${fmt.count(s.distinct)} characters + unknown)`;
    $('stat-tokens').textContent = s.tokens === null ? 'counted when training starts' : fmt.count(s.tokens);
    $('stat-split').textContent = s.tokens === null ? `${fmt.count(100 * (1 - valFraction))}% / ${fmt.count(100 * valFraction)}%`
      : `${fmt.count(s.train)} / ${fmt.count(s.val)} tokens`;
  }

  /** Fills the advanced settings with preset `name`'s; the select shows `shown` ('auto' keeps
   * itself while it fills them with its choice). */
  applyPreset(name, shown = name) {
    const p = { ...DEFAULTS, ...PAGE_PRESETS[name] };
    for (const k of modelKeys) setField($(`cfg-${k}`), p[k]);
    for (const k of [...TRAIN_KEYS, 'steps']) setField($(`tr-${k}`), p[k]);
    $('preset').value = shown;
  }

  /** Shows a loaded model's config and tokenizer in the form. */
  showModel(cfg, tokenizer) {
    for (const k of modelKeys) setField($(`cfg-${k}`), cfg[k]);
    const preset = Object.entries(PAGE_PRESETS).find(([, p]) => SHAPE.every((k) => p[k] === cfg[k]));
    $('preset').value = preset ? preset[0] : 'custom';
    if (tokenizer) {
      $('tokenizer-kind').value = tokenizer.kind;
      if (tokenizer.kind === 'bpe') $('bpe-vocab').value = tokenizer.vocabSize;
    }
    this.corpusChanged();
  }

  /** The model loaded (its info, or null): the figures of the text describe its vocabulary. */
  setLoaded(info) {
    this.loaded = info;
    this.showCorpusStats();
  }

  /** The settings as {config, train, tokenizer}, or throws an Error naming the first bad field. */
  read() {
    const config = {};
    for (const k of modelKeys) config[k] = readField($(`cfg-${k}`), FIELDS[k]);
    for (const k of SHAPE) {
      if (config[k] === undefined) throw new Error(`“${labelOf($(`cfg-${k}`))}” must be a whole number of at least 1`);
    }
    const { train, tokenizer, bpeVocab, valFraction } = this.readRun();
    config.vocabSize = tokenizer === 'char' ? this.corpus.chars().distinct + 1 : bpeVocab;
    // a short text: the context shrinks to what both parts of the text can fill
    const fit = this.textFit(config.context, valFraction);
    if (fit.context !== null && fit.context < config.context) config.context = fit.context;
    return { config, train, tokenizer };
  }

  /** What a run needs of the form whatever the model (a new one, or the loaded one trained
   * more): {train, tokenizer, bpeVocab, valFraction}; the architecture is not read, so a bad
   * setting for a new model does not stop the loaded one. Throws an Error naming a bad field. */
  readRun() {
    const train = {};
    for (const k of [...TRAIN_KEYS, 'steps']) train[k] = readField($(`tr-${k}`), rowOf(k));
    if (!train.steps) throw new Error('“Steps” must be at least 1');
    // how long: a time budget in seconds, until stopped, or the steps above
    const length = $('tr-for').value;
    train.seconds = /^\d+$/.test(length) ? Number(length) : null;
    train.untilStopped = length === 'until';
    if (!train.batchSize) throw new Error('“Batch size” must be at least 1');
    if (train.lr === undefined) throw new Error('give a learning rate');
    const kind = $('tokenizer-kind').value;
    const bpeVocab = numberIn($('bpe-vocab'));
    if (kind === 'bpe' && !(Number.isInteger(bpeVocab) && bpeVocab >= 257)) throw new Error('the BPE vocabulary needs at least 257 tokens (256 bytes and one merge)');
    const valFraction = numberIn($('val-fraction')) ?? 0;
    if (!(valFraction >= 0 && valFraction < 1)) throw new Error('the validation fraction must be in [0, 1)');
    return { train: { ...train, valFraction }, tokenizer: kind === 'bpe' ? { kind: 'bpe', vocabSize: bpeVocab } : 'char', bpeVocab, valFraction };
  }

  /** A message of the core's about the settings in the form's words: each field's name (nHead)
   * becomes its control's label (Attention heads), the labels of the form built from the table. */
  inFormWords(message) {
    const named = [...modelKeys.map((k) => [k, `cfg-${k}`]), ...TRAIN_KEYS.map((k) => [k, `tr-${k}`])]
      .filter(([, id]) => $(id)).sort(([a], [b]) => b.length - a.length);
    return named.reduce((m, [k, id]) => m.replace(new RegExp(`\\b${k}\\b`, 'g'), labelOf($(id))), message);
  }

  /** What the text allows: training reads windows of context + 1 characters from the text
   * (the part not held out) and validation from the held-out part. Returns {problem: words
   * for the text box, or null; context: the longest context both parts fit (null: the
   * tokens are not known before a BPE tokenizer is learned)}. */
  textFit(context, valFraction) {
    const kind = $('tokenizer-kind').value;
    const s = this.corpus.stats({ kind, bpeVocab: numberIn($('bpe-vocab')), valFraction, bpeTokens: this.bpeTokens });
    if (s.chars === 0) return { problem: 'There is no text yet: pick a novel, paste some text or open a file.', context: null };
    if (s.tokens === null) return { problem: null, context: null };
    const room = Math.min(s.train, valFraction > 0 ? s.val : Infinity) - 1;
    const unit = kind === 'bpe' ? 'tokens' : 'characters';
    if (room < 2) {
      const need = valFraction > 0 ? Math.ceil(3 / Math.min(valFraction, 1 - valFraction)) : 3;
      return {
        problem: `This text is too short to learn from: it has ${fmt.count(s.tokens)} ${unit}, and with ${fmt.count(100 * valFraction)} % held out ` +
          `for validation it needs at least ${fmt.count(need)}. Paste more, or hold out less.`,
        context: null,
      };
    }
    return { problem: null, context: Math.min(context, room) };
  }

  /** Re-checks the settings (config, memory) after any change, a moment later. */
  settingsChanged() {
    this.showCorpusStats();
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.check(), 150);
  }

  /** Checks the settings of this moment; sets and shows `problem` (null when they train). */
  async check() {
    clearTimeout(this.checkTimer);
    const seq = (this.checkSeq = (this.checkSeq ?? 0) + 1);
    let problem = null, estimate = null;
    try {
      const { config, train } = this.read();
      const bad = await checkConfig(config, { threads: 1 });
      // too large for the memory is said below, with the page's own limit and the numbers
      if (bad && bad.code !== 'WF_ERR_NOMEM') problem = `These settings do not make a model: ${this.inFormWords(bad.message)}.`;
      else {
        estimate = await estimateMemory(config, train.batchSize, config.context, { threads: 1 });
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
    // the text's own problem, at the text box, in its words (and nothing to train until fixed)
    const valFraction = numberIn($('val-fraction')) ?? 0, wanted = readField($('cfg-context'), FIELDS.context);
    const fit = this.textFit(wanted ?? 1, valFraction);
    $('corpus-problem').textContent = fit.problem ?? '';
    $('corpus-problem').hidden = !fit.problem;
    const shrunk = !fit.problem && fit.context !== null && wanted !== undefined && fit.context < wanted;
    const unit = $('tokenizer-kind').value === 'bpe' ? 'tokens' : 'characters';
    $('corpus-note').textContent = shrunk ? `The text is short, so the model reads ${fmt.count(fit.context)} ${unit} at a time instead of ${fmt.count(wanted)}.` : '';
    $('corpus-note').hidden = !shrunk;
    this.problem = fit.problem ?? problem;
    // what stops the loaded model training more: the text, or the run's own settings (not a
    // new model's architecture)
    let runProblem = null;
    try {
      this.readRun();
    } catch (e) {
      runProblem = fmt.explain(e);
    }
    this.runProblem = fit.problem ?? runProblem;
    $('preset-why').hidden = $('preset').value !== 'auto';
    $('model-problem').textContent = problem ?? '';
    $('model-problem').hidden = !problem;
    this.changed();
  }

  /** The form's values, by element id, for the autosave record. */
  values() {
    const out = {};
    for (const el of document.querySelectorAll('#lm-mode input:not([type=file]), #lm-mode select, #lm-mode textarea')) {
      if (el.id === 'corpus-paste') continue; // kept as corpus.text
      out[el.id] = el.type === 'checkbox' ? el.checked : el.value;
    }
    return out;
  }

  restoreValues(values) {
    for (const [id, v] of Object.entries(values ?? {})) {
      const el = $(id);
      if (!el || el.type === 'file') continue;
      if (el.type === 'checkbox') el.checked = v;
      else el.value = v;
    }
  }
}
