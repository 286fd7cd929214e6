// Options and values as the package checks them: every options object and config is
// checked against the names its call knows (a misspelled name is an error that names the
// nearest known one, never silently ignored), and every message shows a value with its
// type, so '5' and 5 read differently.
import { WfError } from './errors.js';

/** Edit distance between a and b (insertions, deletions, substitutions, swaps of two
 * neighbours), case-insensitive: how far a typo is from a name. */
function distance(a, b) {
  a = a.toLowerCase();
  b = b.toLowerCase();
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known name nearest to `name`, or null when none is close (at most a third of its
 * letters away, and at least 1). Names that differ only in '_' and case count as equal
 * (n_layer is nLayer). */
export function nearest(name, known) {
  const plain = (s) => s.replace(/[_-]/g, '').toLowerCase();
  let best = null, bestD = Infinity;
  for (const k of known) {
    const dist = plain(k) === plain(name) ? 0 : distance(name, k);
    if (dist < bestD) { best = k; bestD = dist; }
  }
  return bestD <= Math.max(1, Math.floor(name.length / 3)) ? best : null;
}

/** A value as messages show it: strings quoted, other types named ('5' (a string), 5.5,
 * null, undefined, [1,2] (an array), {…} (an object)). */
export function show(v) {
  if (typeof v === 'string') return `${JSON.stringify(v)} (a string)`;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v === null || v === undefined || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'function') return 'a function';
  return `${Object.prototype.toString.call(v).slice(8, -1).toLowerCase() === 'object' ? 'an object' : `a ${v.constructor?.name ?? 'value'}`}`;
}

/**
 * Throws a WF_ERR_ARG (WF_ERR_CONFIG for a config) when `obj` has a key that is not in
 * `known`: the message names the key, the call, and the nearest known name. `what` says
 * which object it is ("train() options", "the config"). undefined values count as set: a
 * misspelled key is wrong whatever its value.
 */
export function checkKeys(obj, known, what, code = 'WF_ERR_ARG') {
  if (obj === undefined || obj === null) return obj;
  if (typeof obj !== 'object' || Array.isArray(obj)) throw new WfError(code, `${what} must be an object, not ${show(obj)}`);
  const names = known instanceof Set ? known : new Set(known);
  for (const key of Object.keys(obj)) {
    if (names.has(key)) continue;
    const near = nearest(key, names);
    throw new WfError(code, `unknown key "${key}" in ${what}${near ? `; did you mean "${near}"?` : ''} (known: ${[...names].sort().join(', ')})`);
  }
  return obj;
}

/** The shortest decimal that reads back as the same float32: 1e-5, not the float64
 * 0.000009999999747378752 the core's float holds. */
export function float32Plain(x) {
  if (!Number.isFinite(x) || Number.isInteger(x)) return x;
  const f = Math.fround(x);
  for (let p = 1; p <= 9; p++) {
    const y = Number(f.toPrecision(p));
    if (Math.fround(y) === f) return y;
  }
  return x;
}

/** The options every loader call takes (load()'s: which build, where its wasm is). */
export const LOAD_OPTIONS = Object.freeze(['threads', 'simd', 'wasmBinary', 'wasmUrl', 'distUrl']);
