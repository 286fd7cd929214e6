// Configs in JavaScript, all from the config table (config-table.js, generated from
// include/wasmformer.h): the public field lists and defaults, the presets, a full config
// from a partial one, and the two forms of a config (JS: strings and booleans; native: the
// numbers of the C struct).
import { CONFIG_TABLE, OPTIM_TABLE } from './config-table.js';
import { WfError } from './errors.js';
import { checkKeys, float32Plain, show } from './options.js';

const UINT32_MAX = 4294967295;

/** A row of the table in the package's words: {name (the JS name), c (the C field), type
 * ('enum', 'bool', 'int', 'real' or 'seed'), default (JS form), values (an enum's names),
 * min, max (absent: none) and bounds ('[]', '[)', '(]' or '()': which ends are in) of a
 * number, encoderDecoderOnly (the range holds for encoder-decoders), meaning}. */
function fieldOf(r) {
  const f = { name: r.js, c: r.name, type: r.type, default: r.type === 'enum' ? r.names[r.default] : r.default };
  if (r.type === 'enum') f.values = Object.freeze([...r.names]);
  if (r.type === 'int' || r.type === 'real') {
    f.min = r.min;
    if (r.max !== null && r.max !== undefined) f.max = r.max;
    f.bounds = r.bounds ?? '[]';
  }
  if (r.type === 'seed') Object.assign(f, { min: 0, max: UINT32_MAX, bounds: '[]' });
  if (r.encoderDecoderOnly) f.encoderDecoderOnly = true;
  f.meaning = r.doc;
  return Object.freeze(f);
}

/** The fields of a model config (wf_config), in struct order (see fieldOf). */
export const CONFIG_FIELDS = Object.freeze(CONFIG_TABLE.map(fieldOf));

/** The optimizer settings (wf_optim), in struct order, in the same form. */
export const OPTIM_FIELDS = Object.freeze(OPTIM_TABLE.map(fieldOf));

const defaults = (rows) => Object.freeze(Object.fromEntries(rows.map((r) => [r.name, r.default])));

/** Every config field's default (the core's wf_config_default), JS form. */
export const CONFIG_DEFAULTS = defaults(CONFIG_FIELDS);

/** Every optimizer setting's default (the core's wf_optim_default). */
export const OPTIM_DEFAULTS = defaults(OPTIM_FIELDS);

/** Named configs. micro is the smallest (the CLI's and the page's default: the time-to-quality
 * bench's winner, bench/ttq/RESULTS.md); tiny and baby are the speed issue's benchmark
 * configs A and B. batchSize, lr, beta2 and muon are training defaults that come with them,
 * not part of the model. micro's and tiny's recipe (Muon, beta2 0.99; micro's RoPE too) is
 * what the bench found to shorten the time to a given loss; it comes with a preset when the preset is named
 * ('tiny', {preset: 'tiny'}): a config without one is filled from tiny's shape and the
 * tables' defaults only (see RECIPE_KEYS). */
export const PRESETS = {
  micro: { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 64, vocabSize: 96, batchSize: 16, lr: 3e-3, positions: 'rope', beta2: 0.99, muon: 1 },
  tiny: { nLayer: 4, nHead: 4, dModel: 128, dFF: 512, context: 64, vocabSize: 96, batchSize: 8, lr: 2e-3, beta2: 0.99, muon: 1 },
  baby: { nLayer: 6, nHead: 6, dModel: 384, dFF: 1536, context: 256, vocabSize: 96, batchSize: 4, lr: 1e-3 },
};

/** A preset's recipe: what it brings only when named (a partial config without a preset
 * keeps the tables' defaults for these). */
export const RECIPE_KEYS = Object.freeze(['positions', 'beta2', 'muon']);

/** The optimizer settings a resolved config carries as training defaults (set on the model
 * it creates). */
export const CONFIG_OPTIM_KEYS = Object.freeze(['lr', 'beta2', 'muon']);

/** The batch size of a model without a preset's: train() and evaluate() use it. */
const DEFAULT_BATCH_SIZE = 8;

/** The keys a config object may have: the table's fields, a preset to start from, and the
 * training defaults that come with a config (batchSize, lr). */
const CONFIG_KEYS = new Set([...CONFIG_FIELDS.map((f) => f.name), 'preset', 'batchSize', 'lr']);

/** A full config in JavaScript form (strings and booleans) from a preset name or a partial
 * config, filling the rest from the tiny preset's shape and the table's defaults. `batchSize`,
 * `lr` (and a named preset's `beta2`, `muon`) are training defaults, not part of the model. */
export function resolveConfig(config = 'tiny') {
  let base = config;
  if (config !== null && typeof config === 'object') checkKeys(config, CONFIG_KEYS, 'the config', 'WF_ERR_CONFIG');
  if (typeof config === 'string') {
    base = PRESETS[config];
    if (!Object.hasOwn(PRESETS, config)) throw new WfError('WF_ERR_CONFIG', `unknown preset "${config}"; presets: ${Object.keys(PRESETS).join(', ')}`);
  } else if (config === null || typeof config !== 'object') {
    throw new WfError('WF_ERR_CONFIG', `the config must be a preset name or an object, not ${show(config)}`);
  } else if (config.preset !== undefined) {
    const preset = Object.hasOwn(PRESETS, config.preset) ? PRESETS[config.preset] : null;
    if (!preset) throw new WfError('WF_ERR_CONFIG', `unknown preset ${show(config.preset)}; presets: ${Object.keys(PRESETS).join(', ')}`);
    base = { ...preset, ...config };
    delete base.preset;
  }
  const shape = Object.fromEntries(Object.entries(PRESETS.tiny).filter(([k]) => !RECIPE_KEYS.includes(k)));
  const out = { ...CONFIG_DEFAULTS, ...shape, ...base };
  for (const r of CONFIG_FIELDS) {
    if (r.type === 'enum' && typeof out[r.name] === 'number') out[r.name] = r.values[out[r.name]] ?? out[r.name];
  }
  // an encoder-decoder's encoder is as deep as its decoder unless told otherwise
  if (base.nEncLayer === undefined) out.nEncLayer = out.arch === 'encoder-decoder' ? out.nLayer : 0;
  return out;
}

/** The C struct's numeric form of a resolved config: enum names to their numbers, booleans
 * to 0/1; a name that is no choice, or a fraction where an integer goes, throws. */
export function toNative(cfg) {
  const out = {};
  for (const r of CONFIG_FIELDS) {
    const v = cfg[r.name];
    if (r.type === 'enum') {
      const i = typeof v === 'number' ? v : r.values.indexOf(v);
      if (i < 0 || !Number.isInteger(i) || i >= r.values.length) throw new WfError('WF_ERR_CONFIG', `${r.name} must be one of ${r.values.map((x) => `"${x}"`).join(', ')}, not ${show(v)}`);
      out[r.name] = i;
    } else if (r.type === 'bool') {
      if (typeof v !== 'boolean' && v !== 0 && v !== 1) throw new WfError('WF_ERR_CONFIG', `${r.name} must be true or false, not ${show(v)}`);
      out[r.name] = v ? 1 : 0;
    } else if (r.type === 'int' || r.type === 'seed') {
      if (!Number.isInteger(v)) throw new WfError('WF_ERR_CONFIG', `${r.name} must be an integer, not ${show(v)}`);
      out[r.name] = r.type === 'seed' ? v >>> 0 : v;
    } else {
      if (typeof v !== 'number') throw new WfError('WF_ERR_CONFIG', `${r.name} must be a number, not ${show(v)}`);
      out[r.name] = v;
    }
  }
  return out;
}

/** The JavaScript form of a native config (as the core returns it). */
export function fromNative(n) {
  const out = {};
  for (const r of CONFIG_FIELDS) {
    const v = n[r.name];
    out[r.name] = r.type === 'enum' ? r.values[v] : r.type === 'bool' ? v === 1 : r.type === 'real' ? float32Plain(v) : v;
  }
  return out;
}

/** The batch size of the preset a config has the shape of (a loaded tiny or baby model
 * trains with its preset's batch), else 8. */
export function presetBatchSize(cfg) {
  const keys = ['nLayer', 'nHead', 'dModel', 'dFF', 'context'];
  const preset = Object.values(PRESETS).find((p) => keys.every((k) => p[k] === cfg[k]));
  return preset?.batchSize ?? DEFAULT_BATCH_SIZE;
}

/** Each optimizer setting an options object gives, by the table's names (the others stay
 * unset); `start` is left out: where a schedule starts is train()'s to say. */
export function optimOf(opts) {
  const out = {};
  for (const r of OPTIM_FIELDS) if (r.name !== 'start' && opts[r.name] !== undefined) out[r.name] = opts[r.name];
  return out;
}
