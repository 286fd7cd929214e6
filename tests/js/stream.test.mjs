// loadModel from a source that arrives in pieces (issue 29's memory goal): a fetch Response, a
// ReadableStream, a Blob, an async iterable, Node's loadModelFile, and the worker loads. A GGUF
// file streams into the core (wf_model_load_feed; the core's own tests: tests/test_gguf.c,
// tests/fuzz/fuzz_gguf.c); every source gives the model the whole-bytes load gives, bit for
// bit; progress, abort, a stream cut short and bad sources leave nothing behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createModel, load, loadModel, loadModelFile, loadTokenizer, loadWorkerModel } from '../../src/js/node.js';

const LLAMA = { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', tiedHead: false, bias: false };
const OPTS = { threads: 1 }; // one runtime for the loads and the heap counts
const TEXT = 'It is a truth universally acknowledged, that 12 men';

/** A SmolLM-shaped model with SmolLM's tokenizer, as GGUF bytes of the type asked for. */
async function ggufBytes(type) {
  const tokenizer = await loadTokenizer(readFileSync('tests/fixtures/tokenizers/smollm.json'), OPTS);
  const model = await createModel({ ...LLAMA, nLayer: 2, nHead: 4, nKvHead: 2, dModel: 64, dFF: 96, context: 64, vocabSize: tokenizer.vocabSize, seed: 5 },
    { ...OPTS, tokenizer });
  if (type !== 'f32') model.quantize(type);
  const bytes = model.save({ format: 'gguf' });
  model.dispose();
  return bytes;
}

/** A ReadableStream of the bytes in pieces of `size` (not a byte stream: its own pieces). */
const piecesOf = (bytes, size) => new ReadableStream({
  start(c) {
    for (let at = 0; at < bytes.length; at += size) c.enqueue(bytes.slice(at, at + size));
    c.close();
  },
});

/** The file's first `upTo` bytes in pieces, then the rest only 20 s later: a load that the
 * abort at 20,000 bytes ends however slowly the progress reaches the page (and that ends
 * without it, so that a load deaf to its signal fails the test rather than hangs it). */
const stalledAfter = (bytes, size, upTo) => new ReadableStream({
  start(c) {
    for (let at = 0; at < upTo; at += size) c.enqueue(bytes.slice(at, Math.min(at + size, upTo)));
  },
  async pull(c) {
    await new Promise((resolve) => setTimeout(resolve, 20000).unref());
    try {
      c.enqueue(bytes.slice(upTo));
      c.close();
    } catch { /* the load was cancelled meanwhile */ }
  },
});

/** The model's file written again, the tokenizer's ids and a loss: what must not differ. */
function facts(model) {
  const ids = model.tokenizer.encode(TEXT);
  return { file: model.save({ format: 'gguf' }), ids: Array.from(ids), loss: model.forward(ids.subarray(0, 8), ids.subarray(1, 9), 1, 8).loss };
}

test('every source gives the whole file\'s model, bit for bit, in float32, Q8_0 and Q4_0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-stream-'));
  try {
    for (const type of ['f32', 'q8_0', 'q4_0']) {
      const bytes = await ggufBytes(type);
      const ref = await createModel({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 8, vocabSize: 11 }, OPTS);
      ref.load(bytes); // wf_model_load: the file in one piece
      const want = facts(ref);
      ref.dispose();
      const path = join(dir, `${type}.gguf`);
      writeFileSync(path, bytes);
      const sources = {
        bytes: () => loadModel(bytes, OPTS),
        Response: () => loadModel(new Response(bytes, { headers: { 'content-length': String(bytes.length) } }), OPTS),
        'ReadableStream of 7-byte pieces': () => loadModel(piecesOf(bytes, 7), OPTS),
        'ReadableStream straddling tensors': () => loadModel(piecesOf(bytes, Math.floor(bytes.length / 3) + 5), OPTS),
        Blob: () => loadModel(new Blob([bytes]), OPTS),
        'async iterable of 4096-byte pieces': () => loadModel((async function* () {
          for (let at = 0; at < bytes.length; at += 4096) yield bytes.subarray(at, at + 4096);
        }()), OPTS),
        loadModelFile: () => loadModelFile(path, OPTS),
      };
      for (const [name, open] of Object.entries(sources)) {
        const model = await open();
        const got = facts(model);
        assert.equal(model.quantization, type, `${type} from ${name}`);
        assert.deepEqual(got.ids, want.ids, `${type} from ${name}: the tokenizer`);
        assert.equal(got.loss, want.loss, `${type} from ${name}: the loss`);
        assert.ok(Buffer.from(got.file).equals(Buffer.from(want.file)), `${type} from ${name}: written again, another file`);
        model.dispose();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('onProgress counts the bytes read of the file\'s size (null when unknown); a checkpoint streams too', async () => {
  const bytes = await ggufBytes('q8_0');
  const seen = [];
  const sized = new Response(piecesOf(bytes, 65536), { headers: { 'content-length': String(bytes.length) } });
  (await loadModel(sized, { ...OPTS, onProgress: (p) => seen.push(p) })).dispose();
  assert.ok(seen.length > 1, 'progress on every piece');
  assert.ok(seen.every((p, i) => p.total === bytes.length && (i === 0 || p.loaded > seen[i - 1].loaded)), 'loaded grows, total is the size');
  assert.equal(seen.at(-1).loaded, bytes.length);
  const unknown = [];
  (await loadModel(piecesOf(bytes, 65536), { ...OPTS, onProgress: (p) => unknown.push(p.total) })).dispose();
  assert.ok(unknown.every((t) => t === null), 'a ReadableStream has no size');
  const gzip = [];
  const compressed = new Response(bytes, { headers: { 'content-length': '12', 'content-encoding': 'gzip' } });
  (await loadModel(compressed, { ...OPTS, onProgress: (p) => gzip.push(p.total) })).dispose();
  assert.ok(gzip.every((t) => t === null), "a compressed response's length is not the file's");
  // a wasmformer checkpoint (not GGUF) from a Response: gathered, then loaded
  const wf = await createModel({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 8, vocabSize: 11 }, OPTS);
  const back = await loadModel(new Response(wf.save()), OPTS);
  assert.deepEqual(Array.from(back.getTensor('wte')), Array.from(wf.getTensor('wte')));
  back.dispose();
  wf.dispose();
});

test('abort, a stream cut short, a throwing onProgress and bad sources: refused, nothing left in the heap', async () => {
  const rt = await load(OPTS);
  const bytes = await ggufBytes('q4_0'), bad = await ggufBytes('f32');
  const before = rt.heapInUse();
  const stop = new AbortController();
  await assert.rejects(loadModel(piecesOf(bytes, 4096), { ...OPTS, signal: stop.signal, onProgress: (p) => p.loaded > 20000 && stop.abort() }),
    (e) => e.name === 'AbortError');
  await assert.rejects(loadModel(bytes, { ...OPTS, signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
  await assert.rejects(loadModel(new Response(bytes.subarray(0, bytes.length - 100)), OPTS),
    (e) => e.code === 'WF_ERR_FORMAT' && /runs past the end of the file/.test(e.message));
  await assert.rejects(loadModel(piecesOf(bytes, 4096), { ...OPTS, onProgress: () => { throw new Error('mine'); } }), /mine/);
  bad.set([0, 0, 0x80, 0x7f], bad.length - 4); // the last float: inf
  await assert.rejects(loadModel(new Blob([bad]), OPTS), (e) => e.code === 'WF_ERR_FORMAT' && /not finite/.test(e.message));
  assert.equal(rt.heapInUse(), before, 'every refused load freed what it made');
  // sources that are no model file
  await assert.rejects(loadModel(new Response('missing', { status: 404, statusText: 'Not Found' }), OPTS),
    (e) => e.code === 'WF_ERR_ARG' && /status 404 Not Found/.test(e.message));
  const used = new Response(bytes);
  await used.arrayBuffer();
  await assert.rejects(loadModel(used, OPTS), (e) => e.code === 'WF_ERR_ARG' && /read already/.test(e.message));
  const locked = piecesOf(bytes, 10);
  locked.getReader();
  await assert.rejects(loadModel(locked, OPTS), (e) => e.code === 'WF_ERR_ARG' && /locked/.test(e.message));
  const words = new ReadableStream({ start(c) { c.enqueue('GGUF'); c.close(); } });
  await assert.rejects(loadModel(words, OPTS), (e) => e.code === 'WF_ERR_ARG' && /not bytes/.test(e.message));
  await assert.rejects(loadModel(42, { ...OPTS, onProgress: () => {} }), (e) => e.code === 'WF_ERR_ARG' && /Response/.test(e.message));
  await assert.rejects(loadModel(bytes, { ...OPTS, onProgress: 'yes' }), (e) => e.code === 'WF_ERR_ARG' && /onProgress must be a function/.test(e.message));
  await assert.rejects(loadModel(bytes, { ...OPTS, onProgres: () => {} }), (e) => e.code === 'WF_ERR_ARG' && /onProgress/.test(e.message));
  assert.equal(rt.heapInUse(), before);
});

test('the worker loads stream inside the worker: a Blob, a Response, a ReadableStream, bytes', async () => {
  const bytes = await ggufBytes('q4_0');
  const main = await loadModel(bytes, OPTS);
  const want = await main.generateText(TEXT, { maxTokens: 6, temperature: 0 });
  main.dispose();
  for (const [name, source] of [['Blob', new Blob([bytes])], ['Response', new Response(bytes)], ['ReadableStream', piecesOf(bytes, 4096)], ['bytes', bytes]]) {
    const wm = await loadWorkerModel(source, OPTS);
    assert.equal(await wm.generateText(TEXT, { maxTokens: 6, temperature: 0 }), want, `from a ${name}`);
    wm.dispose();
  }
  await assert.rejects(loadWorkerModel(new Response('', { status: 500 }), OPTS), (e) => e.code === 'WF_ERR_ARG' && /status 500/.test(e.message));
  // progress comes back from the worker; an abort and a throwing callback stop the load there
  const seen = [];
  const wm = await loadWorkerModel(new Blob([bytes]), { ...OPTS, onProgress: (p) => seen.push(p) });
  assert.ok(seen.length >= 1 && seen.at(-1).loaded === bytes.length && seen.at(-1).total === bytes.length, JSON.stringify(seen.at(-1)));
  wm.dispose();
  const stop = new AbortController();
  await assert.rejects(loadWorkerModel(stalledAfter(bytes, 4096, 24576), { ...OPTS, signal: stop.signal, onProgress: (p) => p.loaded > 20000 && stop.abort() }),
    (e) => e.name === 'AbortError');
  await assert.rejects(loadWorkerModel(new Blob([bytes]), { ...OPTS, signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
  await assert.rejects(loadWorkerModel(piecesOf(bytes, 4096), { ...OPTS, onProgress: () => { throw new Error('mine'); } }), /mine/);
});
