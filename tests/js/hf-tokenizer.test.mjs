// Hugging Face tokenizers and llama2.c's (issue 15, items 2 and 3) against references:
// the tokenizer.json fixtures (tests/fixtures/gen_tokenizer_fixtures.mjs: GPT-2 and SmolLM
// byte-level BPE, Llama 2's SentencePiece-style BPE in its two layouts) and wasmformer's own
// BPE written as a tokenizer.json must encode the hostile corpus (tests/js/hostile.js) to
// the ids @huggingface/tokenizers gives, and decode ids to its text; llama2.c's tokenizer.bin
// must encode as a re-implementation of run.c's encode written here from its description.
//
// The reference is the JavaScript port of the Rust library the files are written for; where
// the port departs from the Rust library, wasmformer follows the Rust library, and the test
// says so and checks it: the port's ByteLevel pattern uses JavaScript's \s (U+FEFF in,
// U+0085 out; Oniguruma's \s is White_Space), its Digits uses \d (ASCII; the Rust library's
// char::is_numeric is \p{N}), and its ByteFallback decoder's TextDecoder drops a U+FEFF that
// starts a run of bytes. Each file is also given to the reference in a form that means the
// same to the Rust library but that the port runs the Rust way (its Split patterns are
// translated with Oniguruma's classes); there every id must agree.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer as Reference } from '@huggingface/tokenizers';
import { createModel, createTokenizer, exportSafetensors, importLlama2c, importSafetensors, loadModel, loadTokenizer, WfError } from '../../src/js/node.js';
import { hostileStrings, invalidUtf8, rng } from './hostile.js';

const fixture = (name) => new Uint8Array(readFileSync(new URL(`../fixtures/tokenizers/${name}`, import.meta.url)));
const encoder = new TextEncoder();
const wellFormed = (s) => new TextDecoder().decode(encoder.encode(s)); // lone surrogates as U+FFFD, as TextEncoder writes them
const lossy = (bytes) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const PORT_SPACES = /[\u0085\ufeff]/u; // where JavaScript's \s and White_Space differ
const NON_ASCII_NUMBER = /[^\P{N}0-9]/u; // \p{N} beyond \d
const CORPUS = hostileStrings(500).map(wellFormed);
const refEncode = (ref, s) => ref.encode(s, { add_special_tokens: false }).ids;
const refDecode = (ref, ids) => (ids.length ? ref.decode(ids, { clean_up_tokenization_spaces: false }) : '');

/** The same tokenizer for the Rust library, in the form the port runs as the Rust library
 * does: ByteLevel's pattern as a Split before ByteLevel, Digits as a Split on \p{N}. */
function rustForm(json) {
  const j = structuredClone(json);
  const split = (pattern) => ({ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false });
  if (!j.pre_tokenizer) return j;
  const list = j.pre_tokenizer.type === 'Sequence' ? j.pre_tokenizer.pretokenizers : [j.pre_tokenizer];
  j.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: list.flatMap((p) => (p.type === 'ByteLevel' && p.use_regex !== false ? [split(GPT2_PATTERN), { ...p, use_regex: false }]
      : p.type === 'Digits' ? [split(p.individual_digits ? '\\p{N}' : '\\p{N}+')] : [p])),
  };
  return j;
}

/** ids of every string by both; {tried, equal, differ: [strings]} */
function agreement(ref, tok, strings) {
  const differ = [];
  for (const s of strings) if (!same(refEncode(ref, s), [...tok.encode(s)])) differ.push(s);
  return { tried: strings.length, equal: strings.length - differ.length, differ };
}

/** Random id sequences (1 to 20 ids) decoded by both: the count whose text agrees. */
function decodeAgreement(ref, tok, n, seed, normalize = (s) => s) {
  const rnd = rng(seed);
  let equal = 0;
  const differ = [];
  for (let i = 0; i < n; i++) {
    const ids = Array.from({ length: 1 + Math.floor(rnd() * 20) }, () => Math.floor(rnd() * tok.vocabSize));
    if (normalize(refDecode(ref, ids)) === normalize(tok.decode(ids))) equal++;
    else differ.push(ids);
  }
  return { tried: n, equal, differ };
}

const show = (s) => JSON.stringify(s).slice(0, 120);

for (const [name, family] of [['gpt2.json', 'byte-level'], ['smollm.json', 'byte-level + Digits'], ['llama.json', 'SentencePiece'], ['llama_meta.json', 'SentencePiece (Metaspace)']]) {
  test(`${name} (${family}): the ids and text of @huggingface/tokenizers`, async () => {
    const json = JSON.parse(new TextDecoder().decode(fixture(name)));
    const tok = await loadTokenizer(fixture(name));
    assert.equal(tok.kind, 'hf');
    assert.equal(tok.vocabSize, Math.max(...Object.values(json.model.vocab), ...json.added_tokens.map((a) => a.id)) + 1);
    const ref = new Reference(json, {});
    const sp = family.startsWith('SentencePiece');

    // ids: the file as written, and its Rust-library form
    const asWritten = agreement(ref, tok, CORPUS);
    const rust = agreement(new Reference(rustForm(json), {}), tok, CORPUS);
    console.log(`${name}: ${asWritten.tried} strings, ids equal ${asWritten.equal} as written, ${rust.equal} in the Rust library's form`);
    assert.equal(rust.equal, rust.tried, `ids differ (Rust form) on ${rust.differ.slice(0, 3).map(show).join(', ')}`);
    const explained = (s) => PORT_SPACES.test(s) || (name === 'smollm.json' && NON_ASCII_NUMBER.test(s));
    assert.deepEqual(asWritten.differ.filter((s) => !explained(s)).map(show), [], 'every difference is one of the port\'s');
    if (!sp) assert.ok(asWritten.differ.length > 0, 'the corpus has the characters where the port differs');

    // text: our ids decoded by both, and back to the string
    const strip = sp ? (s) => s.replaceAll('\ufeff', '') : (s) => s;
    let decoded = 0, exact = 0;
    const viaBom = [], changed = [];
    for (const s of CORPUS) {
      const ids = [...tok.encode(s)];
      const theirs = refDecode(ref, ids), ours = tok.decode(ids);
      if (theirs === ours) decoded++;
      else viaBom.push(s);
      if (ours === s) exact++;
      else changed.push([s, ours]);
    }
    console.log(`${name}: ${CORPUS.length} strings decoded: ${decoded} equal, ${viaBom.length} differ only by the port dropping U+FEFF; ${exact} round-trip exactly`);
    assert.deepEqual(viaBom.filter((s) => !(sp && s.includes('\ufeff'))).map(show), []);
    for (const s of viaBom) assert.equal(strip(refDecode(ref, [...tok.encode(s)])), strip(tok.decode(tok.encode(s))));
    // byte-level BPE gives any text back; SentencePiece-style does not (a ▁ comes back as a
    // space, each piece after a special token gets a ▁ in front, Metaspace's "first" leaves
    // a text's own leading space to the decoder's Strip), in the reference as here
    if (!sp) assert.deepEqual(changed.map(show), [], 'byte-level: every text decodes back to itself');

    // text of arbitrary ids, specials and byte tokens among them
    const d = decodeAgreement(ref, tok, 300, 99, strip);
    console.log(`${name}: ${d.tried} random id sequences decoded, ${d.equal} equal`);
    assert.equal(d.equal, d.tried, `decodes differ on ${JSON.stringify(d.differ.slice(0, 2))}`);

    // invalid UTF-8, which the libraries cannot be given: each invalid byte is a character of
    // its own, with no token (byte-level: its byte's; SentencePiece: byte fallback). The
    // reference decodes our ids to our text (U+FFFD for what is not UTF-8); byte-level BPE
    // gives the bytes back exactly
    let kept = 0, decodedAlike = 0;
    const bad = invalidUtf8(100);
    for (const b of bad) {
      const ids = [...tok.encode(b)];
      const back = tok.decodeBytes(ids);
      if (same([...back], [...b])) kept++;
      if (strip(refDecode(ref, ids)) === strip(lossy(back))) decodedAlike++;
    }
    console.log(`${name}: ${bad.length} invalid UTF-8 strings: the reference decodes ${decodedAlike} of our encodings to our text; ${kept} round-trip byte for byte`);
    assert.equal(decodedAlike, bad.length);
    if (!sp) assert.equal(kept, bad.length);
  });
}

test("wasmformer's BPE as a tokenizer.json: @huggingface/tokenizers encodes it alike, and it reads back as BPE", async () => {
  const austen = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').slice(0, 60_000);
  const bpe = await createTokenizer(austen + CORPUS.join('\n'), { kind: 'bpe', vocabSize: 1500 });
  const text = bpe.saveJSON();
  const json = JSON.parse(text);
  const ref = new Reference(json, {});
  const strings = [...CORPUS, ...hostileStrings(1500, 4242).slice(-1000)];
  const a = agreement(ref, bpe, strings);
  let decoded = 0;
  for (const s of strings) if (refDecode(ref, [...bpe.encode(s)]) === bpe.decode(bpe.encode(s))) decoded++;
  const d = decodeAgreement(ref, bpe, 300, 7);
  let kept = 0, lossyEqual = 0;
  const bad = invalidUtf8(100);
  for (const b of bad) {
    const ids = [...bpe.encode(b)];
    if (same([...bpe.decodeBytes(ids)], [...b])) kept++;
    if (refDecode(ref, ids) === lossy(b)) lossyEqual++;
  }
  console.log(`wasmformer BPE (1500 tokens): ${a.tried} strings, ids equal ${a.equal}, decoded equal ${decoded}; ` +
    `${d.tried} random id sequences, ${d.equal} equal; ${bad.length} invalid UTF-8: ${kept} kept byte for byte, ${lossyEqual} decoded alike`);
  assert.equal(a.equal, a.tried, `ids differ on ${a.differ.slice(0, 3).map(show).join(', ')}`);
  assert.equal(decoded, strings.length);
  assert.equal(d.equal, d.tried);
  assert.equal(kept, bad.length);
  assert.equal(lossyEqual, bad.length);
  // read back: the same BPE, byte for byte
  const back = await loadTokenizer(text);
  assert.equal(back.kind, 'bpe');
  assert.deepEqual(back.save(), bpe.save());
  assert.equal(back.saveJSON(), text);
  // a file that changes it is refused, not run differently
  const edited = structuredClone(json);
  edited.added_tokens = [{ id: 1500, content: '<x>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }];
  await assert.rejects(loadTokenizer(JSON.stringify(edited)), (e) => e.code === 'WF_ERR_UNSUPPORTED' && /wasmformer's pre-tokenizer/.test(e.message));
});

// ---- llama2.c ----

/** llama2.c's tokenizer.bin, and run.c's encode re-implemented from its description: a " "
 * token first, then each UTF-8 character (a byte and up to 3 continuation bytes) as its
 * piece or its bytes as ids byte + 3; then, while some adjacent pair joins into a piece
 * scoring above -1e10, the best-scoring one (the first of equals) merges. Quadratic, as run.c. */
function readTokenizerBin(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pieces = [], scores = [];
  for (let at = 4; at < bytes.length;) {
    scores.push(dv.getFloat32(at, true));
    const len = dv.getInt32(at + 4, true);
    pieces.push(Buffer.from(bytes.subarray(at + 8, at + 8 + len)).toString('latin1'));
    at += 8 + len;
  }
  const lookup = new Map();
  pieces.forEach((p, i) => { if (!lookup.has(p)) lookup.set(p, i); });
  return { pieces, scores, lookup };
}

function llama2cEncode({ pieces, scores, lookup }, text) {
  const ids = [];
  if (text.length === 0) return ids;
  ids.push(lookup.get(' '));
  for (let i = 0; i < text.length;) {
    let j = i + 1;
    while (j < text.length && (text[j] & 0xc0) === 0x80 && j - i < 4) j++;
    const id = lookup.get(Buffer.from(text.subarray(i, j)).toString('latin1'));
    if (id !== undefined) ids.push(id);
    else for (let k = i; k < j; k++) ids.push(text[k] + 3);
    i = j;
  }
  for (;;) {
    let best = -1e10, bestId = -1, at = -1;
    for (let i = 0; i + 1 < ids.length; i++) {
      const id = lookup.get(pieces[ids[i]] + pieces[ids[i + 1]]);
      if (id !== undefined && scores[id] > best) { best = scores[id]; bestId = id; at = i; }
    }
    if (at < 0) return ids;
    ids.splice(at, 2, bestId);
  }
}

test("llama2.c's tokenizer.bin: run.c's encode, its decode, BOS", async () => {
  const bin = fixture('llama2c_tok.bin');
  const tok = await loadTokenizer(bin);
  assert.equal(tok.kind, 'llama2c');
  const ref = readTokenizerBin(bin);
  assert.equal(tok.vocabSize, ref.pieces.length);
  assert.equal(tok.bos, 1);
  const strings = [...CORPUS.map((s) => encoder.encode(s)), ...invalidUtf8(100, 31)].filter((b) => !b.includes(0));
  let equal = 0, exact = 0;
  const differ = [];
  for (const b of strings) {
    const ids = [...tok.encode(b)];
    if (same(ids, llama2cEncode(ref, b))) equal++;
    else differ.push(lossy(b));
    if (same([...tok.decodeBytes(ids)], [...b])) exact++;
  }
  console.log(`llama2c_tok.bin: ${strings.length} strings (${strings.length - CORPUS.filter((s) => !s.includes('\0')).length} not UTF-8), ids equal ${equal}, ${exact} decode back byte for byte`);
  assert.equal(equal, strings.length, `ids differ on ${differ.slice(0, 3).map(show).join(', ')}`);
  assert.equal(exact, strings.length);
  // run.c's decode: a piece after BOS loses its leading space; "<0xHH>" is the byte
  const ids = [...tok.encode('Hello world')];
  assert.equal(tok.decode([1, ...ids]), '\n<s>\nHello world');
  assert.equal(tok.decode([ref.lookup.get('<0x41>')]), 'A');
  // the same vocabulary as llama.json encodes the Austen text as the tokenizer.json does (its
  // scores are the merges' ranks), though the two algorithms may differ on other texts
  const hf = await loadTokenizer(fixture('llama.json'));
  const austen = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').slice(0, 20_000);
  assert.deepEqual([...tok.encode(austen)], [...hf.encode(austen)]);
});

test('a llama2.c model with its tokenizer.bin: importLlama2c and generation from BOS', async () => {
  const bin = fixture('llama2c_tok.bin');
  const V = readTokenizerBin(bin).pieces.length;
  // a small llama2.c model file of this vocabulary: the header, then its weights
  const [C, F, L, H, T] = [16, 32, 1, 2, 32];
  const floats = V * C + L * C + L * C * C * 4 + L * C + L * F * C * 3 + C + T * (C / H / 2) * 2;
  const file = new DataView(new ArrayBuffer(28 + 4 * floats));
  [C, F, L, H, H, V, T].forEach((v, i) => file.setInt32(4 * i, v, true));
  const rnd = rng(5);
  for (let i = 0; i < floats; i++) file.setFloat32(28 + 4 * i, (rnd() - 0.5) * 0.2, true);
  const model = await importLlama2c(new Uint8Array(file.buffer), { tokenizer: bin, threads: 1 });
  assert.equal(model.tokenizer.kind, 'llama2c');
  let text = '';
  for await (const piece of model.generate('Once upon', { maxTokens: 12, seed: 3, temperature: 1 })) text += piece;
  assert.ok(text.length > 0, 'it generates');
  // the model saves and loads with its tokenizer (kind 4 in the checkpoint)
  const back = await loadModel(model.save());
  assert.equal(back.tokenizer.kind, 'llama2c');
  assert.deepEqual([...back.tokenizer.encode('Elizabeth')], [...model.tokenizer.encode('Elizabeth')]);
  // a tokenizer with more ids than the model is refused
  const small = new DataView(file.buffer.slice(0));
  small.setInt32(20, V - 1, true);
  await assert.rejects(importLlama2c(new Uint8Array(small.buffer, 0, 28 + 4 * (floats - C)), { tokenizer: bin }), (e) => e instanceof WfError);
  await assert.rejects(importLlama2c(new Uint8Array(file.buffer), { tokenizer: bin.subarray(0, 100) }), (e) => e.code === 'WF_ERR_FORMAT' && /tokenizer\.bin/.test(e.message));
  for (const m of [model, back]) m.dispose();
});

test('tokenizer.json with the weights: export writes it, import brings it, checkpoints keep it', async () => {
  const gpt2 = await loadTokenizer(fixture('gpt2.json'));
  const model = await createModel({ arch: 'decoder', vocabSize: gpt2.vocabSize, context: 16, nLayer: 1, nHead: 2, dModel: 16, dFF: 32 }, { tokenizer: gpt2, threads: 1 });
  const files = exportSafetensors(model);
  assert.equal(files['tokenizer.json'], new TextDecoder().decode(fixture('gpt2.json')), 'an hf tokenizer is written as the file it came from');
  const { 'tokenizer.wft': _, ...hfOnly } = files;
  const imported = await importSafetensors(hfOnly, { threads: 1 });
  assert.equal(imported.tokenizer.kind, 'hf');
  const s = "It's 2024: naïve café — 😀!";
  assert.deepEqual([...imported.tokenizer.encode(s)], [...gpt2.encode(s)]);
  const loaded = await loadModel(imported.save());
  assert.equal(loaded.tokenizer.kind, 'hf');
  assert.equal(loaded.tokenizer.saveJSON(), files['tokenizer.json']);
  // a char tokenizer gets both too (its tokenizer.json: the next test)
  const char = await createModel({ vocabSize: 8, context: 8, nLayer: 1, nHead: 2, dModel: 8, dFF: 16 }, { text: 'abc', threads: 1 });
  assert.deepEqual(Object.keys(exportSafetensors(char)).sort(), ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer.wft']);
  // a BPE one gets both, and the model's tokenizer.json alone brings it back as BPE
  const bpeModel = await createModel({ vocabSize: 300, context: 8, nLayer: 1, nHead: 2, dModel: 8, dFF: 16 }, { text: 'hello world '.repeat(50), tokenizer: 'bpe', threads: 1 });
  const bf = exportSafetensors(bpeModel);
  const { 'tokenizer.wft': __, ...bjson } = bf;
  const bback = await importSafetensors(bjson, { threads: 1 });
  assert.equal(bback.tokenizer.kind, 'bpe');
  assert.deepEqual(bback.tokenizer.save(), bpeModel.tokenizer.save());
  for (const m of [model, imported, loaded, char, bpeModel, bback]) m.dispose();
});

test("the char tokenizer as a tokenizer.json: @huggingface/tokenizers encodes and decodes it as wasmformer does", async () => {
  // the default model's tokenizer: the characters of a text; every other character is <unk>, id 0
  const austen = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
  const char = await createTokenizer(austen.slice(0, 200_000) + 'é"\\\t\u0001😀\ufffd', { kind: 'char' });
  const text = char.saveJSON();
  const ref = new Reference(JSON.parse(text), {});
  const strings = [austen.slice(300_000, 302_000), 'naïve café <unk> "quoted" \\ \t 😀😀 \u0001', '<unk><unk>', '', ...CORPUS];
  const a = agreement(ref, char, strings);
  let decoded = 0;
  for (const s of strings) if (refDecode(ref, [...char.encode(s)]) === char.decode(char.encode(s))) decoded++;
  const d = decodeAgreement(ref, char, 300, 11);
  const unknown = strings.reduce((n, s) => n + [...char.encode(s)].filter((id) => id === 0).length, 0);
  console.log(`char tokenizer (${char.vocabSize} ids) as tokenizer.json: ${a.tried} strings (${unknown} unknown characters), ids equal ${a.equal}, ` +
    `decoded equal ${decoded}; ${d.tried} random id sequences, ${d.equal} decoded alike`);
  assert.ok(unknown > 100, 'the hostile strings bring characters the vocabulary lacks');
  assert.equal(a.equal, a.tried, `ids differ on ${a.differ.slice(0, 3).map(show).join(', ')}`);
  assert.equal(decoded, strings.length);
  assert.equal(d.equal, d.tried);
  assert.equal(refDecode(ref, [0, ...char.encode('a')]), '\ufffda', '<unk> decodes to U+FFFD, as ours');
  // read back by wasmformer: a Hugging Face tokenizer that encodes alike
  const back = await loadTokenizer(text);
  assert.equal(back.kind, 'hf');
  for (const s of strings) assert.deepEqual([...back.encode(s)], [...char.encode(s)], show(s));
});

test('tokenizer.json: components this build does not run are refused by name; bad files say what is wrong', async () => {
  const base = JSON.parse(new TextDecoder().decode(fixture('llama.json')));
  const cases = [
    [(j) => { j.normalizer = { type: 'NFC' }; }, 'WF_ERR_UNSUPPORTED', /normalizer NFC/],
    [(j) => { j.pre_tokenizer = { type: 'Whitespace' }; }, 'WF_ERR_UNSUPPORTED', /pre-tokenizer Whitespace/],
    [(j) => { j.model.type = 'WordPiece'; }, 'WF_ERR_UNSUPPORTED', /model WordPiece/],
    [(j) => { j.model.dropout = 0.1; }, 'WF_ERR_UNSUPPORTED', /dropout/],
    [(j) => { j.decoder = { type: 'CTC' }; }, 'WF_ERR_UNSUPPORTED', /decoder CTC/],
    [(j) => { j.added_tokens[1].lstrip = true; }, 'WF_ERR_UNSUPPORTED', /lstrip/],
    [(j) => { j.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }; }, 'WF_ERR_UNSUPPORTED', /split/],
    [(j) => { j.pre_tokenizer = { type: 'Split', pattern: { Regex: '\\w+' }, behavior: 'Isolated', invert: false }; }, 'WF_ERR_UNSUPPORTED', /Split/],
    [(j) => { j.model.merges.push('zzzq qqqz'); }, 'WF_ERR_FORMAT', /merge \d+ .*not in the vocabulary/],
    [(j) => { delete j.model.vocab['<0x41>']; }, 'WF_ERR_FORMAT', /id \d+ has no token/],
    [(j) => { j.model.unk_token = '<nope>'; }, 'WF_ERR_FORMAT', /unk_token/],
    [(j) => { j.model = 3; }, 'WF_ERR_FORMAT', /model/],
  ];
  const tok = await loadTokenizer(fixture('gpt2.json'));
  const before = tok.save();
  for (const [edit, code, message] of cases) {
    const j = structuredClone(base);
    edit(j);
    await assert.rejects(loadTokenizer(JSON.stringify(j)), (e) => e.code === code && message.test(e.message), `${edit}`);
  }
  await assert.rejects(loadTokenizer('{"model": '), (e) => e.code === 'WF_ERR_FORMAT' && /tokenizer\.json/.test(e.message));
  await assert.rejects(loadTokenizer(fixture('llama.json'), { fromat: 'json' }), /fromat/);
  assert.deepEqual(tok.save(), before, 'the refusals touched no other tokenizer');
});
