// A decoder's text generation over a ModelHandle (Model.generate): the core's sampler one
// token at a time, decoded as a stream, cut at stop strings, with abort and yields.
import { WfError, throwIfAborted } from './errors.js';
import { decoderConfig, warnUnknown, yielder, yieldInterval } from './training.js';
import { checkKeys, show } from './options.js';
import { tokenizerHandle } from './tokenizer.js';

/** The defaults of generate()'s options (the CLI's too). allowUnknown: whether a char
 * tokenizer's <unk> (id 0, which decodes to U+FFFD) may be sampled. */
export const GENERATE_DEFAULTS = Object.freeze({ maxTokens: 100, temperature: 0.8, topK: 0, topP: 1, allowUnknown: false, yieldMs: 16 });

/** The keys of generate()'s options. */
export const GENERATE_KEYS = new Set(['maxTokens', 'temperature', 'topK', 'topP', 'seed', 'stop', 'signal', 'onToken', 'onWarning', 'allowUnknown', 'yieldMs']);

/** The length of the longest end of `pending` that starts some stop string (and so must
 * be held back: it may still become one). */
function heldBack(pending, stops) {
  let keep = 0;
  for (const s of stops) {
    for (let k = Math.min(s.length - 1, pending.length); k > keep; k--) {
      if (s.startsWith(pending.slice(pending.length - k))) { keep = k; break; }
    }
  }
  return keep;
}

/** Generated text as an async iterator of pieces; see Model.generate for the options. */
export async function* generate(core, prompt = '', opts = {}) {
  checkKeys(opts, GENERATE_KEYS, 'generate() options');
  if (typeof prompt !== 'string') throw new TypeError(`the prompt must be a string, not ${show(prompt)}`);
  const h = core.idle();
  decoderConfig(core, 'generate');
  const rt = core.rt, tokenizer = core.tokenizer;
  if (!tokenizer) throw new WfError('WF_ERR_STATE', 'the model has no tokenizer yet: train it on text first');
  const maxTokens = opts.maxTokens ?? GENERATE_DEFAULTS.maxTokens;
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new WfError('WF_ERR_ARG', `maxTokens must be an integer >= 0, not ${show(maxTokens)}`);
  for (const k of ['temperature', 'topK', 'topP']) {
    if (opts[k] !== undefined && typeof opts[k] !== 'number') throw new WfError('WF_ERR_ARG', `${k} must be a number, not ${show(opts[k])}`);
  }
  // the core's top_k is an int32 (and checks its range): 1e12 would reach it as -727379968
  // and 2.5 as 2, so what int32 cannot hold is refused here, as given
  const topK = opts.topK ?? GENERATE_DEFAULTS.topK;
  if (!Number.isInteger(topK) || topK < -0x80000000 || topK > 0x7fffffff) {
    throw new WfError('WF_ERR_ARG', `topK must be an integer >= 0 (0 = off), not ${show(topK)}`);
  }
  const stops = [].concat(opts.stop ?? []).filter((s) => s.length > 0);
  const signal = opts.signal;
  const clock = yielder(yieldInterval(opts.yieldMs ?? GENERATE_DEFAULTS.yieldMs));
  throwIfAborted(signal);
  // a tokenizer with a BOS (llama2.c, Llama's tokenizer.json) starts the prompt with it, as
  // its models were trained; without one an empty prompt is "\n"
  const bos = tokenizer.bos;
  const ids = bos === null ? tokenizer.encode(prompt.length ? prompt : '\n') : Int32Array.from([bos, ...tokenizer.encode(prompt)]);
  warnUnknown(tokenizer, prompt, ids, opts.onWarning, 'prompt');
  // the core samples only the tokenizer's ids and writes each token's text: the bytes it adds
  // after the token before (which a decoder that strips a text's first space, and llama2.c's
  // space after BOS, need to see); a character split across tokens waits in the decoder
  const sampling = rt.putSampling({
    temperature: opts.temperature ?? GENERATE_DEFAULTS.temperature,
    topK,
    topP: opts.topP ?? GENERATE_DEFAULTS.topP,
    noUnk: tokenizer.kind === 'char' && !(opts.allowUnknown ?? GENERATE_DEFAULTS.allowUnknown) ? 1 : 0,
  }, tokenizerHandle(tokenizer).handle);
  const seed = (opts.seed ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  core.busy = 'generation';
  let pending = ''; // text held back while it could still become a stop string
  const emit = (piece, count) => { opts.onToken?.(piece, count); return piece; };
  try {
    rt.genStart(h, ids, seed);
    for (let i = 0; i < maxTokens; i++) {
      throwIfAborted(signal);
      rt.genNext(core.live(), sampling); // the model may have been disposed meanwhile
      pending += decoder.decode(rt.genText(sampling), { stream: true });
      const hit = stops.map((s) => pending.indexOf(s)).filter((k) => k >= 0);
      if (hit.length) {
        const cut = Math.min(...hit);
        if (cut > 0) yield emit(pending.slice(0, cut), i + 1);
        pending = '';
        return;
      }
      // release all but the longest suffix that starts some stop string
      const keep = heldBack(pending, stops);
      if (pending.length > keep) {
        const out = pending.slice(0, pending.length - keep);
        pending = pending.slice(pending.length - keep);
        yield emit(out, i + 1);
      }
      if (clock.due) await clock.yield();
    }
    pending += decoder.decode();
    if (pending) yield emit(pending, maxTokens);
  } finally {
    rt.free(sampling);
    if (core.h) core.busy = null;
  }
}
