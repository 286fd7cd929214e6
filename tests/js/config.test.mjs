// The config table (src/js/config-table.js) against what reads and restates it: the core's
// defaults and range checks in the wasm build, the hand-written index.d.ts (ModelConfig and
// OptimizerSettings list its fields, with the enums' names), and the worker protocol's
// table against the worker classes, in JavaScript and in index.d.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { CONFIG_FIELDS, OPTIM_FIELDS, WorkerModel, WorkerSeq2Seq, createModel, load, resolveConfig } from '../../src/js/node.js';
import { PRESETS, PRESET_STEPS, RUN_DEFAULTS, fromNative, toNative } from '../../src/js/config.js';
import { WORKER_OPS } from '../../src/js/worker-ops.js';

const f32 = (x) => (typeof x === 'number' ? Math.fround(x) : x);

test('the table\'s defaults are the core\'s (wf_config_default, wf_optim_default)', async () => {
  const rt = await load({ threads: 1 });
  const config = fromNative(rt.configDefault()), optim = rt.optimDefault();
  for (const f of CONFIG_FIELDS) assert.equal(f.default, config[f.name], `config ${f.name}`);
  for (const f of OPTIM_FIELDS) assert.equal(f32(f.default), optim[f.name], `optimizer ${f.name}`);
  assert.deepEqual(Object.keys(config), CONFIG_FIELDS.map((f) => f.name));
  assert.deepEqual(Object.keys(optim), OPTIM_FIELDS.map((f) => f.name));
});

test('the run defaults and the presets are the core\'s (wf_preset: src/presets.h, one table)', async () => {
  const rt = await load({ threads: 1 });
  const none = rt.preset(null);
  assert.deepEqual(Object.fromEntries(Object.entries(none.run).map(([k, v]) => [k, v])),
    Object.fromEntries(Object.entries(RUN_DEFAULTS).map(([k, v]) => [k, f32(v)])), 'RUN_DEFAULTS is wf_run\'s defaults');
  assert.deepEqual(fromNative(none.config), fromNative(rt.configDefault()));
  for (const [name, p] of Object.entries(PRESETS)) {
    const c = rt.preset(name), cfg = fromNative(c.config);
    for (const k of ['nLayer', 'nHead', 'dModel', 'dFF', 'context', 'vocabSize', 'positions']) {
      assert.equal(cfg[k], p[k] ?? resolveConfig(name)[k], `${name} ${k}`);
    }
    assert.equal(c.optim.lr, f32(p.lr), `${name} lr`);
    assert.equal(c.optim.beta2, f32(p.beta2 ?? OPTIM_FIELDS.find((f) => f.name === 'beta2').default), `${name} beta2`);
    assert.equal(c.optim.muon, p.muon ?? 0, `${name} muon`);
    assert.equal(c.run.batchSize, p.batchSize, `${name} batchSize`);
    assert.equal(c.run.steps, PRESET_STEPS[name], `${name} steps`);
  }
  assert.equal(rt.preset('huge'), null, 'no such preset');
  // tiny's shape is the rows' defaults: a config without a preset is filled from it
  assert.deepEqual(fromNative(rt.preset('tiny').config), fromNative(rt.configDefault()));
});

/** Values just outside a row's range (none where the type has no room). */
function outside(f) {
  const out = [];
  if (f.type === 'enum') return [f.values.length, -1];
  if (f.type === 'bool' || f.type === 'seed') return out;
  const step = f.type === 'int' ? 1 : 1e-3;
  out.push(f.bounds[0] === '(' ? f.min : f.min - step);
  if (f.max !== undefined) out.push(f.bounds[1] === ')' ? f.max : f.max + step);
  return out;
}

/** The values on a row's range that the range includes. */
function bounds(f) {
  if (f.type !== 'int' && f.type !== 'real' && f.type !== 'seed') return [];
  return [f.bounds[0] === '[' ? f.min : null, f.max !== undefined && f.bounds[1] === ']' ? f.max : null].filter((v) => v !== null);
}

test('the core takes each config field on the table\'s bounds and refuses it just outside', async () => {
  const rt = await load({ threads: 1 });
  // a decoder and an encoder-decoder; a field whose range holds for encoder-decoders only is
  // tried on the encoder-decoder
  const decoder = toNative(resolveConfig('tiny')), encdec = toNative(resolveConfig({ arch: 'encoder-decoder' }));
  assert.equal(rt.configCheck(decoder), null);
  assert.equal(rt.configCheck(encdec), null);
  let tried = 0;
  for (const f of CONFIG_FIELDS) {
    const bases = f.encoderDecoderOnly ? [encdec] : [decoder, encdec];
    // the relations the table does not state: nHead divides dModel, nKvHead divides nHead,
    // LoRA's rank and targets come together (and 'up' needs SwiGLU)
    const fit = {
      nHead: (v) => ({ dModel: v }),
      dModel: () => ({ nHead: 1 }),
      nKvHead: (v) => (v > 0 ? { nHead: v, dModel: v } : {}),
      loraRank: (v) => (v > 0 ? { loraTargets: 1 } : {}),
      loraTargets: (v) => (v > 0 ? { loraRank: 1, activation: 2 } : {}),
    }[f.name] ?? (() => ({}));
    for (const v of bounds(f)) {
      for (const base of bases) assert.equal(rt.configCheck({ ...base, ...fit(v), [f.name]: v }), null, `${f.name} = ${v} is on the table's range: the core must take it`);
      tried++;
    }
    for (const v of outside(f)) {
      for (const base of bases) {
        assert.equal(rt.configCheck({ ...base, [f.name]: v })?.code, 'WF_ERR_CONFIG', `${f.name} = ${v} is outside the table's range: the core must refuse it`);
      }
      tried++;
    }
  }
  assert.ok(tried >= 30, `${tried} values tried`);
});

test('the core refuses each optimizer setting just outside the table\'s range', async () => {
  const model = await createModel({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 8, vocabSize: 8 }, { threads: 1 });
  const before = model.optimizer;
  for (const f of OPTIM_FIELDS) {
    for (const v of outside(f)) {
      assert.throws(() => model.setOptimizer({ [f.name]: v }), (e) => e.code === 'WF_ERR_ARG', `${f.name} = ${v}`);
    }
  }
  assert.deepEqual(model.optimizer, before, 'nothing changed');
  model.dispose();
});

/** The members of an interface or class of index.d.ts: [name, type text]. */
function members(name) {
  const file = fileURLToPath(new URL('../../src/js/index.d.ts', import.meta.url));
  const sf = ts.createSourceFile(file, ts.sys.readFile(file), ts.ScriptTarget.ES2022, true);
  const node = sf.statements.find((s) => (ts.isInterfaceDeclaration(s) || ts.isClassDeclaration(s)) && s.name?.text === name);
  assert.ok(node, `index.d.ts declares ${name}`);
  return node.members.filter((m) => m.name && !ts.isComputedPropertyName(m.name) && !m.modifiers?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword))
    .map((m) => [m.name.text, m.type?.getText(sf) ?? '', ts.isMethodDeclaration(m)]);
}

test('index.d.ts lists the table\'s fields: ModelConfig (with the enums\' names) and OptimizerSettings', () => {
  const config = members('ModelConfig');
  assert.deepEqual(config.map(([n]) => n), CONFIG_FIELDS.map((f) => f.name), 'ModelConfig: the fields, in struct order');
  const TYPE = { enum: null, bool: 'boolean', int: 'number', seed: 'number', real: 'number' };
  for (const f of CONFIG_FIELDS) {
    const [, type] = config.find(([n]) => n === f.name);
    const want = f.type === 'enum' ? f.values.map((v) => `'${v}'`).join(' | ') : TYPE[f.type];
    assert.equal(type, want, `ModelConfig.${f.name}`);
  }
  assert.deepEqual(members('OptimizerSettings').map(([n]) => n), OPTIM_FIELDS.map((f) => f.name), 'OptimizerSettings');
});

test('the worker classes have the protocol\'s operations, in JavaScript and in index.d.ts', () => {
  // methods that are not one operation each: made of others, or the model's life
  const LOCAL = new Set(['generateText', 'load', 'dispose', 'constructor']);
  for (const [cls, ops] of [[WorkerModel, WORKER_OPS.model], [WorkerSeq2Seq, WORKER_OPS.seq2seq]]) {
    for (const op of Object.keys(ops)) assert.equal(typeof cls.prototype[op], 'function', `${cls.name}.${op}`);
    const declared = members(cls.name).filter(([, , method]) => method).map(([n]) => n).filter((n) => !LOCAL.has(n));
    assert.deepEqual(declared.sort(), Object.keys(ops).sort(), `${cls.name} in index.d.ts`);
  }
});
