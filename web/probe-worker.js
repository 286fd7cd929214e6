// The preset 'auto' measures this machine in a worker of its own (web/auto.js), so the page
// and the model's worker stay free: it receives {text, presets, probeSeconds}, measures each
// preset's steps per second with the package's measurePresetSpeeds (a model of each, trained
// for a moment at its preset's batch size, then disposed) and answers {preset, stepsPerSecond}
// per preset, then {done: true}; a failure is answered as {error}.
import { PRESETS, createModel, measurePresetSpeeds } from './pkg/src/js/index.js';

self.onmessage = async ({ data }) => {
  try {
    for (const preset of data.presets) {
      const speeds = await measurePresetSpeeds({ createModel, PRESETS }, data.text, { presets: [preset], probeSeconds: data.probeSeconds, tokenizer: 'char' });
      self.postMessage({ preset, stepsPerSecond: speeds[preset] });
    }
    self.postMessage({ done: true });
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e) });
  }
};
