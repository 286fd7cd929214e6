// The language model's generation panel: a prompt and the sampling settings, the text
// streamed in as the worker writes it, and a stop button.
import { GENERATE_DEFAULTS } from './pkg/src/js/index.js';
import { numberIn } from './fields.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class GenerationPanel {
  /** model(): the WorkerModel to generate with; changed(): the buttons may change */
  constructor(model, changed) {
    this.model = model;
    this.changed = changed;
    this.abort = null;
  }

  get busy() { return this.abort !== null; }

  /** The form's sampling settings (an empty field: the package's default), or an Error in words. */
  options() {
    const get = (id, name) => numberIn($(id)) ?? GENERATE_DEFAULTS[name];
    const maxTokens = get('gen-max', 'maxTokens'), temperature = get('gen-temperature', 'temperature');
    const topK = get('gen-topk', 'topK'), topP = get('gen-topp', 'topP');
    for (const [name, v, ok] of [['Tokens to generate', maxTokens, Number.isInteger(maxTokens) && maxTokens >= 1],
      ['Temperature', temperature, temperature >= 0], ['Top-k', topK, Number.isInteger(topK) && topK >= 0], ['Top-p', topP, topP > 0 && topP <= 1]]) {
      if (!ok) throw new Error(`“${name}” cannot be ${v}`);
    }
    let seed = numberIn($('gen-seed'));
    if (seed === undefined) seed = crypto.getRandomValues(new Uint32Array(1))[0];
    else if (!Number.isInteger(seed) || seed < 0) throw new Error(`the seed must be a whole number of at least 0, not ${seed}`);
    return { maxTokens, temperature, topK, topP, seed };
  }

  async generate() {
    const wm = this.model();
    if (!wm || this.busy) return;
    const prompt = $('gen-prompt').value;
    const opts = this.options();
    const out = $('gen-output');
    out.textContent = '';
    const shown = document.createElement('span');
    shown.className = 'prompt';
    shown.textContent = prompt;
    const text = document.createTextNode('');
    out.append(shown, text);
    this.abort = new AbortController();
    this.changed();
    $('gen-status').textContent = `Generating with seed ${opts.seed}…`;
    let tokens = 0, note = '';
    // a prompt character the model does not know is said with the result, not in the console
    const onWarning = (message) => { note = ` Note: ${message}`; };
    try {
      for await (const piece of wm.generate(prompt, { ...opts, signal: this.abort.signal, onWarning, onToken: (_, n) => { tokens = n; } })) {
        text.data += piece;
      }
      $('gen-status').textContent = `Generated ${fmt.count(tokens)} tokens with seed ${opts.seed}.${note}`;
    } catch (e) {
      if (e.name !== 'AbortError') throw e;
      $('gen-status').textContent = `Stopped after ${fmt.count(tokens)} tokens (seed ${opts.seed}).${note}`;
    } finally {
      this.abort = null;
      this.changed();
    }
  }

  /** A new model: the text and seed of the one before are not its. */
  forget() {
    $('gen-output').textContent = '';
    $('gen-status').textContent = '';
  }

  /** The status when nothing is being generated: what Generate can do now (ready: it can run;
   * has: there is a model, busy training), unless it tells the last generation's result. */
  idle(ready, has) {
    const line = $('gen-status');
    if (ready && /^(Generated|Stopped after)/.test(line.textContent)) return;
    const now = ready ? 'Ready to generate.' : has ? 'Generate is available once training pauses or ends.'
      : 'Train a model (or open one) to generate text.';
    if (line.textContent !== now) line.textContent = now;
  }

  /** Stops a generation, if one runs, and waits until it has. */
  async stop() {
    this.abort?.abort();
    while (this.busy) await sleep(20);
  }
}
