// Field-by-field comparison of two golden records (record.mjs, record.c): the first place
// they differ, named by its path (a case by its name), e.g. cases[gpt2].train.loss[17].

/** The first difference between the recorded `want` and the new `got` as {path, want,
 * got}, or null when they are the same, key for key and value for value. */
export function firstDifference(want, got, path = '') {
  if (want === null || typeof want !== 'object' || got === null || typeof got !== 'object'
    || Array.isArray(want) !== Array.isArray(got)) {
    return Object.is(want, got) ? null : { path, want, got };
  }
  const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
  for (const k of keys) {
    const name = Array.isArray(want) ? `[${want[k]?.name ?? got[k]?.name ?? k}]` : (path ? `.${k}` : k);
    const d = firstDifference(want[k], got[k], path + name);
    if (d) return d;
  }
  return null;
}

/** A difference as one line. */
export function describe({ path, want, got }) {
  const show = (v) => (v === undefined ? 'nothing' : JSON.stringify(v));
  return `${path}: recorded ${show(want)}, now ${show(got)}`;
}
