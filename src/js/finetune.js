// Fine-tuning in the package's words: which tensors train (the core's trainable mask, a byte
// per slice: a stacked tensor's layers, or a whole tensor), chosen by names, groups and layer
// ranges; LoRA's settings as {rank, alpha, targets}.
import { WfError } from './errors.js';
import { show } from './options.js';

/** Groups a name in a trainable spec may stand for (the tensor names of src/plan.h); 'head'
 * is lm_head, or the token embedding when the head is tied to it. */
const GROUPS = {
  embed: ['wte', 'wpe', 'enc_wpe'],
  norm: ['ln1w', 'ln1b', 'lncw', 'lncb', 'ln2w', 'ln2b', 'lnfw', 'lnfb', 'enc_lnfw', 'enc_lnfb'],
  attn: ['qkvw', 'qkvb', 'attprojw', 'attprojb'],
  mlp: ['fcw', 'fcb', 'fcprojw', 'fcprojb'],
  cross: ['lncw', 'lncb', 'cqw', 'cqb', 'ckvw', 'ckvb', 'cprojw', 'cprojb'],
};
const SPEC_WORDS = ['all', 'layers', 'head', 'lora', ...Object.keys(GROUPS)];

/** The tensors that are one whole tensor rather than one per layer (src/plan.h's table). */
const WHOLE = new Set(['wte', 'wpe', 'enc_wpe', 'enc_lnfw', 'enc_lnfb', 'lnfw', 'lnfb', 'lm_head']);
export const isStacked = (name) => !WHOLE.has(name);

/** LoRA's targets: the bits of the config's loraTargets, in order. */
export const LORA_TARGETS = ['q', 'k', 'v', 'o', 'fc', 'up', 'down'];
const TARGET_GROUPS = { attn: ['q', 'k', 'v', 'o'], mlp: ['fc', 'up', 'down'], all: LORA_TARGETS };

/** The tensor names one word stands for, among `names` (a tensor's base name: enc_ and the
 * stack come off for the groups). */
function namesOf(word, tensors, tied) {
  const base = (n) => n.replace(/^enc_/, '');
  if (word === 'all') return tensors.map((t) => t.name);
  if (word === 'layers') return tensors.filter((t) => isStacked(t.name)).map((t) => t.name);
  if (word === 'lora') return tensors.filter((t) => base(t.name).startsWith('lora_')).map((t) => t.name);
  if (word === 'head') return tensors.filter((t) => t.name === (tied ? 'wte' : 'lm_head')).map((t) => t.name);
  if (GROUPS[word]) return tensors.filter((t) => GROUPS[word].includes(base(t.name)) || GROUPS[word].includes(t.name)).map((t) => t.name);
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
