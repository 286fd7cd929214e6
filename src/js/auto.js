// preset: 'auto' (issue 28, a model size chosen for the time): the preset expected to reach the
// lowest held-out loss in a time budget, from this machine's steps per second of each preset and
// the bench's loss after a whole run of N steps (src/js/auto-curves.js, generated).
import { WfError } from './errors.js';
import { AUTO_CURVES } from './auto-curves.js';

/** The presets 'auto' chooses among, smallest first (the smaller wins a tie). */
export const AUTO_PRESETS = ['micro', 'tiny', 'baby'];

/** The held-out loss a preset is expected to reach after `steps` steps: the curve's points
 * joined linearly in log(steps); before its first point the first segment's slope carries on
 * (fewer steps, higher loss); past its last point its last loss (no credit for steps the
 * bench did not measure). */
export function expectedLoss(preset, steps) {
  const c = AUTO_CURVES[preset];
  if (!c) throw new WfError('WF_ERR_ARG', `no loss curve for preset ${preset}`);
  if (!(steps > 0)) return Infinity;
  const x = Math.log(steps);
  if (steps >= c[c.length - 1][0]) return c[c.length - 1][1];
  let i = 0;
  while (i < c.length - 2 && steps > c[i + 1][0]) i++;
  const [s0, l0] = c[i], [s1, l1] = c[i + 1];
  return l0 + (l1 - l0) * (x - Math.log(s0)) / (Math.log(s1) - Math.log(s0));
}

/** The lowest held-out loss a preset is expected to reach however many steps it makes (its
 * curve's last point: expectedLoss gives no credit past it). */
export function lossFloor(preset) {
  const c = AUTO_CURVES[preset];
  if (!c) throw new WfError('WF_ERR_ARG', `no loss curve for preset ${preset}`);
  return Math.min(...c.map(([, l]) => l));
}

/** Whether `preset` could be chosen for `seconds` against the speeds measured so far: not when
 * one of them already expects a loss at or below its floor (it cannot win at any speed), so
 * its probe (baby's steps take seconds) can be left out. */
export function mayWin(preset, { seconds, stepsPerSecond }) {
  const floor = lossFloor(preset);
  return !Object.entries(stepsPerSecond).some(([p, sps]) => sps > 0 && p !== preset && expectedLoss(p, Math.floor(seconds * sps)) <= floor);
}

/** Chooses the preset for a time budget: `seconds`, and `stepsPerSecond` as { micro, tiny,
 * baby } measured on this machine (each at its preset's batch size). Returns { preset, steps,
 * loss, why } for the preset with the lowest expected held-out loss; presets without a speed
 * are left out. */
export function choosePreset({ seconds, stepsPerSecond } = {}) {
  if (!(typeof seconds === 'number' && seconds > 0 && Number.isFinite(seconds))) throw new WfError('WF_ERR_ARG', `choosePreset: seconds must be a positive number, not ${seconds}`);
  if (!stepsPerSecond || typeof stepsPerSecond !== 'object') throw new WfError('WF_ERR_ARG', 'choosePreset: stepsPerSecond must be an object such as { micro: 40, tiny: 8, baby: 0.5 }');
  const options = AUTO_PRESETS.filter((p) => stepsPerSecond[p] > 0).map((preset) => {
    const steps = Math.floor(seconds * stepsPerSecond[preset]);
    return { preset, steps, loss: expectedLoss(preset, steps) };
  });
  if (!options.length) throw new WfError('WF_ERR_ARG', 'choosePreset: no preset has a positive steps per second');
  const best = options.reduce((a, b) => (b.loss < a.loss ? b : a));
  const why = options.map((o) => `${o.preset} ${o.steps} steps -> ${o.loss.toFixed(3)}`).join(', ');
  return { ...best, why: `${seconds} s: ${why} (expected held-out loss)` };
}

/** Measures each preset's steps per second on this machine for choosePreset: a model of each
 * (built from `text` with `opts`, e.g. { tokenizer, threads }) begins one run at its preset's
 * batch size, takes a warm-up step (it allocates the training state), then trains for about `probeSeconds` of the run's own
 * clock (the one a time budget spends; validation is off it); the models are disposed. One
 * run, not a train() call per step: each call would begin a run (the text's ids crossing
 * into the module, the split), which costs a fast preset as much as its steps. `api` is the
 * package (its createModel). Returns { micro, tiny, baby } in steps per second. */
export async function measurePresetSpeeds(api, text, { probeSeconds = 1, presets = AUTO_PRESETS, ...opts } = {}) {
  const out = {};
  for (const preset of presets) {
    const model = await api.createModel({ preset }, { text, ...opts });
    try {
      const ids = model.tokenizer.encode(text.slice(0, 200000));
      model.startRun(ids, { seconds: 3600, batchSize: api.PRESETS[preset].batchSize, evalInterval: 0, valFraction: 0.1 });
      await model.continueRun({ steps: 1, yieldMs: Infinity });
      const r = await model.continueRun({ seconds: probeSeconds, yieldMs: Infinity });
      out[preset] = r.steps / r.trainSeconds;
    } finally {
      model.dispose();
    }
  }
  return out;
}

/** createModel's config when it asks for 'auto' ('auto' or {preset: 'auto', ...}): the config
 * with the preset chosen for opts.seconds on this machine (measured with opts' text, tokenizer
 * and load options; a preset that cannot win against those already measured is not), and the
 * choice ({preset, steps, loss, why, stepsPerSecond}); any other
 * config as given, with choice null. `seconds` goes with 'auto' only. */
export async function resolveAuto(api, config, { seconds, ...opts } = {}) {
  const auto = config === 'auto' || (config !== null && typeof config === 'object' && config.preset === 'auto');
  if (!auto) {
    if (seconds !== undefined) throw new WfError('WF_ERR_ARG', 'the seconds option goes with the preset \'auto\' (the time the model is chosen for); train() takes the run\'s own seconds');
    return { config, choice: null };
  }
  if (typeof opts.text !== 'string' || !opts.text) throw new WfError('WF_ERR_ARG', 'preset \'auto\' measures each preset on the text it will train on: give it as the text option');
  if (!(typeof seconds === 'number' && seconds > 0 && Number.isFinite(seconds))) {
    throw new WfError('WF_ERR_ARG', `preset 'auto' chooses for a time budget: give seconds (a positive number), not ${seconds}`);
  }
  // smallest first; a preset that cannot win at any speed against those measured is left out
  // (at 5 minutes, baby: its probe alone would take seconds)
  const stepsPerSecond = {};
  for (const preset of AUTO_PRESETS) {
    if (mayWin(preset, { seconds, stepsPerSecond })) Object.assign(stepsPerSecond, await measurePresetSpeeds(api, opts.text, { ...opts, presets: [preset] }));
  }
  const choice = { ...choosePreset({ seconds, stepsPerSecond }), stepsPerSecond };
  return { config: config === 'auto' ? choice.preset : { ...config, preset: choice.preset }, choice };
}
