// The loss chart, drawn by hand on a canvas: training loss (each report, and a running
// average), validation loss (dots), axes with round ticks. Redraws at most once per
// animation frame and whenever the canvas changes size.

import { fitCanvas } from './format.js';

const COLORS = { grid: '#d9dde3', axis: '#545b66', text: '#1c1f24', raw: '#9db8e3', train: '#1f5fbf', val: '#c2410c', guess: '#6b21a8' };
// earlier runs of this tab, faded, each its own shade
const PAST = ['#8a94a6', '#b08a6a', '#7aa37a'];
const MAX_PAST = 3;

/** A round step near range / n: 1, 2 or 5 times a power of ten. */
function niceStep(range, n) {
  const raw = range / Math.max(1, n);
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  const f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

export class LossChart {
  /** canvas: the element; label: what the aria-label starts with; legend: a list the earlier
   * runs are named in, under the canvas (a whole label, however long, wraps there). */
  constructor(canvas, { label = 'Loss chart', legend = null } = {}) {
    this.canvas = canvas;
    this.label = label;
    this.legend = legend;
    this.train = []; // [step, loss]
    this.val = [];   // [step, loss]
    this.xMax = 0;
    this.guess = null; // the loss of guessing uniformly over the vocabulary: ln V
    this.past = [];    // earlier runs: {label, train (a running average, thinned), val}
    this.pending = false;
    new ResizeObserver(() => this.redraw()).observe(canvas);
  }

  /** Keeps the current run, faded, under `label` (the newest MAX_PAST stay), then clears. */
  keep(label) {
    if (this.train.length > 1) {
      let avg = null;
      const smooth = this.train.map(([s, v]) => [s, (avg = avg === null ? v : 0.9 * avg + 0.1 * v)]);
      const every = Math.max(1, Math.floor(smooth.length / 500));
      const final = this.val.at(-1)?.[1];
      this.past.push({
        label: `${label}${Number.isFinite(final) ? `, validation ${final.toFixed(3)}` : ''}`,
        train: smooth.filter((_, i) => i % every === 0 || i === smooth.length - 1), val: this.val,
      });
      if (this.past.length > MAX_PAST) this.past.shift();
      this.listPast();
    }
    this.clear();
  }

  /** The earlier runs in the legend under the canvas, newest first, each with its line's colour. */
  listPast() {
    if (!this.legend) return;
    this.legend.replaceChildren(...this.past.map((r, k) => {
      const li = document.createElement('li');
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = PAST[k % PAST.length]; // CSSOM, which the page's CSP allows
      li.append(swatch, `earlier: ${r.label}`);
      return li;
    }).reverse());
    this.legend.hidden = !this.past.length;
  }

  /** Forgets the current run (a new model); earlier runs stay. */
  clear() {
    this.train = [];
    this.val = [];
    this.xMax = 0;
    this.redraw();
  }

  /** Forgets the points after `step`: the steps a diverged run went back over. */
  undo(step) {
    this.train = this.train.filter(([s]) => s <= step);
    this.val = this.val.filter(([s]) => s <= step);
    this.redraw();
  }

  addTrain(step, loss) {
    if (!Number.isFinite(loss)) return;
    this.train.push([step, loss]);
    // long runs: halve the density instead of growing without bound
    if (this.train.length > 20000) this.train = this.train.filter((_, i) => i % 2 === 0 || i === this.train.length - 1);
    this.redraw();
  }

  addVal(step, loss) {
    if (Number.isFinite(loss) && this.val.at(-1)?.[0] !== step) this.val.push([step, loss]);
    this.redraw();
  }

  /** The "random guessing" line: ln(vocabulary size), what a model that knows nothing scores. */
  setGuess(loss) {
    this.guess = Number.isFinite(loss) ? loss : null;
    this.redraw();
  }

  /** The step the x axis runs to (the run's last step). */
  setTarget(step) {
    this.xMax = step;
    this.redraw();
  }

  /** The data as a plain object, for autosave; restore() takes it back. */
  snapshot() { return { train: this.train, val: this.val, xMax: this.xMax }; }

  restore(s) {
    this.train = s?.train ?? [];
    this.val = s?.val ?? [];
    this.xMax = s?.xMax ?? 0;
    this.redraw();
  }

  redraw() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  draw() {
    const { g, W, H } = fitCanvas(this.canvas);
    g.font = '12px system-ui, sans-serif';
    this.updateLabel();
    const all = this.train.concat(this.val, ...this.past.map((r) => r.train.concat(r.val)));
    if (!all.length) {
      g.fillStyle = COLORS.axis;
      g.textAlign = 'center';
      g.fillText('The loss appears here once training starts.', W / 2, H / 2);
      return;
    }
    // axes ranges: x from 0 to the run's end; y over the data, with a little room
    let xMax = Math.max(this.xMax, 1), yMin = Infinity, yMax = -Infinity;
    for (const [s, v] of all) {
      xMax = Math.max(xMax, s);
      yMin = Math.min(yMin, v);
      yMax = Math.max(yMax, v);
    }
    if (this.guess !== null) yMax = Math.max(yMax, this.guess);
    if (yMax - yMin < 1e-3) { yMin -= 0.5; yMax += 0.5; }
    const pad = (yMax - yMin) * 0.05;
    yMin = Math.max(0, yMin - pad);
    yMax += pad;
    const L = 44, R = 12, T = 10, B = 28;
    const X = (s) => L + (s / xMax) * (W - L - R);
    const Y = (v) => T + (1 - (v - yMin) / (yMax - yMin)) * (H - T - B);

    // grid and tick labels
    g.strokeStyle = COLORS.grid;
    g.fillStyle = COLORS.text;
    g.lineWidth = 1;
    const ys = niceStep(yMax - yMin, 5);
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let v = Math.ceil(yMin / ys) * ys; v <= yMax; v += ys) {
      g.beginPath();
      g.moveTo(L, Y(v));
      g.lineTo(W - R, Y(v));
      g.stroke();
      g.fillText(v.toFixed(ys < 0.1 ? 2 : 1), L - 6, Y(v));
    }
    const xs = niceStep(xMax, Math.max(2, Math.floor((W - L - R) / 80)));
    g.textAlign = 'center';
    g.textBaseline = 'top';
    for (let s = 0; s <= xMax; s += xs) {
      g.beginPath();
      g.moveTo(X(s), T);
      g.lineTo(X(s), H - B);
      g.stroke();
      g.fillText(String(s), X(s), H - B + 6);
    }
    g.strokeStyle = COLORS.axis;
    g.beginPath();
    g.moveTo(L, T);
    g.lineTo(L, H - B);
    g.lineTo(W - R, H - B);
    g.stroke();

    // training loss: every report thin, a running average bold (at most ~2 points a pixel)
    const every = Math.max(1, Math.floor(this.train.length / (2 * (W - L - R))));
    const line = (points, color, width) => {
      g.strokeStyle = color;
      g.lineWidth = width;
      g.beginPath();
      points.forEach(([s, v], i) => (i ? g.lineTo(X(s), Y(v)) : g.moveTo(X(s), Y(v))));
      g.stroke();
    };
    // earlier runs first, faded, under the current one
    g.globalAlpha = 0.6;
    this.past.forEach((r, k) => {
      line(r.train, PAST[k % PAST.length], 1.5);
      if (r.val.length) line(r.val, PAST[k % PAST.length], 1);
    });
    g.globalAlpha = 1;
    const thin = this.train.filter((_, i) => i % every === 0 || i === this.train.length - 1);
    line(thin, COLORS.raw, 1);
    let avg = null;
    const smooth = this.train.map(([s, v]) => [s, (avg = avg === null ? v : 0.9 * avg + 0.1 * v)]);
    line(smooth.filter((_, i) => i % every === 0 || i === smooth.length - 1), COLORS.train, 2);

    // random guessing: a dashed line at ln V
    if (this.guess !== null) {
      g.strokeStyle = COLORS.guess;
      g.lineWidth = 1;
      g.setLineDash([6, 4]);
      g.beginPath();
      g.moveTo(L, Y(this.guess));
      g.lineTo(W - R, Y(this.guess));
      g.stroke();
      g.setLineDash([]);
      g.fillStyle = COLORS.guess;
      g.textAlign = 'left';
      g.textBaseline = 'bottom';
      g.fillText(`random guessing (ln ${Math.round(Math.exp(this.guess))} = ${this.guess.toFixed(2)})`, L + 6, Y(this.guess) - 2);
    }

    // validation loss: dots joined by a faint line
    if (this.val.length) {
      line(this.val, COLORS.val, 1);
      g.fillStyle = COLORS.val;
      for (const [s, v] of this.val) {
        g.beginPath();
        g.arc(X(s), Y(v), 3, 0, 2 * Math.PI);
        g.fill();
      }
    }

    // legend: at the top right, under the random-guessing line (its label is above it, at the left)
    const top = this.guess !== null ? Math.max(T, Y(this.guess) + 4) : T;
    g.textAlign = 'left';
    g.textBaseline = 'middle';
    const items = [['training', COLORS.train], ...(this.val.length ? [['validation', COLORS.val]] : [])];
    let x = W - R - 190;
    for (const [name, color] of items) {
      g.fillStyle = color;
      g.fillRect(x, top + 8, 14, 3);
      g.fillStyle = COLORS.text;
      g.fillText(name, x + 18, top + 10);
      x += 95;
    }
  }

  updateLabel() {
    const last = this.train.at(-1), val = this.val.at(-1);
    let text = `${this.label}: no training yet`;
    if (last) {
      text = `${this.label}: step ${last[0]}${this.xMax ? ` of ${this.xMax}` : ''}, training loss ${last[1].toFixed(3)}` +
        (this.train.length > 1 ? ` (first ${this.train[0][1].toFixed(3)})` : '') +
        (val ? `, validation loss ${val[1].toFixed(3)} at step ${val[0]}` : '') +
        (this.guess !== null ? `; random guessing scores ${this.guess.toFixed(2)}` : '') +
        (this.past.length ? `; ${this.past.length} earlier run${this.past.length > 1 ? 's' : ''} of this tab: ${this.past.map((r) => r.label).join('; ')}` : '');
    }
    this.canvas.setAttribute('aria-label', text);
  }
}
