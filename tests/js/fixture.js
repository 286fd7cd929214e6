// Reads the WFFX fixtures of tests/fixtures (format in gen_gpt_fixture.py and gen_arch_fixture.py).
import { readFileSync } from 'node:fs';

export function readFixture(path) {
  const buf = readFileSync(path);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf.toString('latin1', 0, 4) !== 'WFFX' || dv.getUint32(4, true) !== 1) throw new Error(`${path}: not a WFFX v1 file`);
  const n = dv.getUint32(8, true);
  let off = 12;
  const out = {};
  for (let i = 0; i < n; i++) {
    const len = dv.getUint32(off, true); off += 4;
    const name = buf.toString('utf8', off, off + len); off += len;
    const dtype = dv.getUint32(off, true), ndim = dv.getUint32(off + 4, true); off += 8;
    const dims = [];
    for (let d = 0; d < ndim; d++) { dims.push(dv.getUint32(off, true)); off += 4; }
    const count = dims.reduce((a, b) => a * b, 1);
    const bytes = buf.subarray(off, off + count * 4);
    const copy = new Uint8Array(bytes).buffer; // aligned copy
    out[name] = { dims, data: dtype === 1 ? new Int32Array(copy) : new Float32Array(copy) };
    off += count * 4;
  }
  return out;
}

// The fixture's config fields (in wf_config order) as a JavaScript config.
const FIELDS = ['arch', 'norm', 'block', 'activation', 'positions', 'tiedHead', 'bias', 'vocabSize', 'context',
  'nLayer', 'nHead', 'dModel', 'dFF'];

export function fixtureConfig(fx) {
  const cfg = {};
  FIELDS.forEach((k, i) => { cfg[k] = fx.config.data[i]; });
  cfg.tiedHead = cfg.tiedHead === 1;
  cfg.bias = cfg.bias === 1;
  cfg.normEps = fx.norm_eps.data[0];
  if (fx.config_ext) {
    cfg.nEncLayer = fx.config_ext.data[0];
    cfg.maxBeam = fx.config_ext.data[1];
  }
  return cfg;
}
