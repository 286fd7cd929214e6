// Fine-tuning in the package's words: which tensors train (the core's trainable mask, a byte
// per slice: a stacked tensor's layers, or a whole tensor), chosen by names, groups and layer
// ranges; LoRA's settings as {rank, alpha, targets}.
import { WfError } from './errors.js';
import { show } from './options.js';
import { LORA_TARGETS, TENSOR_GROUPS, TENSOR_TABLE } from './config-table.js';

/** Every tensor of the core's table (src/plan.h), by name: {stacked, groups}. */
const TENSORS = new Map(TENSOR_TABLE.map((t) => [t.name, t]));
/** The words a trainable spec may use besides tensor names: 'all', 'layers' (every stacked
 * tensor) and the table's groups; 'head' is lm_head, or the token embedding when the head is
 * tied to it. */
const SPEC_WORDS = ['all', 'layers', ...TENSOR_GROUPS];

/** Whether a tensor is stacked: a slice per layer rather than one whole tensor. */
export const isStacked = (name) => TENSORS.get(name)?.stacked ?? false;

const TARGET_GROUPS = { attn: ['q', 'k', 'v', 'o'], mlp: ['fc', 'up', 'down'], all: LORA_TARGETS };

/** The tensor names one word stands for among the model's tensors, or null when the word
 * is neither a group nor one of them. */
function namesOf(word, tensors, tied) {
  if (word === 'all') return tensors.map((t) => t.name);
  if (word === 'layers') return tensors.filter((t) => isStacked(t.name)).map((t) => t.name);
  if (word === 'head' && tied) return tensors.filter((t) => t.name === 'wte').map((t) => t.name);
  if (TENSOR_GROUPS.includes(word)) return tensors.filter((t) => TENSORS.get(t.name)?.groups.includes(word)).map((t) => t.name);
  return tensors.some((t) => t.name === word) ? [word] : null;
}

/** The layers a range picks out of n: '3', '2-5', '4-' (to the last), '-2' (the last two). */
function layersOf(range, n, item) {
  const m = /^(\d*)(-?)(\d*)$/.exec(range);
  let lo, hi;
  if (m && m[1] !== '' && !m[2]) lo = hi = +m[1];
  else if (m && m[1] !== '' && m[2]) [lo, hi] = [+m[1], m[3] === '' ? n - 1 : +m[3]];
  else if (m && m[1] === '' && m[2] && m[3] !== '') [lo, hi] = [n - +m[3], n - 1];
  else throw new WfError('WF_ERR_ARG', `${show(item)}: the layers after @ are a number, a range a-b, a-, or -k (the last k)`);
  if (lo < 0 || hi >= n || lo > hi) {
    throw new WfError('WF_ERR_ARG', `${show(item)}: layers ${lo} to ${hi} are outside the model's 0 to ${n - 1}`);
  }
  return [lo, hi];
}

/**
 * The mask bytes a spec selects, over tensors (Runtime.modelTensors' rows):
 * a string or an array of them, each a tensor name or a group ('all', 'layers', 'embed',
 * 'norm', 'attn', 'mlp', 'cross', 'head', 'lora'), optionally with '@' and layers
 * ('layers@-2', 'attn@0-3'); [] selects nothing. Returns a Uint8Array of n with 1 where selected.
 */
export function selectSlices(spec, tensors, n, tied) {
  const items = typeof spec === 'string' ? [spec] : spec;
  if (!Array.isArray(items) || items.some((x) => typeof x !== 'string')) {
    throw new WfError('WF_ERR_ARG', `tensors to train or freeze are a name or an array of names, e.g. ['head', 'layers@-2'], not ${show(spec)}`);
  }
  const out = new Uint8Array(n);
  for (const item of items) {
    const [word, range] = item.split('@');
    const names = namesOf(word, tensors, tied);
    if (!names) {
      throw new WfError('WF_ERR_ARG', `no tensor or group is named ${show(word)}; groups: ${SPEC_WORDS.join(', ')}; `
        + `tensors: ${tensors.map((t) => t.name).join(', ')}`);
    }
    if (names.length === 0) throw new WfError('WF_ERR_ARG', `${show(item)} names no tensor of this model`);
    for (const t of tensors.filter((x) => names.includes(x.name))) {
      let lo = 0, hi = t.layers - 1;
      if (range !== undefined) {
        if (!isStacked(t.name)) {
          if (word === t.name) throw new WfError('WF_ERR_ARG', `${show(item)}: ${t.name} is one tensor, not one per layer`);
          continue; // a group with layers: its per-layer tensors only
        }
        [lo, hi] = layersOf(range, t.layers, item);
      }
      for (let l = lo; l <= hi; l++) out[t.slice0 + l] = 1;
    }
  }
  return out;
}

/** The trainable parameters of a mask over tensors: {trainable, total}. */
export function trainableCount(tensors, mask) {
  let trainable = 0, total = 0;
  for (const t of tensors) {
    const per = t.size / t.layers;
    for (let l = 0; l < t.layers; l++) trainable += mask[t.slice0 + l] ? per : 0;
    total += t.size;
  }
  return { trainable, total };
}

/** LoRA's targets as the config's bits, from names ('q', 'k', 'v', 'o', 'fc', 'up', 'down',
 * or the groups 'attn', 'mlp', 'all'); 'up' (SwiGLU's) is left out of a group where the
 * model has none. */
export function targetBits(targets, swiglu) {
  const items = typeof targets === 'string' ? [targets] : targets;
  if (!Array.isArray(items) || items.length === 0) {
    throw new WfError('WF_ERR_ARG', `LoRA's targets are names among ${[...LORA_TARGETS, 'attn', 'mlp', 'all'].join(', ')}, not ${show(targets)}`);
  }
  let bits = 0;
  for (const x of items) {
    const group = TARGET_GROUPS[x];
    if (!group && !LORA_TARGETS.includes(x)) {
      throw new WfError('WF_ERR_ARG', `LoRA target ${show(x)} is not one of ${[...LORA_TARGETS, 'attn', 'mlp', 'all'].join(', ')}`);
    }
    for (const t of group ?? [x]) {
      if (t === 'up' && !swiglu) {
        if (group) continue;
        throw new WfError('WF_ERR_ARG', "LoRA target 'up' is SwiGLU's up rows; this model's activation has none ('fc' adapts its first feed-forward matrix)");
      }
      bits |= 1 << LORA_TARGETS.indexOf(t);
    }
  }
  return bits;
}

/** The names of the config's LoRA target bits. */
export function targetNames(bits) {
  return LORA_TARGETS.filter((_, i) => bits & (1 << i));
}
