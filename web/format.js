// Numbers, sizes, durations and errors as the page shows them.

/** 813824 -> "813,824" */
export const count = (n) => Math.round(n).toLocaleString('en-US');

/** bytes -> "37.1 MB" / "2.40 GB" */
export function bytes(n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}

/** seconds -> "42 s", "3 min 05 s", "1 h 02 min" */
export function duration(s) {
  if (!Number.isFinite(s) || s < 0) return '–';
  s = Math.round(s);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

export const loss = (x) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(3));

/** 1530.2 -> "1.5k" */
export function rate(x) {
  if (!Number.isFinite(x)) return '–';
  return x >= 1e4 ? `${(x / 1e3).toFixed(0)}k` : x >= 1e3 ? `${(x / 1e3).toFixed(1)}k` : x.toFixed(0);
}

/** How a time in the past reads: "just now", "5 minutes ago", or the date. */
export function ago(ms) {
  const s = (Date.now() - ms) / 1000;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} minute${Math.round(s / 60) === 1 ? '' : 's'} ago`;
  return new Date(ms).toLocaleString();
}

/** A token as a label: visible spaces and line breaks. */
export function tokenLabel(t) {
  return t.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';
}

/** An error in words a user can act on: what happened, then the library's message. */
export function explain(e, doing) {
  const what = doing ? `${doing}: ` : '';
  const msg = String(e?.message ?? e).replace(/\.$/, '');
  switch (e?.code) {
    case 'WF_ERR_NOMEM':
      return `${what}out of memory. ${msg}. Try a smaller model (fewer layers, a smaller width or context) or a smaller batch.`;
    case 'WF_ERR_CONFIG':
      return `${what}the model settings do not work together: ${msg}.`;
    case 'WF_ERR_FORMAT':
      return `${what}this is not a wasmformer model file, or it is damaged: ${msg}.`;
    case 'WF_ERR_UNSUPPORTED':
      return `${what}this version cannot do that: ${msg}.`;
    case 'WF_ERR_NUMERIC':
    case 'WF_ERR_DIVERGED': {
      // a run's divergence, in words from its facts: where it happened, where the model is now,
      // the advice once; without facts (a step outside a run), the library's message
      if (!e.facts) return `${what}the numbers blew up: ${msg}.`;
      return wentWrong(e.facts); // it says what stopped: no "Training: " before it
    }
    case 'WF_ERR_LOAD':
      return `${what}the WebAssembly module could not be loaded: ${msg}.`;
    case 'WF_ERR_WORKER':
      return `${what}the model's worker stopped (the tab may have run out of memory): ${msg}.`;
    case 'WF_ERR_ARG':
    case 'WF_ERR_STATE':
    case 'WF_ERR_TOKEN':
      return `${what}${msg}.`;
    default:
      if (e instanceof RangeError && /memory/i.test(msg)) return `${what}out of memory: ${msg}. Try a smaller model.`;
      return `${what}${msg}.`;
  }
}

/** A run that went wrong (a divergence: the run's facts f, wf_run_facts), in plain words,
 * once: the step it reached, what happened, where the model is now, and the one advice. */
export function wentWrong(f) {
  const why = f.refused ? 'a step produced numbers too large to hold'
    : f.diverged === 4 ? `the loss shot up to ${Number(f.measured).toPrecision(3)}, far above where this run started`
      : 'the loss climbed back up, well beyond its usual ups and downs';
  const where = f.backup >= 0 ? `The model went back to step ${count(f.backup)}, as it was before the trouble.`
    : `The model stays as it is, at step ${count(f.step)}.`;
  return `Training stopped at step ${count(f.at)}: ${why}. ${where} Lower the learning rate and train again.`;
}

/** Sizes a canvas's pixels to its CSS box at the screen's density and clears it: the 2D
 * context, drawing in CSS pixels, and that box's width and height. */
export function fitCanvas(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(canvas.clientWidth * dpr)), h = Math.max(1, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const W = w / dpr, H = h / dpr;
  g.clearRect(0, 0, W, H);
  return { g, W, H };
}

/** Runs the async action fn; a failure is shown in words (app.error), never swallowed, and
 * after() runs either way. */
export async function guard(app, doing, fn, after) {
  try {
    await fn();
  } catch (e) {
    app.error(explain(e, doing));
  } finally {
    after?.();
  }
}
