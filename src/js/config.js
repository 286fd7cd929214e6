// Configs in JavaScript, all from the config table (config-table.js, generated from
// include/wasmformer.h): the public field lists and defaults, the presets, a full config
// from a partial one, and the two forms of a config (JS: strings and booleans; native: the
// numbers of the C struct).
import { CONFIG_TABLE, OPTIM_TABLE, PRESET_TABLE } from './config-table.js';
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

/** The presets, from the core's table (src/presets.h, through config-table.js): named configs
 * with the training defaults that come with them. micro is the smallest (the CLI's and the
 * page's default: the time-to-quality bench's winner, bench/ttq/RESULTS.md); tiny and baby
 * are the speed issue's benchmark configs A and B. batchSize, lr, beta2 and muon are
 * training defaults, not part of the model; a recipe key (RECIPE_KEYS) is there only where it
 * is not the table's default, and comes with a preset when the preset is named ('tiny',
 * {preset: 'tiny'}): a config without one is filled from tiny's shape and the tables'
 * defaults only. */
export const PRESETS = Object.fromEntries(PRESET_TABLE.map((p) => {
  const positions = CONFIG_TABLE.find((r) => r.js === 'positions').names[p.positions];
  const recipe = { positions, beta2: p.beta2, muon: p.muon };
  const out = { nLayer: p.nLayer, nHead: p.nHead, dModel: p.dModel, dFF: p.dFF, context: p.context,
    vocabSize: CONFIG_TABLE.find((r) => r.js === 'vocabSize').default, batchSize: p.batchSize, lr: p.lr };
  for (const [k, v] of Object.entries(recipe)) if (v !== (k === 'positions' ? 'learned' : OPTIM_TABLE.find((r) => r.js === k).default)) out[k] = v;
  return [p.name, out];
}));

/** Each preset's run length in steps: what the command line and the page train for. */
export const PRESET_STEPS = Object.freeze(Object.fromEntries(PRESET_TABLE.map((p) => [p.name, p.steps])));

/** The preset the command line and the page start with: the table's first. */
export const DEFAULT_PRESET = PRESET_TABLE[0].name;

/** A run's settings as the core defaults them (wf_preset(NULL, ...)'s wf_run, by the
 * package's names; tests/js/config-table.test.mjs holds them to the core's): train()'s
 * defaults come from here. -1: worked out by the core (a tenth of the run, the rest; no
 * reseed); context 0: the model's. */
export const RUN_DEFAULTS = Object.freeze({
  steps: 1000, seconds: 0, warmup: -1, decaySteps: -1, warmupFraction: 0.05, valFraction: 0.1, evalInterval: 100,
  evalBatches: 4, batchSize: 8, context: 0, rollback: 1, seed: -1,
});

/** A preset's recipe: what it brings only when named (a partial config without a preset
 * keeps the tables' defaults for these). */
export const RECIPE_KEYS = Object.freeze(['positions', 'beta2', 'muon']);

/** The optimizer settings a resolved config carries as training defaults (set on the model
 * it creates). */
export const CONFIG_OPTIM_KEYS = Object.freeze(['lr', 'beta2', 'muon']);

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

/** Each optimizer setting an options object gives, by the table's names (the others stay
 * unset); `start` is left out: where a schedule starts is train()'s to say. */
export function optimOf(opts) {
  const out = {};
  for (const r of OPTIM_FIELDS) if (r.name !== 'start' && opts[r.name] !== undefined) out[r.name] = opts[r.name];
  return out;
}
