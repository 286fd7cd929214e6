// Attention maps on the page: the language model's panel (which earlier tokens each token
// of a text looks at, in one layer and head) and what the seq2seq half's cross-attention
// map shares with it: the layer and head choices, and a map's values for one head or the
// mean of all.
import { Heatmap } from './heatmap.js';

const $ = (id) => document.getElementById(id);

/** Fills the layer and head selects for a model of cfg (the last layer, the mean of heads). */
export function fillLayerHeads(layerSelect, headSelect, cfg) {
  layerSelect.replaceChildren(...Array.from({ length: cfg.nLayer }, (_, l) => new Option(`${l + 1} of ${cfg.nLayer}`, String(l))));
  layerSelect.value = String(cfg.nLayer - 1);
  headSelect.replaceChildren(new Option('mean of all heads', 'mean'),
    ...Array.from({ length: cfg.nHead }, (_, h) => new Option(`${h + 1} of ${cfg.nHead}`, String(h))));
}

/** One layer's map [nHead * n] as the selects choose it: {values [n], caption}. */
export function chosenMap(maps, layerSelect, headSelect, n) {
  const l = Number(layerSelect.value), hv = headSelect.value;
  const layer = maps.layers[Math.min(l, maps.layers.length - 1)];
  let values;
  if (hv === 'mean') {
    values = new Float32Array(n);
    for (let h = 0; h < maps.nHead; h++) for (let i = 0; i < n; i++) values[i] += layer[h * n + i] / maps.nHead;
  } else {
    values = layer.subarray(Number(hv) * n, (Number(hv) + 1) * n);
  }
  return { values, caption: `layer ${l + 1}, ${hv === 'mean' ? 'mean of all heads' : `head ${Number(hv) + 1}`}` };
}

export class AttentionPanel {
  /** model(): the WorkerModel; checkpoint(fn): runs fn with the model idle */
  constructor(model, checkpoint) {
    this.model = model;
    this.checkpoint = checkpoint;
    this.heatmap = new Heatmap($('att-map'), $('att-readout'), { tip: $('att-tip'), legend: $('att-legend'), legendMax: $('att-legend-max') });
    this.maps = null; // the last selfAttention result
    $('att-layer').addEventListener('change', () => this.draw());
    $('att-head').addEventListener('change', () => this.draw());
  }

  /** A new model: no map, its layers and heads to choose from. */
  setModel(cfg) {
    this.maps = null;
    this.heatmap.clear('nothing shown yet');
    this.at(null);
    $('att-status').textContent = 'Drawn as soon as training starts.';
    fillLayerHeads($('att-layer'), $('att-head'), cfg);
    $('att-head').value = '0'; // one head: what a head does is clearer than the mean of all
  }

  /** Computes and draws the map of the panel's text. whenReady: while training, quietly
   * nothing if the model has no tokenizer yet (it learns one with its first step). */
  async show({ whenReady = false } = {}) {
    const text = $('att-text').value;
    if (!text.length) {
      if (whenReady) return;
      throw new Error('type a text to look at');
    }
    if (!whenReady) $('att-status').textContent = 'Computing…';
    let all = 0, step = 0;
    const wm = this.model();
    this.busy = true;
    try {
      const maps = await this.checkpoint(async () => {
        if (wm !== this.model() || (whenReady && !wm.snapshot.tokenizer)) return null;
        all = (await wm.encode(text)).length;
        step = wm.step; // the weights the map is of: the model is idle here
        return wm.selfAttention(text);
      });
      if (!maps) return;
      this.maps = maps;
    } finally {
      this.busy = false;
    }
    this.at(step);
    const cut = this.maps.T < all ? ` (the last ${this.maps.T} of its ${all}: the model’s context)` : '';
    const said = `${this.maps.T} tokens${cut}.`;
    if ($('att-status').textContent !== said) $('att-status').textContent = said; // a live region: live redraws say nothing new
    this.draw();
  }

  /** Names the step of the weights the map shows (null: no map), in words and in data-step. */
  at(step) {
    $('att-at').textContent = step === null ? '' : `The model at step ${step.toLocaleString('en-US')}:`;
    if (step === null) delete $('att-map').dataset.step;
    else $('att-map').dataset.step = String(step);
  }

  draw() {
    const m = this.maps;
    if (!m) return;
    const { values, caption } = chosenMap(m, $('att-layer'), $('att-head'), m.T * m.T);
    this.heatmap.show({ rows: m.tokens, cols: m.tokens, values, caption });
  }
}
