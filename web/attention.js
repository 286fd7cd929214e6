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

/** A short piece of the model's own held-out text (the last `share` of `text`, what its run
 * validates on): some 24 to 40 characters from a word's start, on one line. */
export function heldOutPiece(text, share = 0.1) {
  const tail = text.slice(Math.floor(text.length * (1 - share)));
  const lines = tail.split('\n').map((l) => l.trim()).filter((l) => l.length >= 12);
  const line = lines.find((l) => l.length >= 24) ?? lines[0] ?? tail.trim();
  const words = line.split(/\s+/);
  let piece = '';
  for (const w of words) {
    if (piece.length >= 24 || (piece.length + w.length + 1 > 40 && piece)) break;
    piece = piece ? `${piece} ${w}` : w;
  }
  return piece.slice(0, 40);
}

export class AttentionPanel {
  /** model(): the WorkerModel; checkpoint(fn): runs fn with the model idle; text(): the text
   * the model trains on (the attention text comes from it when the model cannot read the one given) */
  constructor(model, checkpoint, text = () => '') {
    this.model = model;
    this.checkpoint = checkpoint;
    this.text = text;
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
    let text = $('att-text').value;
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
        text = await this.readable(wm, text);
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
    const from = this.swapped ? ` The text is from the model’s own validation text: it cannot read “${this.swapped}”.` : '';
    this.swapped = null;
    const said = `${this.maps.T} tokens${cut}.${from}`;
    if ($('att-status').textContent !== said) $('att-status').textContent = said; // a live region: live redraws say nothing new
    this.draw();
  }

  /** The text if the model reads it back as it is; else (characters its tokenizer lacks, which
   * the map would show as "\uFFFD") a piece of its own held-out text, put in the field and said. */
  async readable(wm, text) {
    const fits = async (t) => (await wm.decode(await wm.encode(t))) === t;
    if (await fits(text)) return text;
    const piece = heldOutPiece(this.text(), wm.snapshot.run?.valFraction || 0.1);
    if (!piece || !(await fits(piece))) return text;
    $('att-text').value = piece;
    this.swapped = text;
    return piece;
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
