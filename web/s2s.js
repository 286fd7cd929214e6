// The seq2seq half of the page: an encoder-decoder in a Web Worker (the package's
// WorkerSeq2Seq) learns a string task (reverse or sort letters a-h) in seconds; then the
// user types an input and sees what the decoder writes and where its cross-attention looks.
import { checkConfig, createWorkerSeq2Seq } from './pkg/src/js/index.js';
import { LossChart } from './chart.js';
import { Heatmap } from './heatmap.js';
import { chosenMap, fillLayerHeads } from './attention.js';
import { FIELDS, fieldControl, labelOf, readField } from './fields.js';
import { LETTERS, MAX_LEN, TASKS, checkInput, taskData } from './tasks.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);
// the config fields the form sets, in its order, with its own defaults and bounds (their
// words: fields.js's LABELS, as the language model's form)
const SHAPE = {
  nLayer: { value: 1, min: 1, max: 8 },
  dModel: { value: 24, min: 4, max: 512, step: 4 },
  nHead: { value: 4, min: 1, max: 16 },
  dFF: { value: 48, min: 4, max: 2048, step: 4 },
};

export class Seq2SeqUI {
  constructor(app) {
    this.app = app;
    this.ws = null;
    this.task = null;   // the task the model was trained on
    this.from = null;   // the file the model was opened from (null: trained here)
    this.abort = null;
    this.map = null;
    this.decoding = false;
    this.chart = new LossChart($('s2s-chart'));
    this.heatmap = new Heatmap($('s2s-map'), $('s2s-readout'), { rowName: 'output', colName: 'input', label: 'Cross-attention map' });
    // the shape's controls, from the package's config table, go before the steps
    const before = $('s2s-steps').closest('label');
    for (const [k, o] of Object.entries(SHAPE)) before.before(fieldControl(FIELDS[k], { id: `s2s-${k}`, ...o }));
    const act = (doing, fn) => () => fmt.guard(this.app, doing, fn, () => this.refresh());
    $('s2s-train').addEventListener('click', act('Seq2seq training failed', () => this.train()));
    $('s2s-stop').addEventListener('click', () => this.abort?.abort());
    $('s2s-decode').addEventListener('click', act('Decoding failed', () => this.decode()));
    $('s2s-input').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !$('s2s-decode').disabled) $('s2s-decode').click(); });
    $('s2s-layer').addEventListener('change', () => this.drawMap());
    $('s2s-head').addEventListener('change', () => this.drawMap());
    this.refresh();
  }

  get training() { return this.abort !== null; }

  /** What replacing the model would lose, in words, or null (none, or one that never trained). */
  held() {
    if (!this.ws) return null;
    if (this.ws.step > 0) return `the seq2seq model trained for ${fmt.count(this.ws.step)} steps`;
    return this.from ? `the seq2seq model opened from ${this.from}` : null;
  }

  refresh() {
    $('s2s-train').disabled = this.training;
    $('s2s-stop').disabled = !this.training;
    $('s2s-decode').disabled = !this.ws || this.training || this.decoding;
    this.app.keepChanged();
  }

  readConfig() {
    const config = { context: MAX_LEN + 1, maxBeam: 4 };
    for (const k of Object.keys(SHAPE)) {
      const v = readField($(`s2s-${k}`), FIELDS[k]);
      if (v === undefined) throw new Error(`“${labelOf($(`s2s-${k}`))}” must be a whole number of at least 1`);
      config[k] = v;
    }
    const steps = Number($('s2s-steps').value), lr = Number($('s2s-lr').value), batchSize = Number($('s2s-batch').value);
    if (!Number.isInteger(steps) || steps < 1) throw new Error('“Steps” must be a whole number of at least 1');
    if (!(lr > 0)) throw new Error('the learning rate must be above 0');
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('“Batch size” must be a whole number of at least 1');
    return { config, steps, lr, batchSize };
  }

  async train() {
    const { config, steps, lr, batchSize } = this.readConfig();
    const bad = await checkConfig({ ...config, arch: 'encoder-decoder', vocabSize: LETTERS.length + 3 }, { threads: 1 });
    if (bad) throw new Error(`these settings do not make a model: ${bad.message}`);
    // a trained or opened model is replaced only after a yes
    if (!this.app.mayReplace(this.held(), 'a new one')) {
      $('s2s-status').textContent = `${$('s2s-status').textContent.replace(/ Not replaced: .*$/, '')} Not replaced: the model you have stays.`;
      return;
    }
    const task = $('s2s-task').value;
    const { train, test } = taskData(task);
    this.abort = new AbortController();
    this.refresh();
    this.ws?.dispose();
    this.ws = null;
    this.map = null;
    this.heatmap.clear('nothing shown yet');
    $('s2s-output').textContent = '';
    $('s2s-verdict').textContent = '';
    $('s2s-accuracy').textContent = '–';
    this.chart.clear();
    this.chart.setTarget(steps);
    $('s2s-status').textContent = 'Starting the model’s worker…';
    try {
      this.ws = await createWorkerSeq2Seq(config, { texts: [LETTERS] });
      this.task = task;
      this.from = null;
      this.app.threads(this.ws.snapshot.threads ?? 1, this.ws.snapshot.simd);
      $('s2s-params').textContent = fmt.count(this.ws.paramCount);
      this.fillSelects();
      $('s2s-status').textContent = `Training to ${TASKS[task].name} strings: ${fmt.count(steps)} steps of ${batchSize} pairs…`;
      const t0 = performance.now();
      let stopped = false;
      try {
        await this.ws.train(train, {
          steps, lr, batchSize, signal: this.abort.signal,
          onProgress: (p) => {
            this.chart.addTrain(p.step, p.loss);
            $('s2s-step').textContent = `${fmt.count(p.step)} / ${fmt.count(p.steps)}`;
            $('s2s-loss').textContent = fmt.loss(p.loss);
          },
        });
      } catch (e) {
        if (e.name !== 'AbortError') throw e;
        stopped = true;
      }
      const info = await this.ws.info();
      $('s2s-step').textContent = fmt.count(info.step);
      const seconds = (performance.now() - t0) / 1000;
      $('s2s-status').textContent = `${stopped ? 'Stopped' : 'Trained'} after ${fmt.count(info.step)} steps in ${fmt.duration(seconds)}; ` +
        `decoding the ${test.length} held-out words…`;
      const acc = await this.ws.accuracy(test);
      $('s2s-accuracy').textContent = `${(100 * acc).toFixed(1)}% of ${test.length} words never seen in training`;
      $('s2s-status').textContent = `${stopped ? 'Stopped' : 'Trained'} after ${fmt.count(info.step)} steps in ${fmt.duration(seconds)}. Type an input below.`;
    } finally {
      this.abort = null;
      this.refresh();
    }
    await this.decode();
  }

  /** Uses a WorkerSeq2Seq loaded from a file (the task is unknown: answers are not judged). */
  adopt(ws, fileName) {
    this.abort?.abort();
    this.ws?.dispose();
    this.ws = ws;
    this.task = null;
    this.from = fileName;
    this.chart.clear();
    this.map = null;
    this.heatmap.clear('nothing shown yet');
    const cfg = ws.config;
    for (const k of Object.keys(SHAPE)) $(`s2s-${k}`).value = cfg[k];
    $('s2s-params').textContent = fmt.count(ws.paramCount);
    $('s2s-step').textContent = fmt.count(ws.step);
    this.app.threads(ws.snapshot.threads ?? 1, ws.snapshot.simd);
    for (const id of ['s2s-loss', 's2s-accuracy']) $(id).textContent = '–';
    $('s2s-output').textContent = '';
    $('s2s-verdict').textContent = '';
    this.fillSelects();
    $('s2s-status').textContent = `Opened ${fileName}: an encoder-decoder of ${fmt.count(ws.paramCount)} parameters, ${fmt.count(ws.step)} steps.`;
    this.refresh();
  }

  fillSelects() {
    fillLayerHeads($('s2s-layer'), $('s2s-head'), this.ws.config);
  }

  async decode() {
    if (!this.ws) return;
    const input = $('s2s-input').value.trim();
    const problem = checkInput(input);
    if (problem) {
      // the last answer belongs to another input: it goes with the new message
      $('s2s-output').textContent = '';
      $('s2s-verdict').textContent = '';
      $('s2s-decode-status').textContent = `Cannot decode “${input}”: ${problem}.`;
      return;
    }
    this.decoding = true;
    this.refresh();
    try {
      const beam = Number($('s2s-beam').value);
      const output = await this.ws.translate(input, { beam, maxTokens: MAX_LEN + 1 });
      this.map = await this.ws.crossAttention(input, output);
      this.map.input = input;
      this.map.output = output;
      $('s2s-output').textContent = output || '(nothing)';
      if (this.task) {
        const want = TASKS[this.task].answer(input);
        const right = output === want;
        $('s2s-verdict').textContent = right ? '✓ correct' : `✗ the answer is ${want}`;
        $('s2s-verdict').className = right ? 'good' : 'bad';
      } else {
        $('s2s-verdict').textContent = '';
      }
      $('s2s-decode-status').textContent = `Decoded “${input}” ${beam === 1 ? 'greedily' : `with a beam of ${beam}`}.`;
      this.drawMap();
    } finally {
      this.decoding = false;
      this.refresh();
    }
  }

  drawMap() {
    const m = this.map;
    if (!m) return;
    const { values, caption } = chosenMap(m, $('s2s-layer'), $('s2s-head'), m.T * m.S);
    this.heatmap.show({ rows: [...m.output, '⟨end⟩'], cols: [...m.input], values, caption: `${caption}, “${m.input}” to “${m.output}”` });
  }
}
