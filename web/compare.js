// Runs compared on the loss chart (issue 27): in bits per character, which a character model
// and a byte-pair model of any text share, against training time, which is what a user gives
// each run; each run named by its text, tokenizer, size and what it trained in that time. Pure
// functions but tokensPerChar (which asks the model's tokenizer), so a test can feed them runs.
import { PRESETS } from './pkg/src/js/index.js';
import { validationNoise } from './judge.js';
import * as fmt from './format.js';

/** Bits a character per nat a token: a loss per token (nats) x this = bits per character. */
export const bitsPerChar = (tokensPerChar) => tokensPerChar / Math.LN2;

/** The tokens a character of the text's training part and of its held-out part (its last
 * valFraction of tokens, as the core splits it), for the model's tokenizer: exactly 1 for a
 * character tokenizer (one token a code point); counted for any other (encoded, the held-out
 * tokens decoded back to count their characters). Resolves to {train, val, tokens}. */
export async function tokensPerChar(wm, text, valFraction) {
  let chars = 0;
  for (const _ of text) chars++; // code points, as the page counts characters
  if (wm.snapshot.tokenizer?.kind === 'char') return { train: 1, val: 1, tokens: chars };
  const ids = await wm.encode(text), held = Math.floor(ids.length * valFraction);
  let heldChars = 0;
  if (held > 0) for (const _ of await wm.decode(ids.slice(ids.length - held))) heldChars++;
  const trainChars = chars - heldChars;
  return {
    train: trainChars > 0 ? (ids.length - held) / trainChars : ids.length / Math.max(1, chars),
    val: heldChars > 0 ? held / heldChars : ids.length / Math.max(1, chars),
    tokens: ids.length,
  };
}

/** The preset a config is (its layers, heads, width and feed-forward width), or null. The
 * context may be shorter than the preset's: a short text shrinks it. */
export function presetOf(config) {
  const found = Object.entries(PRESETS).find(([, p]) => ['nLayer', 'nHead', 'dModel', 'dFF'].every((k) => p[k] === config[k]));
  return found ? found[0] : null;
}

/** A run as the chart names it: {text, tokenizer (words), preset (or null), layers, width,
 * params, steps and seconds (its training time) and valBpc (its last validation, bits a
 * character), each null when not given (the chart takes them from the run's points), noise
 * (one validation's noise, bits a character)}. tokenizer: the model's ({kind, vocabSize}). */
export function runInfo({ config, tokenizer, train = {}, text, params, steps = null, seconds = null, valBpc = null, perChar }) {
  const kind = !tokenizer || tokenizer.kind === 'char' ? 'characters'
    : `${tokenizer.kind === 'bpe' ? 'byte-pair' : tokenizer.kind} tokens (${fmt.count(tokenizer.vocabSize)})`;
  const noise = validationNoise({ evalBatches: train.evalBatches, batchSize: train.batchSize, context: config.context }) * bitsPerChar(perChar?.val ?? 1);
  return {
    text, tokenizer: kind, preset: presetOf(config), layers: config.nLayer, width: config.dModel, params,
    steps: Number.isFinite(steps) ? steps : null, seconds: Number.isFinite(seconds) ? seconds : null,
    valBpc: Number.isFinite(valBpc) ? valBpc : null, noise,
  };
}

/** "micro (2 x 64, 104,960 parameters), Pride and Prejudice, characters: 941 steps in 1 min
 * 00 s, validation 2.08 bits a character". */
export function runLabel(r) {
  const size = `${r.preset ? `${r.preset} ` : ''}(${r.layers} x ${r.width}, ${fmt.count(r.params)} parameters)`;
  const time = r.seconds === null ? '' : ` in ${fmt.duration(r.seconds)}`;
  const val = r.valBpc === null ? '' : `, validation ${r.valBpc.toFixed(2)} bits a character`;
  return `${size}, ${r.text}, ${r.tokenizer}: ${fmt.count(r.steps)} steps${time}${val}`;
}

/** The step a run had reached at `seconds` of training (its points: [step, loss, seconds, ...]). */
export function stepAt(points, seconds) {
  let step = 0;
  for (const p of points) if (p[2] <= seconds + 1e-9) step = p[0];
  return step;
}

/** The last validation (bits a character) a run had at `seconds`, or null. */
export function valAt(points, seconds) {
  let v = null;
  for (const p of points) if (p[2] <= seconds + 1e-9 && Number.isFinite(p[3])) v = p[3];
  return v;
}

/** Why a bigger model did worse in the same time, in words, or null. runs: [{name, info, train,
 * val}] (points with seconds and bits a character). For each pair where the one with more
 * parameters stands higher at the shorter run's end by more than twice the noise of the
 * difference (two validations, each of its own run's noise), says how many steps each made
 * in that time: a bigger model's step costs more, so it sees fewer batches. */
export function whyBiggerWorse(runs) {
  const said = [];
  for (const big of runs) {
    for (const small of runs) {
      if (big === small || !(big.info.params > small.info.params)) continue;
      const end = (r) => r.train.at(-1)?.[2];
      const t = Math.min(end(big), end(small));
      if (!Number.isFinite(t) || t <= 0) continue;
      const vb = valAt(big.val, t), vs = valAt(small.val, t);
      if (vb === null || vs === null || !(vb - vs > 2 * Math.hypot(big.info.noise, small.info.noise))) continue;
      const sb = stepAt(big.train, t), ss = stepAt(small.train, t);
      said.push(`${big.name} has ${(big.info.params / small.info.params).toFixed(1)} times the parameters of ${small.name} but made `
        + `${fmt.count(sb)} steps in ${fmt.duration(t)} where ${small.name} made ${fmt.count(ss)}: each of its steps costs more, so in the `
        + `same time it learned from fewer batches, and stands higher (${vb.toFixed(2)} against ${vs.toFixed(2)} bits a character).`);
    }
  }
  return said.length ? said.map((t) => t[0].toUpperCase() + t.slice(1)).join(' ') : null;
}
