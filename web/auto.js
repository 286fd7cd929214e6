// The size preset 'auto' (the page's default): the preset expected to reach the lowest
// held-out loss in the time the run is given, on this machine. Each preset's steps per second
// are measured once in a worker of their own (probe-worker.js) as soon as the page has its
// text, before the first click; a preset that cannot win in that time whatever its speed
// (mayWin: its curve's floor is above what a smaller one already reaches) is not measured, so
// baby's slow steps cost nothing on the default minute. The choice is the package's
// choosePreset, and the page says why in one line.
import { AUTO_PRESETS, DEFAULT_PRESET, choosePreset, expectedLoss, mayWin } from './pkg/src/js/index.js';
import * as fmt from './format.js';

const PROBE_SECONDS = 0.3; // per preset, after its warm-up step: a few steps of tiny, a dozen of micro
const PROBE_TEXT = 200_000; // characters sent to the probe (measurePresetSpeeds encodes at most these)

export class AutoPreset {
  constructor() {
    this.speeds = {};     // steps per second measured here, by preset
    this.probing = null;  // the measurement under way: a promise
    this.failed = null;   // why the machine could not be measured, or null
  }

  /** Measures the presets that could still win a run of `seconds` and are not measured yet;
   * resolves when they are (a failure is kept in `failed`, not thrown). */
  measure(text, seconds) {
    const todo = () => AUTO_PRESETS.filter((p) => !(p in this.speeds) && mayWin(p, { seconds, stepsPerSecond: this.speeds }));
    const run = async () => {
      while (!this.failed && todo().length) await this.probe(text, todo()[0]);
    };
    this.probing = (this.probing ?? Promise.resolve()).then(run);
    return this.probing;
  }

  /** One preset measured in a fresh worker, ended afterwards (its memory and threads freed). */
  probe(text, preset) {
    return new Promise((resolve) => {
      const worker = new Worker(new URL('./probe-worker.js', import.meta.url), { type: 'module' });
      const end = (failure) => {
        worker.terminate();
        if (failure) this.failed = failure;
        resolve();
      };
      worker.onmessage = ({ data }) => {
        if (data.error) end(data.error);
        else if (data.done) end(null);
        else this.speeds[data.preset] = data.stepsPerSecond;
      };
      worker.onerror = (e) => end(e.message || 'the measuring worker failed');
      worker.postMessage({ text: text.slice(0, PROBE_TEXT), presets: [preset], probeSeconds: PROBE_SECONDS });
    });
  }

  /** The choice for a run: {preset, why}. `seconds`: its time budget (null: a number of steps
   * or until stopped: nothing to choose for); `kind`: the tokenizer (the curves are of
   * character tokens). Waits for the measurement a time budget needs. */
  async choose(text, seconds, kind) {
    if (!seconds) return { preset: DEFAULT_PRESET, why: `auto: ${DEFAULT_PRESET}, the quickest to write words (auto chooses for a time: 1 or 5 minutes, not a number of steps)` };
    if (kind !== 'char') return { preset: DEFAULT_PRESET, why: `auto: ${DEFAULT_PRESET} (auto’s measured curves are for character tokens)` };
    await this.measure(text, seconds);
    if (this.failed || !Object.keys(this.speeds).length) return { preset: DEFAULT_PRESET, why: `auto: ${DEFAULT_PRESET} (this computer could not be measured: ${this.failed})` };
    const pick = choosePreset({ seconds, stepsPerSecond: this.speeds });
    return { preset: pick.preset, why: explain(pick, seconds, this.speeds) };
  }
}

/** Why a preset was chosen, in one line: "micro: in 1 min 00 s it reaches a lower loss here
 * than tiny, which would make only 640 steps (micro 2,400)". */
function explain(pick, seconds, speeds) {
  const time = seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}` : fmt.duration(seconds);
  const rank = (p) => AUTO_PRESETS.indexOf(p);
  const others = AUTO_PRESETS.filter((p) => p !== pick.preset).map((p) => {
    if (!(p in speeds)) return `${p}, which cannot do as well in that time at any speed (not measured)`;
    const steps = Math.floor(seconds * speeds[p]);
    return rank(p) > rank(pick.preset)
      ? `${p}, which would make only ${fmt.count(steps)} steps (expected loss ${expectedLoss(p, steps).toFixed(2)})`
      : `${p}, whose ${fmt.count(steps)} steps would reach ${expectedLoss(p, steps).toFixed(2)}`;
  });
  return `${pick.preset}: in ${time} it makes ${fmt.count(pick.steps)} steps here and reaches a lower expected loss `
    + `(${pick.loss.toFixed(2)}) than ${others.join('; or ')}.`;
}
