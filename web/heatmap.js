// An attention map on a canvas: rows are queries, columns keys, darker cells more weight.
// A cursor cell follows the pointer or the arrow keys (Home/End too), and its value is
// written into a readout element so that it can be read without seeing the colours.
import { fitCanvas, tokenLabel } from './format.js';

/** The colour of a weight v in [0, 1] (of the map's largest): white to a deep blue, with
 * lightness falling as √v, so that the small weights most cells hold still differ. The cells
 * and the legend's scale both use it. */
export function shade(v) {
  return `hsl(216 70% ${Math.round(98 - 70 * Math.sqrt(Math.max(0, Math.min(1, v))))}%)`;
}

export class Heatmap {
  /** canvas: focusable; readout: an <output>; names: how rows and columns are called; tip:
   * an element shown at the pointer with the cell's value; legend: a canvas the colour scale
   * is drawn on, from 0 to the map's largest weight, written into legendMax. */
  constructor(canvas, readout, { rowName = 'query', colName = 'key', label = 'Attention map', tip = null, legend = null, legendMax = null } = {}) {
    this.canvas = canvas;
    this.readout = readout;
    this.tip = tip;
    this.legend = legend;
    this.legendMax = legendMax;
    if (legend) new ResizeObserver(() => this.drawLegend()).observe(legend);
    this.rowName = rowName;
    this.colName = colName;
    this.label = label;
    this.map = null;
    this.cursor = [0, 0];
    this.geom = null;
    new ResizeObserver(() => this.draw()).observe(canvas);
    canvas.addEventListener('keydown', (e) => this.key(e));
    canvas.addEventListener('pointermove', (e) => this.point(e));
    canvas.addEventListener('pointerleave', () => { if (this.tip) this.tip.hidden = true; });
    canvas.addEventListener('focus', () => this.draw());
    canvas.addEventListener('blur', () => this.draw());
  }

  /** rows, cols: token strings; values: Float32Array [rows * cols], row-major. */
  show({ rows, cols, values, caption }) {
    let max = 1e-9;
    for (const v of values) max = Math.max(max, v);
    this.map = { rows, cols, values, max };
    if (this.legendMax) this.legendMax.textContent = max.toFixed(2);
    this.cursor = [Math.min(this.cursor[0], rows.length - 1), Math.min(this.cursor[1], cols.length - 1)];
    this.canvas.setAttribute('aria-label', `${this.label}: ${caption}, ${rows.length} rows by ${cols.length} columns`);
    this.draw();
    this.describe();
  }

  clear(message) {
    this.map = null;
    if (this.legendMax) this.legendMax.textContent = '–';
    if (this.tip) this.tip.hidden = true;
    this.canvas.setAttribute('aria-label', `${this.label}: ${message}`);
    this.readout.textContent = '';
    this.draw();
  }

  key(e) {
    if (!this.map) return;
    const [r, c] = this.cursor, R = this.map.rows.length, C = this.map.cols.length;
    const moves = {
      ArrowUp: [r - 1, c], ArrowDown: [r + 1, c], ArrowLeft: [r, c - 1], ArrowRight: [r, c + 1],
      Home: [r, 0], End: [r, C - 1], PageUp: [0, c], PageDown: [R - 1, c],
    };
    const next = moves[e.key];
    if (!next) return;
    e.preventDefault();
    this.cursor = [Math.max(0, Math.min(R - 1, next[0])), Math.max(0, Math.min(C - 1, next[1]))];
    this.draw();
    this.describe();
  }

  point(e) {
    if (!this.map || !this.geom) return;
    const box = this.canvas.getBoundingClientRect();
    const { left, top, cell } = this.geom;
    const c = Math.floor((e.clientX - box.left - left) / cell), r = Math.floor((e.clientY - box.top - top) / cell);
    if (r < 0 || c < 0 || r >= this.map.rows.length || c >= this.map.cols.length) {
      if (this.tip) this.tip.hidden = true;
      return;
    }
    if (this.tip) {
      const { rows, cols, values } = this.map;
      this.tip.textContent = `“${tokenLabel(rows[r])}” → “${tokenLabel(cols[c])}”: ${values[r * cols.length + c].toFixed(3)}`;
      this.tip.hidden = false;
      this.placeTip(e.clientX, e.clientY);
    }
    if (r === this.cursor[0] && c === this.cursor[1]) return;
    this.cursor = [r, c];
    this.draw();
    this.describe();
  }

  /** The tip just below and right of the pointer (x, y in the viewport), or on its other
   * side where the screen ends there, never past the viewport's edges (CSSOM, which the page's
   * CSP allows; the tip is positioned in the canvas's box). */
  placeTip(x, y) {
    const gap = 12, edge = 4, w = this.tip.offsetWidth, h = this.tip.offsetHeight;
    const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
    let left = x + gap + w <= vw - edge ? x + gap : x - gap - w;
    let top = y + gap + h <= vh - edge ? y + gap : y - gap - h;
    left = Math.max(edge, Math.min(left, vw - edge - w));
    top = Math.max(edge, Math.min(top, vh - edge - h));
    const box = this.tip.offsetParent.getBoundingClientRect();
    this.tip.style.left = `${left - box.left}px`;
    this.tip.style.top = `${top - box.top}px`;
  }

  /** The colour scale: the cells' colour of each weight from 0 to the largest, left to right. */
  drawLegend() {
    if (!this.legend) return;
    const { g, W, H } = fitCanvas(this.legend);
    for (let x = 0; x < W; x++) {
      g.fillStyle = shade(x / Math.max(1, W - 1));
      g.fillRect(x, 0, 1, H);
    }
  }

  describe() {
    if (!this.map) return;
    const [r, c] = this.cursor, { rows, cols, values } = this.map;
    this.readout.textContent = `${this.rowName} ${r + 1} “${tokenLabel(rows[r])}” → ${this.colName} ${c + 1} ` +
      `“${tokenLabel(cols[c])}”: weight ${values[r * cols.length + c].toFixed(3)}`;
  }

  draw() {
    const { g, W, H } = fitCanvas(this.canvas);
    g.font = '12px ui-monospace, "DejaVu Sans Mono", monospace';
    if (!this.map) {
      this.geom = null;
      g.fillStyle = '#545b66';
      g.textAlign = 'center';
      g.fillText('Nothing to show yet.', W / 2, H / 2);
      return;
    }
    const { rows, cols, values, max } = this.map;
    const R = rows.length, C = cols.length;
    // labels only where a cell is tall enough to hold one
    const trial = Math.min(W / (C + 2), H / (R + 2));
    const labels = trial >= 10;
    const margin = labels ? 22 : 4;
    const cell = Math.max(1, Math.min((W - margin - 4) / C, (H - margin - 4) / R));
    const left = margin, top = margin;
    this.geom = { left, top, cell };
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) {
        g.fillStyle = shade(values[r * C + c] / max);
        g.fillRect(left + c * cell, top + r * cell, Math.ceil(cell), Math.ceil(cell));
      }
    }
    if (labels) {
      g.fillStyle = '#1c1f24';
      g.textAlign = 'center';
      g.textBaseline = 'middle';
      const fit = (t) => (tokenLabel(t).length > 2 ? `${tokenLabel(t).slice(0, 2)}…` : tokenLabel(t));
      cols.forEach((t, c) => g.fillText(fit(t), left + (c + 0.5) * cell, top / 2));
      rows.forEach((t, r) => g.fillText(fit(t), left / 2, top + (r + 0.5) * cell));
    }
    const [r, c] = this.cursor;
    g.strokeStyle = document.activeElement === this.canvas ? '#f2a900' : '#c2410c';
    g.lineWidth = 2;
    g.strokeRect(left + c * cell + 1, top + r * cell + 1, Math.max(2, cell - 2), Math.max(2, cell - 2));
  }
}
