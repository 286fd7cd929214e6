// The loss chart, drawn by hand on a canvas: training loss (each report, and a running
// average), validation loss (dots), axes with round ticks. Redraws at most once per
// animation frame and whenever the canvas changes size. Runs are drawn in bits per character
// against training time (compare.js), so the current run and the earlier ones of the tab,
// whatever their text or tokenizer, share the axes; points without a time or a conversion (a
// history saved by an older page) put the whole chart back on loss per token against step.

import { duration, fitCanvas } from './format.js';
import { bitsPerChar, runLabel, whyBiggerWorse } from './compare.js';

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
  constructor(canvas, { label = 'Loss chart', legend = null, why = null, caption = null } = {}) {
    this.canvas = canvas;
    this.label = label;
    this.legend = legend;
    this.why = why;         // where a bigger model's worse loss in the same time is explained
    this.caption = caption; // the chart's caption: it names the axes drawn
    this.train = []; // [step, loss per token, seconds of training, bits per character]
    this.val = [];   // the same
    this.xMax = 0;
    this.tMax = 0;     // the training time the run goes to (s; 0: not known)
    this.guess = null; // the loss of guessing uniformly over the vocabulary: ln V
    this.perChar = null; // the current run's tokens a character {train, val}
    this.info = null;  // the current run, for its name (compare.js runInfo)
    this.past = [];    // earlier runs: {info, train (a running average, thinned), val}
    this.pending = false;
    new ResizeObserver(() => this.redraw()).observe(canvas);
  }

  /** Keeps the current run, faded, named by `info` (the newest MAX_PAST stay), then clears. */
  keep(info) {
    if (this.train.length > 1) {
      const smooth = runningAverage(this.train);
      const every = Math.max(1, Math.floor(smooth.length / 500));
      this.past.push({
        info: this.named(info), train: smooth.filter((_, i) => i % every === 0 || i === smooth.length - 1), val: this.val,
      });
      if (this.past.length > MAX_PAST) this.past.shift();
    }
    this.info = null;
    this.clear();
  }

  /** A run's info with its last validation and time from the points, where it has none. */
  named(info) {
    if (!info || typeof info !== 'object') return null;
    const last = this.val.at(-1), end = this.train.at(-1), t = end?.[2];
    return {
      ...info, valBpc: info.valBpc ?? (Number.isFinite(last?.[3]) ? last[3] : null), seconds: info.seconds ?? (Number.isFinite(t) ? t : null),
      steps: info.steps ?? end?.[0] ?? 0,
    };
  }

  /** Names the current run (compare.js runInfo); the legend says it. */
  setRun(info) {
    this.info = info;
    this.listRuns();
  }

  /** The runs in the legend under the canvas: this run, then the earlier ones, newest first,
   * each with its line's colour and its whole name; then why a bigger one did worse, if one did. */
  listRuns() {
    if (!this.legend) return;
    const item = (color, text) => {
      const li = document.createElement('li');
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = color; // CSSOM, which the page's CSP allows
      li.append(swatch, text);
      return li;
    };
    const now = this.info ? this.named(this.info) : null;
    const items = this.past.map((r, k) => item(PAST[k % PAST.length], `earlier: ${r.info ? runLabel(r.info) : 'a run'}`)).reverse();
    if (now && this.train.length) items.unshift(item(COLORS.train, `this run: ${runLabel(now)}`));
    this.legend.replaceChildren(...items);
    this.legend.hidden = !items.length;
    if (this.why) {
      const runs = this.past.filter((r) => r.info).map((r) => ({ name: `the earlier ${r.info.preset ?? `${r.info.layers} x ${r.info.width}`}`, info: r.info, train: r.train, val: r.val }));
      if (now && this.train.length) runs.push({ name: `this run's ${now.preset ?? `${now.layers} x ${now.width}`}`, info: now, train: this.train, val: this.val });
      const axes = this.axes();
      const why = axes.time && axes.bpc ? whyBiggerWorse(runs) : null;
      this.why.textContent = why ?? '';
      this.why.hidden = !why;
    }
  }

  /** What the axes are: against time when every point drawn has its time, in bits per
   * character when every point has its conversion (else step, loss per token). */
  axes() {
    const all = this.train.concat(this.val, ...this.past.map((r) => r.train.concat(r.val)));
    return { time: all.every((p) => Number.isFinite(p[2])), bpc: all.every((p) => Number.isFinite(p[3])) }; // (no points: the page's own)
  }

  /** Forgets the current run (a new model); earlier runs stay. */
  clear() {
    this.train = [];
    this.val = [];
    this.xMax = 0;
    this.tMax = 0;
    this.perChar = null; // the next run's come with it (setUnits)
    this.listRuns();
    this.redraw();
  }

  /** Forgets the points after `step`: the steps a diverged run went back over. */
  undo(step) {
    this.train = this.train.filter(([s]) => s <= step);
    this.val = this.val.filter(([s]) => s <= step);
    this.redraw();
  }

  /** The tokens a character of the current run's text ({train, val}: compare.js), which turn
   * its losses per token into bits per character. */
  setUnits(perChar) {
    this.perChar = perChar;
  }

  /** The training time (s) of this model's points so far: where a new run of it starts. */
  lastTime() {
    const t = this.train.at(-1)?.[2];
    return Number.isFinite(t) ? t : 0;
  }

  /** A training loss (per token) at `step`, after `seconds` of training. */
  addTrain(step, loss, seconds) {
    if (!Number.isFinite(loss)) return;
    this.train.push([step, loss, seconds, this.perChar ? loss * bitsPerChar(this.perChar.train) : undefined]);
    if (this.train.length === 1) this.listRuns(); // the run joins the legend
    // long runs: halve the density instead of growing without bound
    if (this.train.length > 20000) this.train = this.train.filter((_, i) => i % 2 === 0 || i === this.train.length - 1);
    this.redraw();
  }

  addVal(step, loss, seconds) {
    if (Number.isFinite(loss) && this.val.at(-1)?.[0] !== step) {
      this.val.push([step, loss, seconds, this.perChar ? loss * bitsPerChar(this.perChar.val) : undefined]);
      this.listRuns();
    }
    this.redraw();
  }

  /** The "random guessing" line: ln(vocabulary size), what a model that knows nothing scores. */
  setGuess(loss) {
    this.guess = Number.isFinite(loss) ? loss : null;
    this.redraw();
  }

  /** The step the x axis runs to (the run's last step), and the training time (s) when the
   * run is of a time. */
  setTarget(step, seconds = 0) {
    this.xMax = step;
    this.tMax = seconds;
    this.redraw();
  }

  /** The data as a plain object, for autosave; restore() takes it back. */
  snapshot() { return { train: this.train, val: this.val, xMax: this.xMax, perChar: this.perChar }; }

  restore(s) {
    this.train = s?.train ?? [];
    this.val = s?.val ?? [];
    this.xMax = s?.xMax ?? 0;
    this.tMax = 0;
    this.perChar = s?.perChar ?? null;
    this.listRuns();
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
    const axes = this.axes(), xi = axes.time ? 2 : 0, yi = axes.bpc ? 3 : 1;
    this.showAxes(axes);
    if (!all.length) {
      g.fillStyle = COLORS.axis;
      g.textAlign = 'center';
      g.fillText('The loss appears here once training starts.', W / 2, H / 2);
      return;
    }
    // random guessing in the y axis's unit
    const guess = this.guess === null ? null : axes.bpc ? (this.perChar ? this.guess * bitsPerChar(this.perChar.val) : null) : this.guess;
    // axes ranges: x from 0 to the run's end; y over the data, with a little room
    let xMax = Math.max(axes.time ? this.tMax : this.xMax, 1), yMin = Infinity, yMax = -Infinity;
    for (const p of all) {
      xMax = Math.max(xMax, p[xi]);
      yMin = Math.min(yMin, p[yi]);
      yMax = Math.max(yMax, p[yi]);
    }
    if (guess !== null) yMax = Math.max(yMax, guess);
    if (yMax - yMin < 1e-3) { yMin -= 0.5; yMax += 0.5; }
    const pad = (yMax - yMin) * 0.05;
    yMin = Math.max(0, yMin - pad);
    yMax += pad;
    const L = 44, R = 12, T = 10, B = 28;
    const X = (s) => L + (s / xMax) * (W - L - R);
    const Y = (v) => T + (1 - (v - yMin) / (yMax - yMin)) * (H - T - B);
    const at = (p) => [X(p[xi]), Y(p[yi])];

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
    const xs = axes.time ? timeStep(xMax, Math.max(2, Math.floor((W - L - R) / 80))) : niceStep(xMax, Math.max(2, Math.floor((W - L - R) / 80)));
    g.textAlign = 'center';
    g.textBaseline = 'top';
    for (let s = 0; s <= xMax; s += xs) {
      g.beginPath();
      g.moveTo(X(s), T);
      g.lineTo(X(s), H - B);
      g.stroke();
      g.fillText(axes.time ? tick(s) : String(s), X(s), H - B + 6);
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
      points.forEach((p, i) => (i ? g.lineTo(...at(p)) : g.moveTo(...at(p))));
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
    const smooth = runningAverage(this.train);
    line(smooth.filter((_, i) => i % every === 0 || i === smooth.length - 1), COLORS.train, 2);

    // random guessing: a dashed line at ln V
    if (guess !== null) {
      g.strokeStyle = COLORS.guess;
      g.lineWidth = 1;
      g.setLineDash([6, 4]);
      g.beginPath();
      g.moveTo(L, Y(guess));
      g.lineTo(W - R, Y(guess));
      g.stroke();
      g.setLineDash([]);
      g.fillStyle = COLORS.guess;
      g.textAlign = 'left';
      g.textBaseline = 'bottom';
      const V = Math.round(Math.exp(this.guess));
      g.fillText(axes.bpc ? `random guessing: ${guess.toFixed(2)}` : `random guessing (ln ${V} = ${guess.toFixed(2)})`, L + 6, Y(guess) - 2);
    }

    // validation loss: dots joined by a faint line
    if (this.val.length) {
      line(this.val, COLORS.val, 1);
      g.fillStyle = COLORS.val;
      for (const p of this.val) {
        g.beginPath();
        g.arc(...at(p), 3, 0, 2 * Math.PI);
        g.fill();
      }
    }

    // legend: at the top right, under the random-guessing line (its label is above it, at the left)
    const top = guess !== null ? Math.max(T, Y(guess) + 4) : T;
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

  /** The caption names the axes drawn (the figures above the chart stay in loss per token). */
  showAxes(axes) {
    if (!this.caption) return;
    const text = axes.bpc
      ? `Bits per character (a loss per token × tokens per character ÷ ln 2: one scale for any tokenizer and text) against `
        + `${axes.time ? 'training time' : 'training step'}: training (line), held-out validation text (dots), random guessing `
        + '(dashed); earlier runs of this tab faded. Lower is better; every bit less halves the model’s uncertainty about the next '
        + 'character. The figures above are per token.'
      : `Loss per token against ${axes.time ? 'training time' : 'training step'} (a run saved by an older page has no times `
        + 'or characters to draw by): training (line), held-out validation text (dots), random guessing (dashed). Lower is better.';
    if (this.caption.textContent !== text) this.caption.textContent = text;
  }

  updateLabel() {
    const last = this.train.at(-1), val = this.val.at(-1), { time, bpc } = this.axes();
    let text = `${this.label}: no training yet`;
    if (last) {
      text = `${this.label}: step ${last[0]}${this.xMax ? ` of ${this.xMax}` : ''}, training loss ${last[1].toFixed(3)}` +
        (this.train.length > 1 ? ` (first ${this.train[0][1].toFixed(3)})` : '') +
        (val ? `, validation loss ${val[1].toFixed(3)} at step ${val[0]}` : '') +
        (this.guess !== null ? `; random guessing scores ${this.guess.toFixed(2)}` : '') +
        `; drawn in ${bpc ? 'bits a character' : 'loss per token'} against training ${time ? 'time' : 'step'}` +
        (time ? `, ${duration(last[2])} of training` : '') +
        (bpc ? `, training ${last[3].toFixed(2)}${val ? `, validation ${val[3].toFixed(2)}` : ''} bits a character` : '') +
        (this.past.length ? `; ${this.past.length} earlier run${this.past.length > 1 ? 's' : ''} of this tab: `
          + `${this.past.map((r) => (r.info ? runLabel(r.info) : 'a run')).join('; ')}` : '');
    }
    this.canvas.setAttribute('aria-label', text);
  }
}

/** A run's training points with the loss (per token, and per character) as a running average. */
function runningAverage(points) {
  let a = null, b = null;
  return points.map(([s, v, t, c]) => [s, (a = a === null ? v : 0.9 * a + 0.1 * v), t, Number.isFinite(c) ? (b = b === null ? c : 0.9 * b + 0.1 * c) : c]);
}

/** Seconds as an axis tick: "45 s", "2 min", "1:30". */
function tick(s) {
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60), r = Math.round(s % 60);
  return r ? `${m}:${String(r).padStart(2, '0')}` : `${m} min`;
}

/** A round step of time near range / n: 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, ... */
function timeStep(range, n) {
  const raw = range / Math.max(1, n);
  for (const s of [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600]) if (s >= raw) return s;
  return niceStep(range, n);
}
