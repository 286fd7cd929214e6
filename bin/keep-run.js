// What the command line does so that a training run is never thrown away: --out checked
// before the first step (preflightOut), SIGINT, SIGTERM and SIGHUP all stopping the run so
// that its steps are saved (stopSignals), and a checkpoint written on a clock while it runs
// (checkpointClock). Each stands alone; bin/wasmformer.js hooks them into train and
// finetune (the clock from the progress callback, where model.save() may run).
import { constants } from 'node:os';
import { lstat, open, readlink, realpath, stat, statfs, unlink } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { saveModelFile } from '../src/js/node.js';

const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

/** What a file-system error code means, in words. */
const REASONS = {
  EACCES: 'permission denied', EPERM: 'operation not permitted', EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device', EDQUOT: 'the disk quota is exhausted',
};

/** The bytes a model file of `model` takes, at most: its weights, its optimizer state (of
 * what trains), its tokenizer's file, its metadata and 64 KiB for the sections' headers. */
export function fileBytes(model) {
  const m = model.memory();
  const note = model.metadata === null ? 0 : Buffer.byteLength(JSON.stringify(model.metadata));
  return m.params + m.optimizer + (model.tokenizer ? model.tokenizer.save().length : 0) + note + 65536;
}

/** The file path writes: a symbolic link's target (that need not exist yet), or path. */
async function target(path) {
  try {
    return await realpath(path);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  const link = await lstat(path).catch(() => null);
  return link?.isSymbolicLink() ? resolve(dirname(path), await readlink(path)) : resolve(path);
}

/**
 * Checks, before any training, that a model file of about `bytes` can be saved at path:
 * path is not a folder, its folder exists and takes a new file (the very operation the
 * save starts with: a temporary file beside it, made and removed), and, where Node has
 * statfs, the folder's file system has room for it. Throws an Error whose message names
 * `flag` and path (never the temporary file); resolves to nothing when all is well.
 * @example await preflightOut('model.wf', fileBytes(model));
 */
export async function preflightOut(path, bytes, flag = '--out') {
  const file = await target(path);
  const dir = file === resolve(path) ? dirname(path) : dirname(file); // as given, unless a link points elsewhere
  const st = await stat(file).catch(() => null);
  if (st?.isDirectory()) throw new Error(`${flag} ${path} is a folder: give a file name, e.g. ${flag} ${path.replace(/\/*$/, '')}/model.wf`);
  const folder = await stat(dir).catch(() => null);
  if (!folder) throw new Error(`${flag} ${path}: the folder ${dir} does not exist; nothing was trained`);
  if (!folder.isDirectory()) throw new Error(`${flag} ${path}: ${dir} is not a folder; nothing was trained`);
  const probe = resolve(dir, `.${basename(file)}.${process.pid}.probe.tmp`);
  try {
    await (await open(probe, 'wx')).close();
  } catch (e) {
    throw new Error(`${flag} ${path} cannot be written: ${REASONS[e.code] ?? e.message}${REASONS[e.code] ? ` (${e.code})` : ''}; nothing was trained`);
  } finally {
    await unlink(probe).catch(() => {});
  }
  if (typeof statfs === 'function') {
    const fs = await statfs(dir).catch(() => null);
    const free = fs ? fs.bavail * fs.bsize : Infinity;
    if (free < bytes) throw new Error(`${flag} ${path}: the model file needs about ${MB(bytes)} and ${dir} has ${MB(free)} free; nothing was trained`);
  }
}

/** The exit code of a process stopped by `signal`: 128 + its number (SIGHUP 129, SIGINT
 * 130, SIGTERM 143). */
export const signalExitCode = (signal) => 128 + constants.signals[signal];

/**
 * Stops a run on SIGINT (Ctrl-C), SIGTERM (kill, a scheduler's end of job) or SIGHUP (the
 * terminal closed): the first of them calls stop(signal), and the caller aborts its
 * training, saves the steps taken and exits with signalExitCode(signal); a second exits at
 * once without waiting for the save. `signal` is the first one received (or null);
 * dispose() removes the handlers.
 * @example const stops = stopSignals(() => ac.abort()); ...; stops.dispose(); return stops.signal ? signalExitCode(stops.signal) : 0;
 */
export function stopSignals(stop) {
  const handlers = {};
  const state = {
    signal: null,
    dispose() { for (const [name, h] of Object.entries(handlers)) process.off(name, h); },
  };
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    handlers[name] = () => {
      if (state.signal) process.exit(signalExitCode(name));
      state.signal = name;
      stop(name);
    };
    process.on(name, handlers[name]);
  }
  return state;
}

/**
 * Reads a --checkpoint-every value: a duration such as 90s, 5m or 1.5h (a bare number is
 * seconds), or 0 (off); returns seconds, or null for a value that is neither.
 */
export function checkpointSeconds(value) {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value);
  return m ? Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] ?? 's'] : null;
}

/**
 * Saves model to path every `seconds` (0: never) while it trains: call tick() from the
 * training call's onProgress, where model.save() takes the state after that step. The file
 * is written atomically (saveModelFile) while training goes on, one write at a time;
 * before() runs first (to bring the run plan's metadata up to date), onSaved(step) after
 * each write, onError(e) when one fails (the run goes on; the final save tries again).
 * settle() waits for a write under way: await it before the final save, which must land
 * last. `saved` is how many checkpoints were written.
 * @example const clock = checkpointClock({ model, path, seconds: 300 }); ... onProgress: () => clock.tick(); ... await clock.settle();
 */
export function checkpointClock({ model, path, seconds, before, onSaved, onError }) {
  let last = performance.now(), writing = null;
  const clock = {
    saved: 0,
    tick() {
      if (!(seconds > 0) || writing || performance.now() - last < seconds * 1000) return;
      last = performance.now();
      before?.();
      const step = model.step;
      writing = saveModelFile(model, path) // the bytes are taken here, synchronously
        .then(() => { clock.saved++; onSaved?.(step); }, (e) => onError?.(e))
        .finally(() => { writing = null; });
    },
    async settle() { await writing; },
  };
  return clock;
}
