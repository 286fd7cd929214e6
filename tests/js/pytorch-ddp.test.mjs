// examples/pytorch/ end to end, where /usr/bin/python3 has torch and torchrun is installed:
// a small model trained a few steps in wasm is exported (export.mjs), trained on by PyTorch's
// DistributedDataParallel in two Gloo processes under torchrun (train_ddp.py), and imported
// back, in Node and (with Chromium) in a page (browser.mjs). Checked: PyTorch's validation
// loss of the exported model equals wasmformer's; the DDP losses fall; both processes end
// with identical weights; wasmformer's logits for the probe ids equal PyTorch's within 1e-4;
// generation runs in Node and in the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importSafetensorsDir } from '../../src/js/node.js';
import { exportForPyTorch } from '../../examples/pytorch/export.mjs';
import { checkLogits, readSafetensors } from '../../examples/pytorch/generate.mjs';
import { serveExample } from '../../examples/pytorch/browser.mjs';

const PYTHON = '/usr/bin/python3';
const TORCHRUN = '/usr/bin/torchrun';
const CHROMIUM = '/usr/bin/chromium';
const TOL = 1e-4; // float32 logits of a 2-layer model, SIMD kernels against PyTorch's: ~2e-6 seen
const TEXT = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').slice(0, 200000);
const LLAMA = { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', bias: false, normEps: 1e-5 };
const SMALL = { nLayer: 2, nHead: 4, dModel: 64, context: 64, seed: 3 };

const mean = (a) => a.reduce((s, x) => s + x, 0) / a.length;

/** The model's logits for ids in the page, and a greedy continuation of a prompt. */
async function inChromium(dir, ids, B, T) {
  const { chromium } = await import('playwright-core');
  const site = await serveExample(dir, { port: 0 });
  const browser = await chromium.launch({
    executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${site.origin}/`);
    return await page.evaluate(async ({ ids, B, T }) => {
      const ex = await window.example;
      if (ex.error) return { error: ex.error };
      const logits = Array.from(ex.model.forward(new Int32Array(ids), null, B, T).logits);
      const text = await ex.model.generateText('It is a truth', { maxTokens: 40, temperature: 0 });
      return { logits, text, threads: ex.model.info().threads, status: document.getElementById('status').textContent };
    }, { ids: Array.from(ids), B, T });
  } finally {
    await browser.close();
    await site.close();
  }
}

for (const [layout, config] of [
  ['Llama layout, grouped-query 4 over 2, tied, rope_theta 1e5', { ...SMALL, ...LLAMA, nKvHead: 2, dFF: 172, tiedHead: true, ropeTheta: 1e5 }],
  ['GPT-2 layout', { ...SMALL, dFF: 256 }],
  // the default model of `wasmformer train` (micro: RoPE, LayerNorm, biases) as a GPTNeoXForCausalLM
  ['GPT-NeoX layout, the model `wasmformer train` makes by default', 'cli'],
]) test(`examples/pytorch (${layout}): wasmformer -> PyTorch DDP, 2 processes -> wasmformer in Node and the browser`, async (t) => {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0 || !existsSync(TORCHRUN)) {
    t.skip(`${PYTHON} cannot import torch or ${TORCHRUN} is missing (sudo apt-get install -y python3-torch): the DDP round trip is skipped`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'wf-ddp-'));
  const text = join(dir, 'text.txt');
  writeFileSync(text, TEXT);
  try {
    let exported;
    if (config === 'cli') {
      const model = join(dir, 'model.wf');
      const cli = spawnSync(process.execPath, ['bin/wasmformer.js', 'train', text, '--steps', '30', '--eval-interval', '0', '--out', model], { encoding: 'utf8' });
      assert.equal(cli.status, 0, cli.stderr);
      exported = await exportForPyTorch({ out: dir, model, text, valFraction: 0.1 });
      const hf = JSON.parse(readFileSync(join(dir, 'wasmformer', 'config.json'), 'utf8'));
      assert.deepEqual([hf.architectures[0], hf.use_parallel_residual, hf.rotary_pct], ['GPTNeoXForCausalLM', false, 1]);
    } else {
      exported = await exportForPyTorch({ out: dir, text, layout: config.norm ? 'llama' : 'gpt2', config, steps: 30, valFraction: 0.1, seed: 3 });
    }
    // Debian's torchrun 1.13 under Python 3.11 cannot parse its own default "--redirects 0"
    // (an IntFlag lookup); "1" parses, and --tee 1 puts the output back on the console
    // coreutils' timeout bounds the run and on expiry kills its whole process group (torchrun
    // and both workers), so a hung process fails the test instead of stalling npm test (40
    // steps take seconds; a hang at exit, which train_ddp.py now avoids, once took 25 minutes)
    const r = spawnSync('timeout', ['-s', 'KILL', '300', TORCHRUN, '--standalone', '--nproc_per_node', '2', '--redirects', '1', '--tee', '1',
      'examples/pytorch/train_ddp.py', '--data', dir, '--steps', '40', '--batch', '8', '--lr', '3e-3', '--impl', 'plain'],
    { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: '1' } });
    const out = r.stdout.split('\n').filter((l) => l.startsWith('[default0]:')).map((l) => l.slice(11)).join('\n');
    console.log(out);
    // on expiry timeout kills its own process group, itself included: the run ends by SIGKILL
    assert.equal(r.status, 0, `torchrun failed${r.signal === 'SIGKILL' ? ' (killed after 300 s)' : ''}:\n${r.stdout}\n${r.stderr}`);
    const report = JSON.parse(readFileSync(join(dir, 'pytorch', 'report.json'), 'utf8'));
    assert.equal(report.world_size, 2);
    assert.equal(report.backend, 'gloo');

    const [, valBefore] = report.validation[0], [, valAfter] = report.validation.at(-1);
    const dv = Math.abs(valBefore - exported.valLoss);
    console.log(`validation loss of the export: wasmformer ${exported.valLoss.toFixed(6)}, PyTorch ${valBefore.toFixed(6)} (diff ${dv.toExponential(2)}); ` +
      `after 40 DDP steps ${valAfter.toFixed(4)}; training loss, first 10 steps ${mean(report.losses.slice(0, 10)).toFixed(4)}, last 10 ${mean(report.losses.slice(-10)).toFixed(4)}`);
    assert.ok(dv < 1e-4, 'PyTorch reads the exported model as wasmformer runs it');
    assert.ok(mean(report.losses.slice(-10)) < mean(report.losses.slice(0, 10)), 'the training loss falls');
    assert.ok(valAfter < valBefore, 'the validation loss falls');
    assert.equal(report.fingerprints.length, 2);
    assert.equal(report.fingerprints[0], report.fingerprints[1], 'both processes hold the same weights');
    assert.equal(report.identical_weights, true);

    const model = await importSafetensorsDir(join(dir, 'pytorch'));
    const { worst, B, T } = await checkLogits(model, join(dir, 'pytorch'));
    console.log(`wasmformer (Node) against PyTorch on the probe [${B}, ${T}]: logits max abs diff ${worst.toExponential(2)} (tolerance ${TOL})`);
    assert.ok(worst <= TOL);
    const text1 = await model.generateText('It is a truth', { maxTokens: 40, temperature: 0 });
    console.log(`Node, greedy: ${JSON.stringify(text1)}`);
    assert.ok(text1.length > 0);
    assert.equal(await model.generateText('It is a truth', { maxTokens: 40, temperature: 0 }), text1, 'greedy is deterministic');
    model.dispose();

    if (!existsSync(CHROMIUM)) {
      t.diagnostic(`${CHROMIUM} not installed (sudo apt-get install -y chromium): the browser half is skipped`);
      return;
    }
    const probe = readSafetensors(readFileSync(join(dir, 'pytorch', 'probe.safetensors')));
    const page = await inChromium(join(dir, 'pytorch'), probe.input_ids.data, B, T);
    assert.equal(page.error, undefined, page.error);
    let pageWorst = 0;
    page.logits.forEach((v, i) => { pageWorst = Math.max(pageWorst, Math.abs(v - probe.logits.data[i])); });
    console.log(`wasmformer (Chromium, ${page.threads} thread(s)) against PyTorch: logits max abs diff ${pageWorst.toExponential(2)}; greedy: ${JSON.stringify(page.text)}`);
    assert.ok(pageWorst <= TOL);
    assert.ok(page.text.length > 0);
    assert.match(page.status, /parameters/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
