// The command line (bin/wasmformer.js), run as a user runs it: each command, its output,
// its exit codes, --help everywhere, one-line errors with exit code 2 for bad arguments,
// Ctrl-C during training (save, exit 130, resume to the very bytes of an uninterrupted run),
// SIGTERM, SIGHUP and a closed output saving too, --out checked before training, periodic
// checkpoints.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_FIELDS, OPTIM_FIELDS, TRAIN_DEFAULTS, createModel, loadModelFile, saveModelFile } from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';

const BIN = fileURLToPath(new URL('../../bin/wasmformer.js', import.meta.url));
const CORPUS = fileURLToPath(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'wf-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const TEXT = join(dir, 'part.txt');
writeFileSync(TEXT, readFileSync(CORPUS, 'utf8').slice(0, 60000));
// a model small enough to take hundreds of steps a second
const MICRO = JSON.stringify({ nLayer: 1, nHead: 2, dModel: 32, dFF: 64, context: 32 });
// its vocabulary is the text's characters and <unk>
const VOCAB = new Set(readFileSync(TEXT, 'utf8')).size + 1;
async function microParams() {
  const m = await createModel({ preset: 'micro', ...JSON.parse(MICRO), vocabSize: VOCAB });
  const n = m.paramCount.toLocaleString('en-US');
  m.dispose();
  return n;
}

function cli(args, opts = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', ...opts });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('--help on the program and on every command', () => {
  const main = cli(['--help']);
  assert.equal(main.code, 0);
  for (const c of ['train', 'finetune', 'generate', 'eval', 'info', 'export', 'import']) assert.match(main.out, new RegExp(`^  ${c} `, 'm'));
  const bare = cli([]);
  assert.equal(bare.code, 2, 'no command is a usage error');
  assert.match(bare.err, /Usage: wasmformer <command>/);
  const options = {
    train: ['--preset', '--config', '--steps', '--out', '--resume', '--force', '--batch', '--lr', '--eval-interval', '--val-fraction', '--seed', '--tokenizer', '--vocab'],
    generate: ['--prompt', '--tokens', '--temperature', '--top-k', '--top-p', '--seed', '--stop', '--allow-unknown'],
    eval: ['--max-tokens', '--json'],
    info: ['--json'],
    export: ['--format', '--out'],
    import: ['--out', '--force'],
    finetune: ['--lora-rank', '--lora-alpha', '--lora-targets', '--train', '--steps', '--lr', '--batch', '--eval-interval',
      '--val-fraction', '--seed', '--out', '--force', '--peft', '--merge'],
  };
  for (const [c, flags] of Object.entries(options)) {
    for (const h of ['--help', '-h']) {
      const r = cli([c, h]);
      assert.equal(r.code, 0);
      assert.match(r.out, new RegExp(`^Usage: wasmformer ${c} `));
      for (const f of [...flags, '--help']) assert.match(r.out, new RegExp(` ${f}\\b`), `${c} --help lists ${f}`);
    }
  }
  // train has a flag per config field and optimizer setting of the package's table (but
  // those it sets its own way), with the field's meaning
  const train = cli(['train', '--help']).out;
  const own = new Set(['arch', 'nEncLayer', 'maxBeam', 'vocabSize', 'seed', 'lr', 'start', 'loraRank', 'loraAlpha', 'loraTargets']);
  for (const f of [...CONFIG_FIELDS, ...OPTIM_FIELDS].filter((x) => !own.has(x.name))) {
    const flag = f.name.replace(/[A-Z]+/g, (m) => `-${m.toLowerCase()}`);
    assert.ok(train.split('\n').some((l) => l.includes(` --${flag} `) && l.includes(f.meaning)), `train --help lists --${flag}: ${f.meaning}`);
  }
  assert.match(cli(['--version']).out, /^\d+\.\d+\.\d+\n$/);
});

test('bad arguments: one line on stderr, nothing on stdout, exit code 2', () => {
  writeFileSync(join(dir, 'exists.wf'), 'x');
  const cases = [
    [['frob'], /unknown command "frob"/],
    [['train', '--stpes', '5'], /unknown option '--stpes'; did you mean --steps\?/],
    [['generate', 'm.wf', '--temprature', '1'], /unknown option '--temprature'; did you mean --temperature\?/],
    // a shortened flag names the one flag it begins
    [['generate', 'm.wf', '--temp', '1'], /unknown option '--temp'; did you mean --temperature\?/],
    [['train', '--val', '0.1'], /unknown option '--val'; did you mean --val-fraction\?/],
    [['train', '--eval', '10'], /unknown option '--eval' \(see/], // --eval-interval or --eval-mode: no guess
    // a bare number of seconds or minutes? the unit is required
    [['train', '--time', '5'], /--time 5 has no unit: write 5s, 5m or 5h/],
    [['export', 'm.wf', '--out', 'x', '--merge=yes'], /'--merge' does not take an argument/],
    [['train', '--zzzzzz'], /unknown option '--zzzzzz' \(see/],
    [['train', '--steps'], /--steps <value>' argument missing/],
    [['train', '--steps', 'many'], /--steps must be an integer >= 1, not "many"/],
    [['train', '--steps', '0'], /--steps must be an integer >= 1/],
    [['train', '--lr', '0'], /--lr must be a number > 0, not "0"/],
    [['train', '--lr', '-1'], /option '--lr' argument is ambiguous: write --lr=VALUE for a value that starts with a dash/],
    [['train', '--lr=-1'], /--lr must be a number > 0, not "-1"/],
    [['train', '--val-fraction', '1'], /--val-fraction must be a number in \[0, 1\)/],
    [['train', '--preset', 'huge'], /--preset must be one of micro, tiny, baby/],
    [['train', '--config', '{nope'], /--config must be a JSON object/],
    [['train', '--config', '[1]'], /--config must be a JSON object/],
    [['train', 'a.txt', 'b.txt'], /unexpected argument "b.txt"/],
    [['train', '--out', 'exists.wf'], /exists.wf exists: add --resume .* or --force/],
    [['train', '--out', 'missing.wf', '--resume'], /nothing to resume: missing.wf does not exist/],
    [['train', '--out', 'exists.wf', '--resume', '--preset', 'tiny'], /--preset cannot be combined with --resume/],
    [['train', '--out', 'exists.wf', '--resume', '--seed', '1'], /--seed cannot be combined with --resume/],
    [['train', '--resume', '--force'], /contradict/],
    [['train', '--resume=yes'], /'-r, --resume' does not take an argument/],
    [['generate'], /missing <model.wf>/],
    [['generate', 'm.wf', '--tokens=-3'], /--tokens must be an integer >= 0/],
    [['generate', 'm.wf', '--temperature', 'hot'], /--temperature must be a number >= 0/],
    [['generate', 'm.wf', '--top-p', '0'], /--top-p must be a number in \(0, 1\]/],
    [['eval', 'm.wf'], /missing <file.txt>/],
    [['eval', 'm.wf', 'a.txt', '--max-tokens', 'x'], /--max-tokens must be an integer >= 1/],
    [['info'], /missing <model.wf>/],
    [['train', '--tokenizer', 'wordpiece'], /--tokenizer must be char or bpe/],
    [['train', '--vocab', '300'], /--vocab goes with --tokenizer bpe/],
    [['train', '--tokenizer', 'bpe', '--vocab', '100'], /--vocab must be an integer >= 257/],
    [['export', 'm.wf'], /--out DIR is required/],
    [['export', 'm.wf', '--format', 'onnx', '--out', 'x'], /--format must be safetensors or gguf, not "onnx"/],
    [['export'], /missing <model.wf>/],
    [['import', 'dir'], /--out FILE is required/],
    [['import', 'dir', '--out', 'exists.wf'], /exists.wf exists: add --force/],
    [['info', 'a.wf', 'b.wf'], /unexpected argument "b.wf"/],
    // the table's flags, checked against each field's type and range
    [['train', '--n-layer', '0'], /--n-layer must be an integer in \[1, 1024\], not "0"/],
    [['train', '--d-model', '1.5'], /--d-model must be an integer in \[1, 1048576\], not "1.5"/],
    [['train', '--norm-eps', '0'], /--norm-eps must be a number in \(0, 1\), not "0"/],
    [['train', '--dropout', '1'], /--dropout must be a number in \[0, 1\), not "1"/],
    [['train', '--positions', 'alibi'], /--positions must be one of learned, sinusoidal, rope, not "alibi"/],
    [['train', '--bias', 'yes'], /--bias must be true or false, not "yes"/],
    [['train', '--weight-decay=-1'], /--weight-decay must be a number >= 0, not "-1"/],
    [['train', '--out', 'exists.wf', '--resume', '--n-head', '2'], /--n-head cannot be combined with --resume/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}, stderr ${r.err}`);
    assert.equal(r.out, '', `${args.join(' ')} prints nothing on stdout`);
    assert.equal(r.err.split('\n').length, 2, `one line: ${r.err}`);
    assert.match(r.err, new RegExp(`^wasmformer( ${args[0] === 'frob' ? '' : args[0]})?: `));
    assert.match(r.err, message);
    assert.match(r.err, /\(see wasmformer( \w+)? --help\)\n$/);
  }
});

test('failures: one line on stderr with the core\'s message, exit code 1', () => {
  writeFileSync(join(dir, 'garbage.wf'), 'not a checkpoint at all, but long enough to be read');
  writeFileSync(join(dir, 'short.txt'), 'too short to train on');
  writeFileSync(join(dir, 'short400.txt'), readFileSync(CORPUS, 'utf8').slice(0, 400)); // a validation split of 40 characters
  const cases = [
    [['train', 'short.txt', '--out', 'n.wf'], /^wasmformer train: the training split has \d+ tokens; a window of T = 64 needs at least 65/],
    [['train', 'nonexistent.txt', '--out', 'n.wf'], /^wasmformer train: cannot read nonexistent.txt: no such file$/],
    // the missing input is the problem, not the output that exists
    [['train', 'nonexistent.txt', '--out', 'exists.wf'], /^wasmformer train: cannot read nonexistent.txt: no such file$/],
    [['finetune', 'exists.wf', 'nonexistent.txt', '--out', 'exists.wf'], /^wasmformer finetune: cannot read nonexistent.txt: no such file$/],
    [['finetune', 'nowhere.wf', TEXT, '--out', 'exists.wf'], /^wasmformer finetune: cannot read nowhere.wf: no such file or folder$/],
    [['train', TEXT, '--out', 'n.wf', '--config', '{"nHead":3}'], /^wasmformer train: .*does not divide/],
    [['train', TEXT, '--out', 'n.wf', '--config', '{"norm":"batchnorm"}'], /^wasmformer train: norm must be one of "layernorm", "rmsnorm", not "batchnorm"/],
    // a misspelled key in --config is refused, naming the key it meant (it used to train the default model)
    [['train', TEXT, '--out', 'n.wf', '--config', '{"nlayer":2}'], /^wasmformer train: unknown key "nlayer" in the config; did you mean "nLayer"\?/],
    // the package's option names become the flags: --val-fraction, not valFraction
    [['train', 'short400.txt', '--out', 'n.wf'], /^wasmformer train: the validation split has 40 tokens; a window of T = 64 needs at least 65 \(more tokens, a larger --val-fraction, or none\)$/],
    [['generate', 'nonexistent.wf'], /^wasmformer generate: cannot read nonexistent.wf: no such file$/],
    [['info', 'garbage.wf'], /^wasmformer info: garbage.wf: .*/],
    [['eval', 'garbage.wf', TEXT], /^wasmformer eval: garbage.wf: /],
    [['import', '.', '--out', 'n.wf'], /^wasmformer import: \. has no config.json$/],
    // the keys the command sets under flags: --batch, --grad-clip (and a quoted JSON key stays)
    [['train', TEXT, '--out', 'n.wf', '--batch', '100000000'], /needs [\d.]+ GB for its ids alone; .* \(use a smaller --batch\)$/],
    [['train', TEXT, '--out', 'n.wf', '--config', MICRO, '--steps', '5', '--lr', '1e6', '--eval-interval', '0'],
      /^wasmformer train: training diverged: .* try a lower lr \(or a smaller --grad-clip\)$/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args);
    assert.equal(r.code, 1, `${args.join(' ')}: exit ${r.code}, stderr ${r.err}`);
    assert.equal(r.err.split('\n').length, 2, `one line: ${r.err}`);
    assert.match(r.err.trimEnd(), message);
  }
  assert.ok(!existsSync(join(dir, 'n.wf')), 'a failed start writes no model');
});

test('the table\'s flags build the model and set the optimizer', async () => {
  const r = cli(['train', TEXT, '--n-layer', '1', '--n-head', '2', '--d-model', '32', '--d-ff', '64', '--context', '32',
    '--norm', 'rmsnorm', '--positions', 'rope', '--bias', 'false', '--tied-head', 'false', '--weight-decay', '0.05',
    '--grad-clip', '0.5', '--steps', '3', '--eval-interval', '0', '--out', 'flags.wf']);
  assert.equal(r.code, 0, r.err);
  const model = await loadModelFile(join(dir, 'flags.wf'));
  assert.deepEqual(
    Object.fromEntries(['nLayer', 'nHead', 'dModel', 'dFF', 'context', 'norm', 'positions', 'bias', 'tiedHead'].map((k) => [k, model.config[k]])),
    { nLayer: 1, nHead: 2, dModel: 32, dFF: 64, context: 32, norm: 'rmsnorm', positions: 'rope', bias: false, tiedHead: false });
  assert.equal(model.optimizer.weightDecay, 0.05);
  assert.equal(model.optimizer.gradClip, 0.5);
  model.dispose();
});

test('the recipe options of issue 14 have flags: QK-norm, ReLU², zero projections, a logit cap, Muon', async () => {
  const r = cli(['train', TEXT, '--n-layer', '1', '--n-head', '2', '--d-model', '32', '--d-ff', '64', '--context', '32',
    '--qk-norm', 'true', '--activation', 'relu2', '--zero-proj', 'true', '--logit-cap', '30', '--muon', '1',
    '--muon-momentum', '0.9', '--steps', '3', '--eval-interval', '0', '--out', 'recipe.wf']);
  assert.equal(r.code, 0, r.err);
  const model = await loadModelFile(join(dir, 'recipe.wf'));
  assert.deepEqual(Object.fromEntries(['qkNorm', 'activation', 'zeroProj', 'logitCap'].map((k) => [k, model.config[k]])),
    { qkNorm: true, activation: 'relu2', zeroProj: true, logitCap: 30 });
  assert.equal(model.optimizer.muon, 1);
  assert.equal(model.optimizer.muonMomentum, 0.9);
  assert.equal(model.step, 3);
  model.dispose();
});

test('train, info, generate and eval on one model', async () => {
  const r = cli(['train', TEXT, '--config', MICRO, '--steps', '60', '--eval-interval', '20', '--seed', '4', '--out', 'm.wf']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  const lines = r.out.trimEnd().split('\n');
  assert.equal(lines[0], `training micro ${MICRO}, ${await microParams()} parameters, on part.txt (60,000 characters) until step 60, batches of 16 x 32 tokens; saving to m.wf (a checkpoint every 5m00s)`);
  const progress = lines.slice(1, -1);
  assert.deepEqual(progress.map((l) => Number(l.match(/^step (\d+)\/60 /)?.[1])), [20, 40, 60], r.out);
  for (const l of progress) assert.match(l, /^step \d+\/60 {2}loss \d+\.\d{3} {2}val \d+\.\d{3} {2}[\d.]+k? tok\/s {2}ETA \d+s$/);
  // the final val is all of the held-out split (deterministic), with its bits per character
  const [, finalVal, finalBpc] = lines.at(-1).match(/^done: step 60, loss \d+\.\d{3}, val (\d+\.\d{3}) \((\d+\.\d{3}) bpc\), .* tok\/s, \d+s; saved m.wf \(0\.\d MB\)$/) ?? [];
  assert.ok(finalVal, lines.at(-1));
  assert.equal(Number(finalBpc).toFixed(2), (Number(finalVal) / Math.LN2).toFixed(2));

  const info = cli(['info', 'm.wf']);
  assert.equal(info.code, 0);
  assert.match(info.out, /^file {8}m.wf \(0\.\d MB\)$/m);
  assert.match(info.out, new RegExp(`^shape {7}1 layers, 2 heads, d_model 32, d_ff 64, context 32, vocab ${VOCAB}$`, 'm'), 'sized to the text');
  assert.match(info.out, /^trained {5}60 steps .*training can resume$/m);
  assert.match(info.out, new RegExp(`^tokenizer {3}char, ${VOCAB} tokens$`, 'm'));
  const json = JSON.parse(cli(['info', 'm.wf', '--json']).out);
  const model = await loadModelFile(join(dir, 'm.wf'));
  assert.equal(json.step, 60);
  assert.equal(json.resumable, true);
  assert.equal(json.paramCount, model.paramCount);
  assert.deepEqual(json.config, model.config);

  // generate streams the prompt and its continuation; a seed fixes the text
  const g = cli(['generate', 'm.wf', '--prompt', 'Elizabeth', '--tokens', '50', '--seed', '7']);
  assert.equal(g.code, 0, g.err);
  const expected = await model.generateText('Elizabeth', { maxTokens: 50, temperature: 0.8, seed: 7 });
  assert.equal(g.out, `Elizabeth${expected}\n`, 'the CLI prints what the API generates');
  assert.equal(cli(['generate', 'm.wf', '--prompt', 'Elizabeth', '--tokens', '50', '--seed', '7']).out, g.out);
  // every default (tokens, temperature) is the API's
  const plainGen = cli(['generate', 'm.wf', '--prompt', 'Elizabeth', '--seed', '7']);
  assert.equal(plainGen.out, `Elizabeth${await model.generateText('Elizabeth', { seed: 7 })}\n`);
  const greedy = cli(['generate', 'm.wf', '--prompt', 'Mr', '--tokens', '40', '--temperature', '0', '--top-k', '5', '--top-p', '0.9']);
  assert.equal(greedy.out, `Mr${await model.generateText('Mr', { maxTokens: 40, temperature: 0 })}\n`);
  const cut = greedy.out.slice(12, 14);
  const stopped = cli(['generate', 'm.wf', '--prompt', 'Mr', '--tokens', '40', '--temperature', '0', '--stop', cut]);
  assert.equal(stopped.out, `${greedy.out.slice(0, greedy.out.indexOf(cut, 2))}\n`);

  // characters the model's tokenizer does not know: eval and generate say so on stderr;
  // --allow-unknown lets generate sample <unk>, as allowUnknown does
  writeFileSync(join(dir, 'jp.txt'), `日本語${readFileSync(TEXT, 'utf8').slice(0, 3000)}`);
  const jp = cli(['eval', 'm.wf', 'jp.txt']);
  assert.equal(jp.code, 0, jp.err);
  assert.match(jp.err, /^wasmformer eval: warning: 0\.10?% of the text's tokens \(3 of 3003\) are characters the model's tokenizer does not know \("日", "本", "語"\)/);
  assert.match(jp.out, /^loss \d/);
  const unk = cli(['generate', 'm.wf', '--prompt', '日本', '--tokens', '30', '--seed', '3', '--temperature', '3', '--allow-unknown']);
  assert.equal(unk.code, 0, unk.err);
  assert.match(unk.err, /^wasmformer generate: warning: .*% of the prompt's tokens \(2 of 2\) are characters/);
  assert.equal(unk.out, `日本${await model.generateText('日本', { maxTokens: 30, seed: 3, temperature: 3, allowUnknown: true, onWarning: () => {} })}\n`);
  assert.equal(cli(['generate', 'm.wf', '--prompt', 'Mr', '--tokens', '5']).err, '', 'a known prompt: no warning');

  // eval prints the API's numbers
  const e = cli(['eval', 'm.wf', TEXT, '--max-tokens', '5000', '--json']);
  assert.equal(e.code, 0, e.err);
  const want = await model.evaluate(readFileSync(TEXT, 'utf8'), { maxTokens: 5000 });
  assert.deepEqual(JSON.parse(e.out), want);
  const plain = cli(['eval', 'm.wf', TEXT, '--max-tokens', '5000']);
  assert.equal(plain.out, `loss ${want.loss.toFixed(4)}  perplexity ${want.perplexity.toFixed(3)}  (${want.tokens.toLocaleString('en-US')} tokens of part.txt)\n`);
  model.dispose();

  // --resume of a finished run: nothing to do; --steps N then trains N more (issue 17, item 7)
  const done = cli(['train', TEXT, '--out', 'm.wf', '--resume']);
  assert.equal(done.code, 0, done.err);
  assert.match(done.out, /has finished its run \(step 60 of 60\)/);
  const more = cli(['train', TEXT, '--out', 'm.wf', '--resume', '--steps', '5', '--eval-interval', '20']);
  assert.equal(more.code, 0, more.err);
  assert.match(more.out, /^training m.wf \(step 60\), .* for 5 more steps, batches of 16 x 32 tokens/);
  assert.equal(JSON.parse(cli(['info', 'm.wf', '--json']).out).step, 65);
});

test('Ctrl-C saves and exits 130; --resume then ends with the bytes of an uninterrupted run', async () => {
  const args = (out) => ['train', TEXT, '--config', MICRO, '--steps', '1500', '--batch', '4', '--eval-interval', '20', '--seed', '2', '--out', out];
  const full = cli(args('full.wf'));
  assert.equal(full.code, 0, full.err);

  const child = spawn(process.execPath, [BIN, ...args('cut.wf')], { cwd: dir });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    out += d;
    if (/^step 20\//m.test(out) && !child.killed) child.kill('SIGINT');
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 130, out);
  const m = out.match(/^interrupted at step (\d+); saved cut.wf \(0\.\d MB\)\. Continue with: wasmformer train \S+ --out cut.wf --resume$/m);
  assert.ok(m, out);
  const stoppedAt = Number(m[1]);
  assert.ok(stoppedAt >= 20 && stoppedAt < 1500, `stopped at ${stoppedAt}`);
  assert.equal(JSON.parse(cli(['info', 'cut.wf', '--json']).out).step, stoppedAt);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left behind');

  // the printed command, as printed: the batch size, the text and the schedule come from the file
  const bundled = cli(['train', '--out', 'cut.wf', '--resume']);
  assert.equal(bundled.code, 2, 'without its text a resume refuses, rather than training on the bundled novel');
  assert.match(bundled.err, /cut.wf was trained on part.txt: give that file to resume/);
  writeFileSync(join(dir, 'other.txt'), readFileSync(TEXT, 'utf8').slice(1));
  const other = cli(['train', join(dir, 'other.txt'), '--out', 'cut.wf', '--resume']);
  assert.equal(other.code, 2);
  assert.match(other.err, /is not the text cut.wf was trained on/);
  const batch = cli(['train', TEXT, '--out', 'cut.wf', '--resume', '--batch', '8']);
  assert.match(batch.err, /--batch 8 differs from the run saved in cut.wf \(4\)/);
  const resumed = cli(['train', TEXT, '--out', 'cut.wf', '--resume']);
  assert.equal(resumed.code, 0, resumed.err);
  assert.match(resumed.out, new RegExp(`^training cut.wf \\(step ${stoppedAt}\\)`));
  // both files keep their run, whose seconds are the wall clock's: the rest, byte for byte
  const [cutModel, fullModel] = await Promise.all(['cut.wf', 'full.wf'].map((f) => loadModelFile(join(dir, f))));
  const { seconds: _a, ...cutRun } = cutModel.run, { seconds: _b, ...fullRun } = fullModel.run;
  assert.deepEqual(cutRun, fullRun, 'the same run: its steps, last loss and validation');
  cutModel.endRun();
  fullModel.endRun();
  assert.ok(Buffer.from(cutModel.save()).equals(Buffer.from(fullModel.save())), 'interrupted + resumed == uninterrupted, byte for byte');
  cutModel.dispose();
  fullModel.dispose();
});

test('--time trains for a time budget and saves what it spent; a resume of a spent budget has nothing to do, and --steps or --time train more (issue 24, defect 1)', async () => {
  const r = cli(['train', TEXT, '--config', MICRO, '--time', '2s', '--eval-interval', '0', '--out', 'timed.wf']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /for 2s of training, batches of 16 x 32 tokens/);
  assert.match(r.out, /^done: step \d+, /m);
  const spent = await loadModelFile(join(dir, 'timed.wf'));
  const { step, lr } = spent, tail = spent.optimizer.lr * spent.optimizer.minLrRatio;
  spent.dispose();
  // 40 more steps, at the run's last learning rate: the budget's decayed end, not its peak
  const steps = cli(['train', TEXT, '--out', 'timed.wf', '--resume', '--steps', '40']);
  assert.equal(steps.code, 0, steps.err);
  const more = await loadModelFile(join(dir, 'timed.wf'));
  assert.equal(more.step, step + 40, `40 more steps: ${steps.out}`);
  assert.match(steps.out, new RegExp(`^training timed.wf \\(step ${step}\\), .* for 40 more steps, `));
  const again = cli(['train', TEXT, '--out', 'timed.wf', '--resume']);
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /has finished its run \(\d+s of 2s\): nothing to do; --steps N or --time T trains more$/m);
  assert.ok(Math.abs(more.run.lr - tail) < 1e-9 && Math.abs(lr - tail) < 1e-9, `at ${more.run.lr}, the decayed ${tail}`);
  more.dispose();
  // and a second more of training
  const seconds = cli(['train', TEXT, '--out', 'timed.wf', '--resume', '--time', '1s']);
  assert.equal(seconds.code, 0, seconds.err);
  assert.match(seconds.out, /for 1s more of training, /);
  const later = await loadModelFile(join(dir, 'timed.wf'));
  assert.ok(later.step > step + 40 && later.run.seconds >= 3, `${later.step} steps, ${later.run.seconds} s`);
  later.dispose();
  // and the same after a run of steps: a second more
  const counted = cli(['train', TEXT, '--config', MICRO, '--steps', '10', '--eval-interval', '0', '--out', 'counted.wf']);
  assert.equal(counted.code, 0, counted.err);
  const timedMore = cli(['train', TEXT, '--out', 'counted.wf', '--resume', '--time', '1s']);
  assert.equal(timedMore.code, 0, timedMore.err);
  assert.ok(JSON.parse(cli(['info', 'counted.wf', '--json']).out).step > 10);
  assert.match(cli(['train', TEXT, '--out', 'x.wf', '--time', '5x']).err, /--time must be a duration such as 90s, 5m or 1\.5h, not "5x"/);
  assert.match(cli(['train', TEXT, '--out', 'x.wf', '--time', '5s', '--steps', '3']).err, /--steps and --time: give one/);
});

test('--time without a preset or shape picks the preset for the time (createModel \'auto\'), says why, and trains it; --preset auto needs --time (issue 28)', async () => {
  const r = cli(['train', TEXT, '--time', '2s', '--eval-interval', '0', '--out', 'auto.wf']);
  assert.equal(r.code, 0, r.err);
  const loss = '(?:[\\d.]+|Infinity)'; // Infinity: no step in the time
  const said = r.err.match(new RegExp(`^auto picked (micro|tiny|baby): 2 s: micro \\d+ steps -> ${loss}, tiny \\d+ steps -> ${loss}(?:, baby \\d+ steps -> ${loss})? \\(expected held-out loss\\)$`, 'm'));
  assert.ok(said, r.err);
  const m = await loadModelFile(join(dir, 'auto.wf'));
  const { PRESETS } = await import('../../src/js/node.js');
  for (const k of ['nLayer', 'dModel', 'dFF', 'context']) assert.equal(m.config[k], PRESETS[said[1]][k], `${k} of ${said[1]}`);
  m.dispose();
  assert.match(cli(['train', TEXT, '--preset', 'auto', '--steps', '3', '--out', 'x.wf']).err, /--preset auto goes with --time/);
});

test('Ctrl-C in the middle of a --time budget saves the seconds spent; --resume trains the rest of the budget and ends when it is spent', async () => {
  const child = spawn(process.execPath, [BIN, 'train', TEXT, '--config', MICRO, '--time', '4s', '--eval-interval', '0', '--out', 'tcut.wf'], { cwd: dir });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    out += d;
    // progress lines of a budget read "step N (1s/4s)": stop once a second is spent
    if (/^step \d+ \(([1-9])s\/4s\)/m.test(out) && !child.killed) child.kill('SIGINT');
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 130, out);
  const stoppedAt = Number(out.match(/^interrupted at step (\d+); saved tcut.wf/m)?.[1]);
  assert.ok(stoppedAt > 0, out);
  const cut = JSON.parse(cli(['info', 'tcut.wf', '--json']).out);
  const spent = cut.run.seconds;
  assert.equal(cut.run.lastSeconds, 4);
  assert.ok(spent >= 0.5 && spent < 4, `seconds spent when stopped: ${spent}`);
  assert.equal(cut.step, stoppedAt);

  const resumed = cli(['train', TEXT, '--out', 'tcut.wf', '--resume']);
  assert.equal(resumed.code, 0, resumed.err);
  const lines = resumed.out.trimEnd().split('\n');
  // it trains what is left of the budget, its clock going on from the seconds spent
  const left = 4 - spent, shown = Math.round(left);
  assert.match(lines[0], new RegExp(`^training tcut.wf \\(step ${stoppedAt}\\), .* for ${shown}s of training, batches of 16 x 32 tokens`), lines[0]);
  const firstShown = Number(lines.find((l) => l.startsWith('step '))?.match(/\((\d+)s\/4s\)/)?.[1]);
  assert.ok(firstShown >= Math.floor(spent), `the first progress line counts from ${spent} s: ${firstShown}`);
  const done = Number(lines.at(-1).match(/^done: step (\d+), /)?.[1]);
  assert.ok(done > stoppedAt, lines.at(-1));
  const end = JSON.parse(cli(['info', 'tcut.wf', '--json']).out);
  assert.equal(end.step, done);
  assert.ok(end.run.seconds >= 4 && end.run.seconds < 5, `the budget is spent, not overrun: ${end.run.seconds}`);
  const last = cli(['train', TEXT, '--out', 'tcut.wf', '--resume']);
  assert.match(last.out, /has finished its run \(4s of 4s\): nothing to do/m);
});

test('on a terminal, progress is one line redrawn in place with a bar', (t) => {
  if (!existsSync('/usr/bin/script')) {
    t.skip('/usr/bin/script is not installed (apt-get install -y bsdutils)');
    return;
  }
  // script(1) gives the command a pseudo-terminal as stdout
  const command = [process.execPath, BIN, 'train', TEXT, '--config', `'${MICRO}'`, '--steps', '40', '--eval-interval', '20', '--out', 'tty.wf'].join(' ');
  const out = execFileSync('script', ['-qec', command, '/dev/null'], { cwd: dir, encoding: 'utf8' });
  const redraws = out.split('\r\x1b[2K').slice(1);
  assert.ok(redraws.length >= 2, `redrawn ${redraws.length} times: ${JSON.stringify(out)}`);
  assert.match(redraws.at(-1), /^step 40\/40 \[#{24}\] 100% {2}loss \d+\.\d{3} {2}val \d+\.\d{3} {2}.* tok\/s {2}ETA 0s\r?\n/);
  assert.ok(redraws.some((r) => /^step \d+\/40 \[#*\.+\] \d+%/.test(r)), 'a partly filled bar');
  assert.match(out, /done: step 40/);
});

test('without --steps a run takes train()\'s default steps', () => {
  const r = cli(['train', TEXT, '--config', MICRO, '--eval-interval', '0', '--val-fraction', '0', '--out', 'default-steps.wf']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, new RegExp(`until step ${TRAIN_DEFAULTS.steps},`));
  assert.match(r.out, new RegExp(`^done: step ${TRAIN_DEFAULTS.steps}, `, 'm'));
});

test('the default text is the bundled Pride and Prejudice', () => {
  const r = cli(['train', '--config', MICRO, '--steps', '3', '--eval-interval', '0', '--out', 'default.wf']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /on pride_and_prejudice.txt \(684,768 characters\)/);
  assert.match(r.out, /^step 3\/3 /m);
});

test('export to safetensors and import back: the same model', async () => {
  const t = cli(['train', TEXT, '--config', MICRO, '--steps', '10', '--eval-interval', '0', '--out', 'x.wf']);
  assert.equal(t.code, 0, t.err);
  const e = cli(['export', 'x.wf', '--format', 'safetensors', '--out', 'hf']);
  assert.equal(e.code, 0, e.err);
  assert.equal(e.out, `wrote ${['model.safetensors', 'config.json', 'tokenizer.wft', 'tokenizer.json', 'wasmformer.sha256'].map((f) => join('hf', f)).join(', ')}\n`);
  // micro's shape (RoPE, LayerNorm, biases) is GPT-NeoX's
  const hf = JSON.parse(readFileSync(join(dir, 'hf/config.json'), 'utf8'));
  assert.deepEqual([hf.model_type, hf.num_hidden_layers], ['gpt_neox', 1]);
  const i = cli(['import', 'hf', '--out', 'back.wf']);
  assert.equal(i.code, 0, i.err);
  assert.equal(i.out, `wrote back.wf: decoder, 1 layers, d_model 32, ${await microParams()} parameters (float32 weights, 0.0 MB), char tokenizer\n`);
  const gen = (file) => cli(['generate', file, '--prompt', 'Mr', '--tokens', '40', '--temperature', '0']).out;
  assert.equal(gen('back.wf'), gen('x.wf'), 'the imported model generates what the original does');
  assert.equal(cli(['import', 'hf', '--out', 'back.wf']).code, 2, 'no silent overwrite');
  assert.equal(cli(['import', 'hf', '--out', 'back.wf', '--force']).code, 0);
});

test('import a llama2.c model with its tokenizer.bin; a folder brings its tokenizer.json', () => {
  const tokBin = fileURLToPath(new URL('../fixtures/tokenizers/llama2c_tok.bin', import.meta.url));
  // a llama2.c model file of the tokenizer's vocabulary: the header, then small weights
  const bin = readFileSync(tokBin);
  let V = 0;
  for (let at = 4; at < bin.length; V++) at += 8 + bin.readInt32LE(at + 4);
  const [C, F, L, H, T] = [16, 32, 1, 2, 16];
  const floats = V * C + L * C + L * C * C * 4 + L * C + L * F * C * 3 + C + T * (C / H / 2) * 2;
  const file = Buffer.alloc(28 + 4 * floats);
  [C, F, L, H, H, V, T].forEach((v, i) => file.writeInt32LE(v, 4 * i));
  for (let i = 0; i < floats; i++) file.writeFloatLE(((i * 7919) % 1000) / 1e4 - 0.05, 28 + 4 * i);
  writeFileSync(join(dir, 'l2c.bin'), file);
  const r = cli(['import', 'l2c.bin', '--tokenizer', tokBin, '--out', 'l2c.wf']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^wrote l2c\.wf: decoder, 1 layers, d_model 16, .* parameters \(float32 weights, .* MB\), llama2c tokenizer\n$/);
  assert.deepEqual(JSON.parse(cli(['info', 'l2c.wf', '--json']).out).tokenizer, { kind: 'llama2c', vocabSize: V });
  assert.equal(cli(['generate', 'l2c.wf', '--prompt', 'Once', '--tokens', '5', '--seed', '1']).code, 0);
  const bad = cli(['import', 'l2c.bin', '--tokenizer', 'l2c.bin', '--out', 'bad.wf']);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /l2c\.bin: tokenizer\.bin/);
  assert.equal(cli(['import', '.', '--tokenizer', tokBin, '--out', 'x2.wf']).code, 2, '--tokenizer goes with a model file');
  // a folder with a tokenizer.json and no tokenizer.wft (nor the record of an export, as
  // Hugging Face writes it): the model comes back with it
  const e = cli(['export', 'l2c.wf', '--out', 'hf2']);
  assert.equal(e.code, 0, e.err);
  rmSync(join(dir, 'hf2', 'tokenizer.wft'));
  rmSync(join(dir, 'hf2', 'wasmformer.sha256'));
  writeFileSync(join(dir, 'hf2', 'tokenizer.json'), readFileSync(new URL('../fixtures/tokenizers/llama.json', import.meta.url)));
  const i = cli(['import', 'hf2', '--out', 'hf2.wf']);
  assert.equal(i.code, 0, i.err);
  assert.match(i.out, /hf tokenizer\n$/);
});

test('train with a byte-level BPE tokenizer', () => {
  const r = cli(['train', TEXT, '--config', MICRO, '--tokenizer', 'bpe', '--vocab', '300', '--steps', '5', '--eval-interval', '0', '--out', 'bpe.wf']);
  assert.equal(r.code, 0, r.err);
  const info = JSON.parse(cli(['info', 'bpe.wf', '--json']).out);
  assert.deepEqual(info.tokenizer, { kind: 'bpe', vocabSize: 300 });
  assert.equal(info.config.vocabSize, 300);
  assert.equal(cli(['train', TEXT, '--out', 'bpe.wf', '--resume', '--tokenizer', 'char']).code, 2);
});

test('a text of more distinct characters than the preset\'s 96 (Cyrillic and Latin) trains: the vocabulary is the text\'s', () => {
  const letters = 'абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  let text = '', x = 7;
  for (let i = 0; i < 20000; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    text += i % 6 === 5 ? ' ' : [...letters][(x >>> 8) % [...letters].length];
  }
  const distinct = new Set(text).size;
  assert.ok(distinct > 95, `${distinct} distinct characters`);
  writeFileSync(join(dir, 'cyrillic.txt'), text);
  const r = cli(['train', 'cyrillic.txt', '--config', MICRO, '--steps', '3', '--eval-interval', '0', '--out', 'cyr.wf']);
  assert.equal(r.code, 0, r.err);
  const info = JSON.parse(cli(['info', 'cyr.wf', '--json']).out);
  assert.deepEqual(info.tokenizer, { kind: 'char', vocabSize: distinct + 1 });
  assert.equal(info.config.vocabSize, distinct + 1);
  const g = cli(['generate', 'cyr.wf', '--prompt', 'Жж', '--tokens', '20', '--seed', '1']);
  assert.equal(g.code, 0, g.err);
  assert.ok([...g.out.trimEnd()].every((c) => text.includes(c) || c === '\uFFFD'), `generates the text's characters (or <unk>): ${g.out}`);
  // a vocabSize in --config is kept, and must hold the tokenizer
  const small = cli(['train', 'cyrillic.txt', '--config', JSON.stringify({ ...JSON.parse(MICRO), vocabSize: 96 }), '--steps', '1', '--out', 'cyr96.wf']);
  assert.equal(small.code, 1);
  assert.match(small.err, new RegExp(`the tokenizer has ${distinct + 1} tokens but vocabSize is 96`));
  assert.ok(!existsSync(join(dir, 'cyr96.wf')));
});

test('info says whether a file can resume training: the model reports its optimizer state', async () => {
  const model = await createModel(JSON.parse(MICRO), { text: readFileSync(TEXT, 'utf8') });
  await model.train(readFileSync(TEXT, 'utf8'), { steps: 2, evalInterval: 0 });
  await saveModelFile(model, join(dir, 'full.wf'));
  await saveModelFile(model, join(dir, 'weights.wf'), { optimizer: false });
  model.dispose();
  assert.equal(JSON.parse(cli(['info', 'full.wf', '--json']).out).resumable, true);
  const w = JSON.parse(cli(['info', 'weights.wf', '--json']).out);
  assert.equal(w.resumable, false);
  assert.equal(w.optimizerState, false);
  assert.match(cli(['info', 'weights.wf']).out, /^trained {5}weights only/m);
  // through the API: false after loading weights only, true again once it has stepped
  const loaded = await loadModelFile(join(dir, 'weights.wf'));
  assert.equal(loaded.info().optimizerState, false);
  const ids = Array.from({ length: 32 }, (_, i) => i % VOCAB);
  loaded.trainStep(ids, ids, 1, 32);
  assert.equal(loaded.info().optimizerState, true);
  loaded.load(readFileSync(join(dir, 'weights.wf')));
  assert.equal(loaded.info().optimizerState, false, 'load() in place says the same');
  loaded.load(readFileSync(join(dir, 'full.wf')));
  assert.equal(loaded.info().optimizerState, true);
  loaded.dispose();
});

test('--eval-mode windows validates on all of the held-out split, with bits per character', () => {
  const r = cli(['train', TEXT, '--config', MICRO, '--steps', '20', '--eval-interval', '10', '--eval-mode', 'windows', '--seed', '4', '--out', 'w.wf', '--force']);
  assert.equal(r.code, 0, r.err);
  const progress = r.out.trimEnd().split('\n').filter((l) => l.startsWith('step '));
  assert.equal(progress.length, 2, r.out);
  for (const l of progress) assert.match(l, /val (\d+\.\d{3}) \((\d+\.\d{3}) bpc\)/);
  const bad = cli(['train', TEXT, '--eval-mode', 'all', '--out', 'x.wf']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--eval-mode must be sample or windows, not "all"/);
  // the mode is the run's, in the file: a resumed run keeps it
  assert.equal(JSON.parse(cli(['info', 'w.wf', '--json']).out).run.evalMode, 'windows');
  const resumed = cli(['train', TEXT, '--out', 'w.wf', '--resume', '--steps', '10']);
  assert.equal(resumed.code, 0, resumed.err);
  assert.match(resumed.out, /^step 30\/30 .*val \d+\.\d{3} \(\d+\.\d{3} bpc\)/m, resumed.out);
  const other = cli(['train', TEXT, '--out', 'w.wf', '--resume', '--eval-mode', 'sample']);
  assert.equal(other.code, 2);
  assert.match(other.err, /--eval-mode sample differs from the run saved in w.wf \(windows\); a resumed run keeps it/);
});

test('finetune of the default model: --peft writes GPT-NeoX adapters; counts its own steps; refuses an impossible --peft before training; saves whatever happens to the adapters', async () => {
  // the model `wasmformer train` makes by default (micro: RoPE, LayerNorm, biases), trained 30 steps
  const d = cli(['train', TEXT, '--steps', '30', '--eval-interval', '0', '--out', 'neox-base.wf']);
  assert.equal(d.code, 0, d.err);
  const f = cli(['finetune', 'neox-base.wf', TEXT, '--steps', '10', '--eval-interval', '0', '--peft', 'neox-adapter', '--out', 'neox-tuned.wf']);
  assert.equal(f.code, 0, f.err);
  assert.match(f.out, /step 10\/10 /, 'progress counts this run\'s 10 steps, not the model\'s 40');
  assert.doesNotMatch(f.out, /step 40\/40/);
  assert.match(f.out, /^done: 10 steps \(the model's step 40\), /m);
  const cfg = JSON.parse(readFileSync(join(dir, 'neox-adapter/adapter_config.json'), 'utf8'));
  assert.deepEqual(cfg.target_modules, ['query_key_value', 'dense', 'dense_h_to_4h', 'dense_4h_to_h']);
  assert.ok(existsSync(join(dir, 'neox-tuned.wf')));
  // the export refuses the adapters in GPTNeoXForCausalLM's files; --merge folds them in
  const e = cli(['export', 'neox-tuned.wf', '--out', 'neox-hf']);
  assert.equal(e.code, 1);
  assert.match(e.err, /LoRA adapters, which a gpt_neox file has no place for: .* \(--merge folds them in\)/);
  const em = cli(['export', 'neox-tuned.wf', '--merge', '--out', 'neox-hf']);
  assert.equal(em.code, 0, em.err);
  assert.equal(JSON.parse(readFileSync(join(dir, 'neox-hf/config.json'), 'utf8')).model_type, 'gpt_neox');
  assert.ok(existsSync(join(dir, 'neox-hf/tokenizer.json')), 'the char tokenizer as a tokenizer.json');
  // a model PEFT has no names for (Post-LN): refused before the first step, nothing written
  assert.equal(cli(['train', TEXT, '--config', JSON.stringify({ ...JSON.parse(MICRO), block: 'post_ln' }), '--steps', '5', '--eval-interval', '0', '--out', 'postln.wf']).code, 0);
  const t0 = Date.now();
  const p = cli(['finetune', 'postln.wf', TEXT, '--steps', '400', '--eval-interval', '0', '--peft', 'never', '--out', 'postln-tuned.wf']);
  assert.equal(p.code, 1);
  assert.match(p.err, /--peft: PEFT names the modules of a Hugging Face class; this model is not GPT-2-, GPT-NeoX- or Llama-shaped .*; nothing was trained/);
  assert.doesNotMatch(p.out, /step \d+\/400/, 'no step was taken');
  assert.ok(!existsSync(join(dir, 'postln-tuned.wf')) && !existsSync(join(dir, 'never')));
  console.log(`refused before training in ${Date.now() - t0} ms`);
  // the adapters cannot be written (--peft names a file): the checkpoint is saved all the same
  writeFileSync(join(dir, 'a-file'), 'x');
  const w = cli(['finetune', 'neox-base.wf', TEXT, '--steps', '5', '--eval-interval', '0', '--peft', 'a-file', '--out', 'saved-anyway.wf']);
  assert.equal(w.code, 1);
  assert.match(w.out, /^done: 5 steps .*; saved saved-anyway\.wf/m);
  assert.match(w.err, /--peft a-file: .*\(saved-anyway\.wf is saved\)/);
  const saved = await loadModelFile(join(dir, 'saved-anyway.wf'));
  assert.equal(saved.step, 35);
  assert.deepEqual(saved.lora?.rank, 8);
  saved.dispose();
});

test('finetune: LoRA on a model folder, its PEFT adapters, a merged model, tensors chosen by name; train --resume continues it', async () => {
  const LLAMA = JSON.stringify({ ...JSON.parse(MICRO), norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', bias: false, tiedHead: false });
  assert.equal(cli(['train', TEXT, '--config', LLAMA, '--steps', '20', '--eval-interval', '0', '--out', 'base.wf']).code, 0);
  assert.equal(cli(['export', 'base.wf', '--out', 'basehf']).code, 0);
  const f = cli(['finetune', 'basehf', TEXT, '--lora-rank', '4', '--lora-targets', 'q,v', '--steps', '20', '--eval-interval', '10',
    '--lr', '3e-3', '--peft', 'adapter', '--out', 'tuned.wf']);
  assert.equal(f.code, 0, f.err);
  assert.match(f.out, /^fine-tuning basehf on part\.txt \(60,000 characters\): LoRA rank 4 \(alpha 8\) on q, v; [\d,]+ of [\d,]+ parameters train/);
  assert.match(f.out, /wrote adapter[/\\]adapter_model\.safetensors, adapter[/\\]adapter_config\.json \(their base: basehf\)/);
  assert.match(f.out, /done: 20 steps \(the model's step 20\), loss [\d.]+, val [\d.]+/, 'a model folder holds no steps: 20 now');
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'adapter/adapter_config.json'), 'utf8')).target_modules, ['q_proj', 'v_proj']);
  const tuned = await loadModelFile(join(dir, 'tuned.wf'));
  assert.deepEqual(tuned.lora, { rank: 4, alpha: 8, targets: ['q', 'v'] });
  assert.ok(Object.keys(tuned.trainable().tensors).every((n) => n.startsWith('lora_')), 'the base stays frozen in the file');
  tuned.dispose();
  const r = cli(['train', TEXT, '--out', 'tuned.wf', '--resume', '--steps', '5']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /done: step 25/);
  const m = cli(['finetune', 'base.wf', TEXT, '--steps', '5', '--eval-interval', '0', '--merge', '--out', 'merged.wf']);
  assert.equal(m.code, 0, m.err);
  const merged = await loadModelFile(join(dir, 'merged.wf'));
  assert.equal(merged.lora, null, 'merged: a plain model');
  merged.dispose();
  const h = cli(['finetune', 'base.wf', TEXT, '--lora-rank', '0', '--train', 'head,layers@-1', '--steps', '5', '--eval-interval', '0', '--out', 'head.wf']);
  assert.equal(h.code, 0, h.err);
  assert.match(h.out, /: head, layers@-1; [\d,]+ of [\d,]+ parameters train/);
  for (const [args, re] of [
    [['finetune', 'base.wf', TEXT, '--lora-rank', '0', '--merge'], /--merge is about LoRA adapters/],
    [['finetune', 'base.wf', TEXT, '--out', 'tuned.wf'], /tuned\.wf exists: add --force/],
    [['finetune', 'tuned.wf', TEXT, '--out', 'again.wf'], /has LoRA adapters already/],
    [['finetune', 'base.wf', TEXT, '--lora-targets', 'q,x', '--out', 'x1.wf'], /LoRA target "x"/],
    [['finetune', 'base.wf', TEXT, '--lora-rank', '0', '--train', 'nothing', '--out', 'x2.wf'], /no tensor or group is named "nothing"/],
    [['finetune', 'nowhere', TEXT], /cannot read nowhere/],
    // a folder with no tokenizer: the message names the tokenizer.json a Hugging Face folder brings
    [['finetune', fileURLToPath(new URL('../fixtures/hf_llama_untied', import.meta.url)), TEXT, '--out', 'x3.wf'],
      /has no tokenizer: .*\(a folder needs its tokenizer\.json, or the tokenizer\.wft wasmformer export writes\)/],
  ]) {
    const e = cli(args);
    assert.notEqual(e.code, 0, args.join(' '));
    assert.match(e.err, re, args.join(' '));
    assert.equal(e.out, '', `${args.join(' ')}: nothing on stdout`);
  }
});

/** Runs `wasmformer train` on a micro model in a child process, which `onLine` may signal or
 * cut off (it sees stdout so far); resolves to {code, out, err}. */
function trainChild(out, extra, onLine) {
  const child = spawn(process.execPath, [BIN, 'train', TEXT, '--config', MICRO, '--steps', '100000', '--batch', '4', '--eval-interval', '20',
    '--seed', '2', '--out', out, ...extra], { cwd: dir });
  let stdout = '', stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdout.on('data', (d) => {
    stdout += d;
    onLine(child, stdout);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out: stdout, err: stderr })));
}

test('SIGTERM and SIGHUP save like Ctrl-C (exit 143, 129), a closed terminal too; the file holds the steps done', async () => {
  for (const [signal, code, closeOutput] of [['SIGTERM', 143, false], ['SIGHUP', 129, false], ['SIGHUP', 129, true]]) {
    const file = `${signal}${closeOutput ? '-closed' : ''}.wf`;
    const r = await trainChild(file, ['--checkpoint-every', '0'], (child, out) => {
      if (/^step 20\//m.test(out) && !child.killed) {
        child.kill(signal);
        // a terminal that went away: every later write fails (EPIPE), and the run must not
        // exit on that before it has saved
        if (closeOutput) child.stdout.destroy();
      }
    });
    assert.equal(r.code, code, `${signal}: ${r.out}${r.err}`);
    assert.equal(r.err, '');
    const m = await loadModelFile(join(dir, file));
    assert.ok(m.step >= 20 && m.step < 100000, `${signal}: the file holds the steps done (${m.step})`);
    if (!closeOutput) assert.match(r.out, new RegExp(`^interrupted at step ${m.step}; saved ${file} `, 'm'));
    m.dispose();
  }
  // output piped into a program that leaves (head): the run stops, saves, exits 141 (SIGPIPE's)
  const r = await trainChild('piped.wf', [], (child, out) => { if (/^step 20\//m.test(out)) child.stdout.destroy(); });
  assert.equal(r.code, 141, r.err);
  const m = await loadModelFile(join(dir, 'piped.wf'));
  assert.ok(m.step >= 20, `saved at ${m.step}`);
  m.dispose();
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left behind');
});

test('--out is checked before the first step: a missing or read-only folder, a folder as the file, no room', async () => {
  const ro = join(dir, 'read-only');
  mkdirSync(ro, { mode: 0o555 });
  // root writes into a 0555 folder regardless: sysfs refuses everyone
  const readOnly = process.getuid?.() === 0 ? '/sys/model.wf' : join(ro, 'model.wf');
  for (const [args, re] of [
    [['--out', join(dir, 'nowhere', 'model.wf')], /^wasmformer train: --out \S+nowhere\/model\.wf: the folder \S+nowhere does not exist; nothing was trained$/],
    [['--out', readOnly], new RegExp(`^wasmformer train: --out ${readOnly} cannot be written: (permission denied \\(EACCES\\)|the file system is read-only \\(EROFS\\)); nothing was trained$`)],
    [['--out', dir, '--force'], /--out \S+ is a folder: give a file name/],
  ]) {
    // (100,000 steps would take minutes: the refusal must come before the first)
    const r = cli(['train', TEXT, '--config', MICRO, '--steps', '100000', ...args], { timeout: 60000 });
    assert.equal(r.code, 1, r.out);
    assert.match(r.err.trim(), re);
    assert.doesNotMatch(r.err, /\.tmp/, 'the message names the target, not the temporary file');
    assert.doesNotMatch(r.out, /^step /m, 'not one step was trained');
  }
  // a resumed run is checked too, before its first step
  assert.equal(cli(['train', TEXT, '--config', MICRO, '--steps', '5', '--eval-interval', '0', '--out', 'r.wf']).code, 0);
  const { preflightOut, fileBytes } = await import('../../bin/keep-run.js');
  // no room: the file system's free space (statfs) against the model's size
  await assert.rejects(preflightOut(join(dir, 'r.wf'), 1e18), /^Error: --out \S+r\.wf: the model file needs about 1000000000000\.0 MB and \S+ has [\d.]+ MB free; nothing was trained$/);
  const m = await loadModelFile(join(dir, 'r.wf'));
  const bytes = fileBytes(m);
  assert.ok(bytes >= readFileSync(join(dir, 'r.wf')).length, `the estimate ${bytes} covers the file`);
  await preflightOut(join(dir, 'r.wf'), bytes);
  m.dispose();
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'the probe file is removed');
});

test('a checkpoint every --checkpoint-every while training: a run killed outright loses at most that', async () => {
  let seen = null;
  const r = await trainChild('ckpt.wf', ['--checkpoint-every', '1s'], (child, out) => {
    const m = out.match(/^checkpoint: step (\d+) saved to ckpt\.wf$/m);
    if (m && !child.killed) {
      seen = Number(m[1]);
      child.kill('SIGKILL'); // no handler runs: only what the checkpoint wrote survives
    }
  });
  assert.equal(r.code, null, 'killed');
  assert.match(r.out, /saving to ckpt\.wf \(a checkpoint every 1s\)/);
  assert.ok(seen > 0, r.out);
  const m = await loadModelFile(join(dir, 'ckpt.wf'));
  assert.equal(m.step, seen, 'the file is the checkpoint of the step it names');
  m.dispose();
  // the checkpoint resumes exactly: resumed to step 300, it is the run that went to 300
  // straight (the checkpoint, like Ctrl-C, is the state after its step)
  if (seen < 300) {
    const full = cli(['train', TEXT, '--config', MICRO, '--steps', '300', '--batch', '4', '--eval-interval', '20', '--seed', '2', '--checkpoint-every', '0', '--out', 'ckpt-full.wf']);
    assert.equal(full.code, 0, full.err);
    // the killed run planned 100000 steps: finish it at 300 with the same schedule
    const resumed = cli(['train', TEXT, '--out', 'ckpt.wf', '--resume', '--steps', String(300 - seen), '--checkpoint-every', '0']);
    assert.equal(resumed.code, 0, resumed.err);
    assert.equal(JSON.parse(cli(['info', 'ckpt.wf', '--json']).out).step, 300);
  }
  const off = cli(['train', TEXT, '--config', MICRO, '--steps', '30', '--eval-interval', '0', '--checkpoint-every', '0', '--out', 'no-ckpt.wf']);
  assert.equal(off.code, 0, off.err);
  assert.doesNotMatch(off.out, /checkpoint/);
  assert.match(cli(['train', TEXT, '--checkpoint-every', '5x', '--out', 'y.wf']).err, /--checkpoint-every must be a duration such as 90s, 5m or 1\.5h, or 0, not "5x"/);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
});

test('info --json reads a file whose note nests 500,000 levels; export to a folder that cannot be made fails at once', async () => {
  const m = await createModel({ preset: 'micro', ...JSON.parse(MICRO) }, { text: 'a small text of few letters' });
  const core = modelHandle(m);
  core.rt.modelSetNote(core.h, new TextEncoder().encode(`${'['.repeat(500000)}${']'.repeat(500000)}`));
  await saveModelFile(m, join(dir, 'deep-note.wf'));
  m.dispose();
  const i = cli(['info', 'deep-note.wf', '--json']);
  assert.equal(i.code, 0, i.err);
  assert.equal(JSON.parse(i.out).metadata, null);
  const t0 = Date.now();
  const e = cli(['export', 'deep-note.wf', '--out', '/proc/exp'], { timeout: 20000 });
  assert.equal(e.code, 1, `it ended (it spun at 100 % CPU before): ${e.err}`);
  assert.match(e.err, /^wasmformer export: cannot create the folder \/proc\/exp: \/proc takes no new folders/);
  assert.ok(Date.now() - t0 < 15000);
  const k = cli(['generate', 'deep-note.wf', '--top-k', '1e12', '--tokens', '2']);
  assert.equal(k.code, 1);
  assert.match(k.err, /--top-k must be an integer >= 0 \(0 = off\), not 1000000000000/);
});
