// Writes issue 25's hostile files into tests/fuzz/regressions/<target>/ (ctest replays them
// through the fuzz targets in every build, the 32-bit one included). Each crashed or broke a
// property on 6655a24 in a build where size_t is 32 bits (wasm, -m32):
//   tokjson/issue25-replace7.json     a normalizer of 7 Replace steps, "c" -> 16 "c" each:
//                                     one "c" became 2^28 of them, whose symbols' bytes wrapped
//                                     (grow_syms: 2^30 * 4 = 0) and were written past the heap
//   tokjson/issue25-replace8-added.json  8 such steps and a normalized added token "c": its
//                                     normalized length 16^8 wrapped to 1 byte (most = len * b + 1)
//   tokjson/issue25-decoder7.json     a decoder of 7 such steps: 682 bytes loaded to 543 MB (the
//                                     token "c" decoded to 2^28 bytes; 8 steps: NOMEM after 4.4 GB)
//   safetensors/issue25-aliased       config.json of 12 layers over a 2-layer file whose
//                                     layers 2..11 name layer 1's bytes: a model larger than
//                                     its file (the fuzz target's property: 2 bytes per parameter)
// Usage: node tests/fuzz/make_issue25.mjs
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = (target, name, bytes) => {
  mkdirSync(join(here, 'regressions', target), { recursive: true });
  writeFileSync(join(here, 'regressions', target, name), bytes);
};

const replace = { type: 'Replace', pattern: { String: 'c' }, content: 'c'.repeat(16) };
const model = { type: 'BPE', vocab: { a: 0, b: 1, c: 2 }, merges: [] };
out('tokjson', 'issue25-replace7.json', JSON.stringify({ normalizer: { type: 'Sequence', normalizers: Array(7).fill(replace) }, model }));
out('tokjson', 'issue25-replace8-added.json', JSON.stringify({
  normalizer: { type: 'Sequence', normalizers: Array(8).fill(replace) }, model,
  added_tokens: [{ id: 2, content: 'c', normalized: true, special: false }],
}));
out('tokjson', 'issue25-decoder7.json', JSON.stringify({
  decoder: { type: 'Sequence', decoders: Array(7).fill(replace) },
  model,
}));

// safetensors: the target's input is a u16 length, config.json, then the file
const fixture = join(here, '..', 'fixtures', 'hf_gpt2_tied');
const config = JSON.parse(readFileSync(join(fixture, 'config.json'), 'utf8'));
config.n_layer = 12;
const st = readFileSync(join(fixture, 'model.safetensors'));
const hlen = Number(st.readBigUInt64LE(0));
const header = JSON.parse(st.subarray(8, 8 + hlen).toString('utf8'));
for (let l = 2; l < 12; l++) {
  for (const [name, entry] of Object.entries(header)) {
    if (name.startsWith('transformer.h.1.')) header[name.replace('.h.1.', `.h.${l}.`)] = entry;
  }
}
const h = Buffer.from(JSON.stringify(header));
const len = Buffer.alloc(8);
len.writeBigUInt64LE(BigInt(h.length));
const cfg = Buffer.from(JSON.stringify(config));
const k = Buffer.alloc(2);
k.writeUInt16LE(cfg.length);
out('safetensors', 'issue25-aliased', Buffer.concat([k, cfg, len, h, st.subarray(8 + hlen)]));
