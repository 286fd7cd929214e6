// Form controls made from the package's config table (CONFIG_FIELDS, OPTIM_FIELDS): a
// select for an enum, a checkbox for a boolean, a number input otherwise, with the
// table's range; and the value of one, checked, in words. The page chooses the words.
import { CONFIG_FIELDS, OPTIM_FIELDS } from './pkg/src/js/index.js';

/** Every row of both tables, by JavaScript name. */
export const FIELDS = Object.fromEntries([...CONFIG_FIELDS, ...OPTIM_FIELDS].map((f) => [f.name, f]));

/** The page's words for the settings it shows, config and training alike, in one place for
 * both halves of the page (a field it has none for shows the table's meaning). */
export const LABELS = {
  nLayer: 'Layers', nHead: 'Attention heads', dModel: 'Width (d_model)', dFF: 'Feed-forward width', context: 'Context (tokens)',
  norm: 'Normalization', block: 'Block', activation: 'Activation', positions: 'Positions', normEps: 'Norm epsilon',
  dropout: 'Dropout', seed: 'Weight seed', tiedHead: 'Output head tied to the token embedding', bias: 'Biases in linear layers and norms',
  batchSize: 'Batch size', lr: 'Learning rate', warmup: 'Warmup steps', minLrRatio: 'Final learning rate (fraction)',
  weightDecay: 'Weight decay', gradClip: 'Gradient clip (0 = off)', beta1: 'Adam beta1', beta2: 'Adam beta2', eps: 'Adam epsilon',
  muon: 'Muon for the weight matrices (1 = on, 0 = AdamW)',
  evalInterval: 'Validate every (steps)', evalBatches: 'Batches per validation',
};

/** The page's words for an enum's choices (a choice it has none for shows as its name). */
const CHOICES = {
  layernorm: 'LayerNorm', rmsnorm: 'RMSNorm', pre_ln: 'Pre-LN (norm before each sublayer)',
  post_ln: 'Post-LN (norm after the residual add)', gelu: 'GELU', relu: 'ReLU', swiglu: 'SwiGLU', rope: 'rotary (RoPE)',
};

const integer = (f) => f.type === 'int' || f.type === 'seed';

/**
 * A labelled control for field row f: <label>text <input id></label> (a checkbox after its
 * text). Options override the table: label (default: LABELS, else the row's meaning), min,
 * max, step, value.
 */
export function fieldControl(f, { id, label = LABELS[f.name] ?? f.meaning[0].toUpperCase() + f.meaning.slice(1), min, max, step,
  value } = {}) {
  const wrap = document.createElement('label');
  let el;
  if (f.type === 'enum') {
    el = document.createElement('select');
    el.append(...f.values.map((v) => new Option(CHOICES[v] ?? v, v)));
  } else {
    el = document.createElement('input');
    el.type = f.type === 'bool' ? 'checkbox' : 'number';
  }
  el.id = id;
  if (el.type === 'number') {
    const lo = min ?? f.min, hi = max ?? f.max;
    if (lo !== undefined) el.min = String(lo);
    if (hi !== undefined) el.max = String(hi);
    el.step = String(step ?? (integer(f) ? 1 : 'any'));
  }
  if (f.type === 'bool') {
    wrap.className = 'check';
    wrap.append(el, ` ${label}`);
  } else {
    wrap.append(`${label} `, el);
  }
  if (value !== undefined) setField(el, value);
  return wrap;
}

/** Shows v in a control: checked for a checkbox, the value (or empty) otherwise. */
export function setField(el, v) {
  if (el.type === 'checkbox') el.checked = !!v;
  else el.value = v ?? '';
}

/** The number in an input, or undefined when it is empty. */
export function numberIn(el) {
  const v = el.value.trim();
  return v === '' ? undefined : Number(v);
}

/** The words that name a control: its label's text. */
export function labelOf(el) {
  return (el.closest('label')?.firstChild?.textContent ?? el.id).trim();
}

/** The value of control el for field row f (undefined for an empty number), or an Error in
 * words: a whole number where the field is an integer, at least the field's minimum. */
export function readField(el, f) {
  if (el.type === 'checkbox') return el.checked;
  if (el.tagName === 'SELECT') return el.value;
  const v = numberIn(el);
  if (v === undefined) return undefined;
  const min = Math.max(0, f.min ?? 0);
  if (!Number.isFinite(v) || (integer(f) && !Number.isInteger(v)) || v < min) {
    throw new Error(`“${labelOf(el)}” must be a${integer(f) ? ' whole' : ''} number of at least ${min}, not “${el.value}”`);
  }
  return v;
}
