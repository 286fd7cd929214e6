// A line chart as an SVG string, for the time-to-quality bench's curves (no dependencies).
//   lineChart({ series: [{ label, color, points: [[x, y], ...], dash? }], hlines: [{ y, label }],
//               xLabel, yLabel, title, yMin?, yMax?, width?, height? })

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** Round tick steps (1, 2, 5 times a power of ten) covering [lo, hi] with about n ticks. */
function ticks(lo, hi, n) {
  const raw = (hi - lo) / n, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

export function lineChart({ series, hlines = [], xLabel, yLabel, title, yMin, yMax, width = 900, height = 420 }) {
  const m = { l: 58, r: 290, t: 34, b: 46 };
  const pw = width - m.l - m.r, ph = height - m.t - m.b;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const x0 = 0, x1 = Math.max(...xs) * 1.02;
  const y0 = yMin ?? Math.min(...ys, ...hlines.map((h) => h.y)) - 0.05, y1 = yMax ?? Math.max(...ys);
  const X = (x) => m.l + ((x - x0) / (x1 - x0)) * pw;
  const Y = (y) => m.t + (1 - (Math.min(Math.max(y, y0), y1) - y0) / (y1 - y0)) * ph;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${m.l}" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`];
  for (const t of ticks(x0, x1, 8)) {
    out.push(`<line x1="${X(t)}" y1="${m.t}" x2="${X(t)}" y2="${m.t + ph}" stroke="#eee"/>`,
      `<text x="${X(t)}" y="${m.t + ph + 16}" text-anchor="middle">${t}</text>`);
  }
  for (const t of ticks(y0, y1, 6)) {
    out.push(`<line x1="${m.l}" y1="${Y(t)}" x2="${m.l + pw}" y2="${Y(t)}" stroke="#eee"/>`,
      `<text x="${m.l - 6}" y="${Y(t) + 4}" text-anchor="end">${t}</text>`);
  }
  out.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#444"/>`,
    `<text x="${m.l + pw / 2}" y="${height - 8}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  for (const h of hlines) {
    out.push(`<line x1="${m.l}" y1="${Y(h.y)}" x2="${m.l + pw}" y2="${Y(h.y)}" stroke="#000" stroke-dasharray="6 4"/>`,
      `<text x="${m.l + pw - 4}" y="${Y(h.y) - 5}" text-anchor="end">${esc(h.label)}</text>`);
  }
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join('');
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="${s.width ?? 1.6}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''} opacity="${s.opacity ?? 1}"/>`);
    if (s.label) {
      const ly = m.t + 10 + 18 * series.filter((t, k) => t.label && k < i).length;
      out.push(`<line x1="${m.l + pw + 12}" y1="${ly}" x2="${m.l + pw + 34}" y2="${ly}" stroke="${s.color}" stroke-width="2.5"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`,
        `<text x="${m.l + pw + 40}" y="${ly + 4}">${esc(s.label)}</text>`);
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
