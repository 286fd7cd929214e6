// Reads the WFFX fixtures of tests/fixtures (format in gen_gpt_fixture.py and gen_arch_fixture.py),
// and the scaffolding of the tests that compare the wasm build with the native one.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  if (fx.config_recipe) { // issue 14's options (tests/fixtures/gen_recipe_fixture.py)
    cfg.qkNorm = fx.config_recipe.data[0] === 1;
    cfg.zeroProj = fx.config_recipe.data[1] === 1;
    cfg.logitCap = fx.config_recipe.data[2];
  }
  if (fx.config_gqa) { // issue 15's (gen_gqa_fixture.py)
    cfg.nKvHead = fx.config_gqa.data[0];
    cfg.ropeTheta = fx.config_gqa.data[1];
  }
  if (fx.config_lora) { // issue 15's LoRA (gen_lora_fixture.py): rank, alpha, targets
    [cfg.loraRank, cfg.loraAlpha, cfg.loraTargets] = fx.config_lora.data;
  }
  return cfg;
}

/** The largest |a[i] - b[i]| of two arrays of the same length. */
export function maxAbs(a, b) {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** A file of raw little-endian float32 values (what the native tests' --dump writes). */
export const readF32 = (path) => new Float32Array(new Uint8Array(readFileSync(path)).buffer);

/**
 * Runs the native test program exe with --dump into a fresh folder and calls fn(folder),
 * then removes it. Without the program the test t is skipped, except in CI (npm test
 * builds it before the node tests), where that fails.
 */
export async function withNativeDump(t, exe, fn) {
  if (!existsSync(exe)) {
    if (process.env.CI) assert.fail(`${exe} is missing: npm test builds it before the node tests`);
    t.skip(`${exe} not built (run npm test, which builds it first)`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'wf-native-'));
  try {
    execFileSync(exe, ['--dump', dir], { stdio: 'ignore' });
    await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
