// The page's entry: checks what the browser offers, starts both halves (lm.js, s2s.js),
// and owns what they share: the error list, the mode switch, "Keep your work" (download,
// open, autosave) and the offer to restore an autosaved model after a reload.
import { importWorkerSafetensors, load, loadWorkerModel, loadWorkerSeq2Seq } from './pkg/src/js/index.js';
import { LanguageModelUI } from './lm.js';
import { Seq2SeqUI } from './s2s.js';
import { changeRecords, loadRecord } from './store.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);

/** A wasm module using one SIMD instruction (v128.const): valid only where SIMD is. */
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b,       // type: () -> v128
  0x03, 0x02, 0x01, 0x00,                         // one function of that type
  0x0a, 0x16, 0x01, 0x14, 0x00, 0xfd, 0x0c, ...new Array(16).fill(0), 0x0b, // body: v128.const 0
]);

const app = {
  error(text) {
    const box = document.createElement('div');
    box.className = 'error';
    const p = document.createElement('p');
    p.textContent = text;
    const close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Dismiss';
    close.addEventListener('click', () => box.remove());
    box.append(p, close);
    $('errors').append(box);
  },
  autosaveOn: () => $('autosave-on').checked,
  async autosave(record) {
    try {
      // the newest model is the autosave; another model's record moves to the second slot
      // (the earlier one, in place of the one there), both in one transaction
      const old = await loadRecord(NEWEST).catch(() => null);
      const moves = old?.bytes && old.modelId !== record.modelId ? [[EARLIER, old]] : [];
      await changeRecords([...moves, [NEWEST, record]]);
      const earlier = moves.length ? old : await loadRecord(EARLIER).catch(() => null);
      slots = { newest: record, earlier: earlier?.bytes ? earlier : null };
      showForget(true);
      $('keep-status').textContent = `Autosaved in this browser at step ${fmt.count(record.step)} (${new Date(record.savedAt).toLocaleTimeString()}).`
        + (slots.earlier ? ` The earlier model is kept too: ${named(slots.earlier)}.` : '');
      $('restore').hidden = true; // the offer was for the records just moved
    } catch (e) {
      this.error(fmt.explain(e, 'Autosave failed (the model is still here; download it to keep it)'));
    }
  },
  keepChanged() { refreshKeep(); },
  /** Whether the model `held` (what replacing it loses, in words; null: nothing) may be
   * replaced by `what`: a question when there is something to lose. */
  mayReplace(held, what) {
    const lost = slots.earlier ? ` (in place of the earlier one there: ${named(slots.earlier)})` : '';
    return held === null || window.confirm(`Replace ${held} with ${what}? This browser’s autosave keeps it as the earlier model${lost}; `
      + 'download it to keep it for good.');
  },
  /** A new model's run begins: the offer to restore an autosaved one leaves the screen (the
   * Keep section names what is kept, and a reload offers it again). */
  newRun() { $('restore').hidden = true; },
  /** A model's worker reported its thread count and kernels: said in plain words, with the
   * technical facts in data-threads, data-kernels (and the tooltip) for those who want them. */
  threads(n, simd = 'simd128') {
    const line = $('env-status');
    line.dataset.threads = String(n);
    line.dataset.kernels = simd;
    line.textContent = `${line.textContent.replace(/ Training uses .*$/, '')} Training uses ${n === 1 ? 'one core' : `${n} cores`} of this computer.`;
    line.title = `${line.title.replace(/; worker: .*$/, '')}; worker: ${n} thread${n === 1 ? '' : 's'}, ${simd === 'relaxed' ? 'relaxed-SIMD' : 'SIMD128'} kernels`;
  },
};

let lm = null, s2s = null;

// Autosave's two slots: the newest language model, and the model before it (another model,
// kept until the user discards it or a third one comes). What they hold is known here as
// {newest, earlier} (records or null) once read.
const NEWEST = 'lm', EARLIER = 'lm-earlier';
let slots = { newest: null, earlier: null };

/** A record named by its text, the time it trained and its validation loss. */
function named(r) {
  const trained = Number.isFinite(r.trainedMs) ? `${fmt.duration(r.trainedMs / 1000)} (${fmt.count(r.step)} steps)` : `${fmt.count(r.step)} steps`;
  const val = r.chart?.val?.at(-1)?.[1];
  return `${r.corpus?.name ?? 'a text'}, trained for ${trained}, ${Number.isFinite(val) ? `validation loss ${fmt.loss(val)}` : 'not validated yet'}`;
}

/** The destructive "Forget the autosaved model", apart from the other buttons, shown only while
 * this browser keeps one (saved: known, or null: asked of IndexedDB). */
async function showForget(saved = null) {
  const has = saved ?? !!((await loadRecord(NEWEST).catch(() => null))?.bytes || (await loadRecord(EARLIER).catch(() => null))?.bytes);
  $('forget-zone').hidden = !has;
}

function mode() { return $('mode-s2s').checked ? 's2s' : 'lm'; }

function setMode(m) {
  $(m === 's2s' ? 'mode-s2s' : 'mode-lm').checked = true;
  $('lm-mode').hidden = m !== 'lm';
  $('s2s-mode').hidden = m !== 's2s';
  refreshKeep();
}

function refreshKeep() {
  if (!lm || !s2s) return;
  const busy = mode() === 'lm' ? !lm.wm || lm.busyGenerating || lm.phase === 'creating' : !s2s.ws || s2s.training;
  $('model-download').disabled = busy;
}

async function download() {
  let bytes, name;
  if (mode() === 'lm') {
    bytes = await lm.checkpoint(() => lm.training.saveBytes());
    name = `wasmformer-gpt-step${lm.wm.step}.wf`;
  } else {
    bytes = await s2s.ws.save();
    name = `wasmformer-seq2seq-step${s2s.ws.step}.wf`;
  }
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  $('keep-status').textContent = `Downloaded ${name} (${fmt.bytes(bytes.length)}).`;
}

async function openModel(file) {
  $('keep-status').textContent = `Opening ${file.name}…`;
  // a decoder opens in the language-model half, an encoder-decoder in the seq2seq half; a
  // trained model there is replaced only after a yes (asked once the file proved a model).
  // The File itself goes to the worker, which streams it into the model (a GGUF file is
  // never whole in memory)
  const wm = await loadWorkerModel(file);
  const arch = wm.config.arch;
  if ((arch === 'decoder' || arch === 'encoder-decoder') && !app.mayReplace(arch === 'decoder' ? lm.held() : s2s.held(), file.name)) {
    wm.dispose();
    $('keep-status').textContent = `${file.name} was not opened: the model you have stays.`;
    return;
  }
  if (arch === 'decoder') {
    await lm.adopt(wm, file.name);
    setMode('lm');
  } else if (arch === 'encoder-decoder') {
    wm.dispose();
    s2s.adopt(await loadWorkerSeq2Seq(new Uint8Array(await file.arrayBuffer())), file.name);
    setMode('s2s');
  } else {
    wm.dispose();
    throw new Error(`${file.name} holds an encoder-only model; this page trains and runs decoders and encoder-decoders`);
  }
  $('keep-status').textContent = `Opened ${file.name} (${fmt.bytes(file.size)}).`;
}

/** A model folder in a worker, to generate from and fine-tune: config.json, model.safetensors
 * and a tokenizer, Hugging Face's tokenizer.json (a GPT-2, SmolLM or Llama folder as it comes)
 * or the tokenizer.wft wasmformer export writes (taken first when both are there, as the
 * package's import does); other files are ignored. */
async function openFolder(files) {
  const byName = Object.fromEntries(files.map((f) => [f.name, f]));
  const folder = (files[0]?.webkitRelativePath || '').split('/')[0] || 'the folder';
  const needs = 'a model folder holds config.json, model.safetensors and tokenizer.json (or the tokenizer.wft wasmformer export writes)';
  for (const name of ['config.json', 'model.safetensors']) {
    if (!byName[name]) throw new Error(`${folder} has no ${name}: ${needs}`);
  }
  const tokenizer = ['tokenizer.wft', 'tokenizer.json'].find((name) => byName[name]);
  if (!tokenizer) throw new Error(`${folder} has no tokenizer.json: ${needs}`);
  $('keep-status').textContent = `Opening ${folder}…`;
  const read = async (name) => new Uint8Array(await byName[name].arrayBuffer());
  const wm = await importWorkerSafetensors({
    'config.json': await read('config.json'), 'model.safetensors': await read('model.safetensors'), [tokenizer]: await read(tokenizer),
  });
  // asked once the folder proved a model, as for a file
  if (!app.mayReplace(lm.held(), folder)) {
    wm.dispose();
    $('keep-status').textContent = `${folder} was not opened: the model you have stays.`;
    return;
  }
  await lm.adopt(wm, folder);
  setMode('lm');
  $('keep-status').textContent = `Opened ${folder}: ${wm.config.nLayer} layers, ${fmt.count(wm.paramCount)} parameters. `
    + 'Pick a text and train this model more (under Training) to fine-tune it.';
}

/** Whether the autosaved model of `record` may be deleted: always a question, since nothing
 * brings it back. */
function mayForget(record) {
  return window.confirm(`Delete the autosaved language model (${named(record)})? `
    + 'Nothing brings it back; restore it and download it first to keep it.');
}

/** Reads both slots into `slots`; says what they hold in the Keep section. */
async function readSlots() {
  const [newest, earlier] = await Promise.all([loadRecord(NEWEST), loadRecord(EARLIER)]);
  slots = { newest: newest?.bytes ? newest : null, earlier: earlier?.bytes ? earlier : null };
  const { newest: n, earlier: e } = slots;
  $('keep-status').textContent = !n && !e ? 'Nothing saved yet.'
    : `This browser keeps ${n && e ? 'two autosaved models' : 'an autosaved model'}: ${[n, e].filter(Boolean).map(named).join('; and the earlier one, ')}.`;
}

/** Restores the record in `key` (asked first when a model would be lost). */
async function restoreSlot(key) {
  if (!app.mayReplace(lm.held(), 'the autosaved one')) return; // the offer stays
  $('restore').hidden = true;
  try {
    const record = await loadRecord(key); // as it is now, should a save have happened meanwhile
    if (!record?.bytes) throw new Error('it is no longer in this browser');
    setMode('lm');
    await lm.restore(record);
    $('keep-status').textContent = `Restored the autosaved model (${named(record)}).`;
  } catch (e) {
    app.error(fmt.explain(e, 'Could not restore the autosaved model'));
  }
}

/** The offer to go on with the newest autosaved model, or to pick the earlier one. */
async function offerRestore() {
  try {
    await readSlots();
  } catch (e) {
    $('keep-status').textContent = `Autosave is not available: ${fmt.explain(e)}`;
    return;
  }
  const { newest, earlier } = slots;
  if (!newest && !earlier) return;
  const r = newest ?? earlier;
  const where = r.target ? `, paused at step ${fmt.count(r.step)} of ${fmt.count(r.target)}` : '';
  $('restore-text').textContent = `A language model of ${fmt.count(r.paramCount)} parameters (${named(r)}${where}) was autosaved in this browser ${fmt.ago(r.savedAt)}.`;
  $('restore-earlier').hidden = !(newest && earlier);
  if (newest && earlier) $('restore-earlier').textContent = `Restore the earlier one instead (${named(earlier)})`;
  $('restore').hidden = false;
  $('restore-yes').onclick = () => restoreSlot(newest ? NEWEST : EARLIER);
  $('restore-earlier').onclick = () => restoreSlot(EARLIER);
  $('restore-no').onclick = async () => {
    if (!mayForget(r)) return; // the offer stays
    $('restore').hidden = true;
    try {
      // the earlier one, if any, becomes the newest: it is offered next
      await changeRecords(newest && earlier ? [[NEWEST, earlier]] : [], newest && earlier ? [EARLIER] : [newest ? NEWEST : EARLIER]);
      await offerRestore();
      const left = slots.newest ? ` ${$('keep-status').textContent}` : '';
      $('keep-status').textContent = `Discarded the autosaved model.${left}`;
      await showForget();
    } catch (e) {
      app.error(fmt.explain(e, 'Could not delete the autosaved model'));
    }
  };
}

async function main() {
  window.addEventListener('error', (e) => app.error(`Something went wrong: ${e.message}`));
  window.addEventListener('unhandledrejection', (e) => app.error(fmt.explain(e.reason, 'Something went wrong')));

  if (!WebAssembly.validate(SIMD_PROBE)) {
    app.error('This browser does not support WebAssembly SIMD, which wasmformer needs (any current Chrome, Edge, Firefox or Safari has it).');
    $('env-status').textContent = 'WebAssembly SIMD: not available.';
    return;
  }
  if (typeof Worker !== 'function') app.error('This browser cannot run Web Workers; training would freeze the page.');
  const isolated = globalThis.crossOriginIsolated === true;
  const cores = navigator.hardwareConcurrency || 1;
  try {
    await load({ threads: 1 }); // the main thread only estimates memory: the single-thread build
  } catch (e) {
    app.error(fmt.explain(e, 'Could not start'));
    $('env-status').textContent = 'The WebAssembly module could not be loaded.';
    return;
  }
  const env = $('env-status');
  env.dataset.isolated = String(isolated);
  env.textContent = isolated ? 'Ready.'
    : 'Ready. Training runs on one core: this site is served without the settings that let a page use more.';
  env.title = `WebAssembly SIMD; ${cores} logical cores; ${isolated ? 'cross-origin isolated (threaded build)' : 'not cross-origin isolated (single-thread build)'}`;

  // the restore offer is a bar fixed at the bottom: while it shows, the page gets room below
  // its end, so that the bar never covers the last of it
  const bar = $('restore');
  new ResizeObserver(() => { document.body.style.paddingBottom = bar.hidden ? '' : `${bar.offsetHeight + 16}px`; }).observe(bar);

  lm = new LanguageModelUI(app);
  s2s = new Seq2SeqUI(app);
  for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', () => setMode(mode()));
  setMode('lm');
  $('model-download').addEventListener('click', () => download().catch((e) => app.error(fmt.explain(e, 'Could not download the model'))));
  $('model-open-button').addEventListener('click', () => $('model-open').click());
  $('model-open').addEventListener('change', async () => {
    const file = $('model-open').files[0];
    $('model-open').value = '';
    if (!file) return;
    try {
      await openModel(file);
    } catch (e) {
      app.error(fmt.explain(e, `Could not open ${file.name}`));
      $('keep-status').textContent = `${file.name} was not opened.`;
    }
  });
  $('folder-open-button').addEventListener('click', () => $('folder-open').click());
  $('folder-open').addEventListener('change', async () => {
    const files = [...$('folder-open').files];
    $('folder-open').value = '';
    if (!files.length) return;
    try {
      await openFolder(files);
    } catch (e) {
      app.error(fmt.explain(e, 'Could not open the model folder'));
      $('keep-status').textContent = 'The folder was not opened.';
    }
  });
  $('autosave-forget').addEventListener('click', async () => {
    try {
      await readSlots();
      const kept = [slots.newest, slots.earlier].filter(Boolean);
      if (!kept.length) {
        $('keep-status').textContent = 'This browser keeps no autosaved model.';
        return;
      }
      if (!window.confirm(`Delete ${kept.length === 2 ? 'both autosaved language models' : 'the autosaved language model'} (${kept.map(named).join('; ')})? `
        + (kept.length === 2 ? 'Nothing brings them back; restore one and download it first to keep it.'
          : 'Nothing brings it back; restore it and download it first to keep it.'))) return;
      await changeRecords([], [NEWEST, EARLIER]);
      slots = { newest: null, earlier: null };
      $('restore').hidden = true;
      $('keep-status').textContent = 'This browser keeps no autosaved model now.';
      await showForget();
    } catch (e) {
      app.error(fmt.explain(e, 'Could not delete the autosaved model'));
    }
  });
  await lm.chooseSource();
  lm.settings.prepareAuto().catch((e) => app.error(fmt.explain(e, 'Could not choose a size'))); // in the background
  await offerRestore();
  await showForget();
  document.body.dataset.ready = 'true';
}

main();
