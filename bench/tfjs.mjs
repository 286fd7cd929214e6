// The baseline: the same GPT (configs A and B) in TF.js 4.22 on its `wasm` backend,
// trained with tf.train.adam (betas 0.9/0.95, eps 1e-8; TF.js has no AdamW, so no weight
// decay, which costs one multiply per weight and does not change the timing) and
// generating without a KV cache (TF.js has none built in: each new token re-runs the
// forward over the window, as TF.js GPT demos do). Token embeddings are a one-hot matrix
// product because the wasm backend has no UnsortedSegmentSum kernel for gather's gradient.
// Works in Node (node bench/tfjs.mjs A) and in a browser page (bench/browser.html).
import { CONFIGS, median } from './configs.mjs';

export async function benchTfjs(tf, which, opts = {}) {
  const { steps = 5, warmup = 2, gen = 0, now = () => performance.now() / 1000 } = opts;
  const { V, L, NH, C, T, B } = CONFIGS[which];
  const HS = C / NH, F = 4 * C;
  const normal = (shape, std) => tf.variable(tf.randomNormal(shape, 0, std, 'float32', 1));
  const zeros = (shape) => tf.variable(tf.zeros(shape));
  const ones = (shape) => tf.variable(tf.ones(shape));
  const p = { wte: normal([V, C], 0.02), wpe: normal([T, C], 0.02), lnfg: ones([C]), lnfb: zeros([C]), layers: [] };
  for (let l = 0; l < L; l++) {
    p.layers.push({
      ln1g: ones([C]), ln1b: zeros([C]), qkvw: normal([C, 3 * C], 0.02), qkvb: zeros([3 * C]),
      projw: normal([C, C], 0.02 / Math.sqrt(2 * L)), projb: zeros([C]), ln2g: ones([C]), ln2b: zeros([C]),
      fcw: normal([C, F], 0.02), fcb: zeros([F]), fcprojw: normal([F, C], 0.02 / Math.sqrt(2 * L)), fcprojb: zeros([C]),
    });
  }
  const vars = [p.wte, p.wpe, p.lnfg, p.lnfb, ...p.layers.flatMap((x) => Object.values(x))];

  const layernorm = (x, g, b) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return x.sub(mean).mul(tf.rsqrt(variance.add(1e-5))).mul(g).add(b);
  };
  const gelu = (x) => x.mul(0.5).mul(tf.tanh(x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI))).add(1));
  const masks = new Map();
  const causal = (t) => {
    if (!masks.has(t)) masks.set(t, tf.keep(tf.linalg.bandPart(tf.ones([t, t]), -1, 0).sub(1).mul(1e9)));
    return masks.get(t);
  };

  // ids: int32 [b, t] -> logits [b*t, V]
  const forward = (ids, b, t) => {
    let x = tf.matMul(tf.oneHot(ids.reshape([b * t]), V), p.wte).reshape([b, t, C]).add(p.wpe.slice([0, 0], [t, C]));
    for (const w of p.layers) {
      const h = layernorm(x, w.ln1g, w.ln1b).reshape([b * t, C]);
      const qkv = tf.matMul(h, w.qkvw).add(w.qkvb).reshape([b, t, 3, NH, HS]).transpose([2, 0, 3, 1, 4]);
      const [q, k, v] = tf.unstack(qkv);
      const att = tf.softmax(tf.matMul(q, k, false, true).mul(1 / Math.sqrt(HS)).add(causal(t)));
      const y = tf.matMul(att, v).transpose([0, 2, 1, 3]).reshape([b * t, C]);
      x = x.add(tf.matMul(y, w.projw).add(w.projb).reshape([b, t, C]));
      const h2 = layernorm(x, w.ln2g, w.ln2b).reshape([b * t, C]);
      const f = gelu(tf.matMul(h2, w.fcw).add(w.fcb));
      x = x.add(tf.matMul(f, w.fcprojw).add(w.fcprojb).reshape([b, t, C]));
    }
    return tf.matMul(layernorm(x, p.lnfg, p.lnfb).reshape([b * t, C]), p.wte, false, true);
  };

  let seed = 42;
  const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % V; };
  const inputs = tf.tensor2d(Array.from({ length: B * T }, rnd), [B, T], 'int32');
  const targets = tf.oneHot(tf.tensor1d(Array.from({ length: B * T }, rnd), 'int32'), V);
  const opt = tf.train.adam(3e-4, 0.9, 0.95, 1e-8);
  const times = [];
  let loss = 0;
  for (let s = 0; s < warmup + steps; s++) {
    const t0 = now();
    const l = opt.minimize(() => tf.losses.softmaxCrossEntropy(targets, forward(inputs, B, T)), true, vars);
    loss = l.dataSync()[0];
    l.dispose();
    if (s >= warmup) times.push(now() - t0);
  }
  const step = steps > 0 ? median(times) : 0;
  let genTps = 0;
  if (gen > 0) {
    const g = [];
    for (let r = 0; r <= gen; r++) {
      const ids = Array.from({ length: 16 }, rnd);
      const t0 = now();
      for (let i = 0; i < 128; i++) {
        const win = ids.slice(-T);
        const next = tf.tidy(() => {
          const logits = forward(tf.tensor2d(win, [1, win.length], 'int32'), 1, win.length);
          const last = logits.slice([win.length - 1, 0], [1, V]).div(0.8);
          return tf.multinomial(last, 1, r * 1000 + i).dataSync()[0];
        });
        ids.push(next);
      }
      if (r > 0) g.push(128 / (now() - t0));
    }
    genTps = median(g);
  }
  const result = {
    config: which, threads: 1, step_s: step, train_tok_s: step > 0 ? (B * T) / step : 0, gen_tok_s: genTps, loss,
    backend: tf.getBackend(), tfjs: tf.version_core, heap_bytes: tf.memory().numBytes,
  };
  tf.dispose([inputs, targets, ...vars]);
  for (const m of masks.values()) m.dispose();
  opt.dispose();
  return result;
}

if (typeof process !== 'undefined' && import.meta.url === `file://${process.argv[1]}`) {
  const [which, ...rest] = process.argv.slice(2);
  const opt = {};
  for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, '')] = Number(rest[i + 1]);
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const tf = require('@tensorflow/tfjs'); // the union package registers gradients and chained ops
  const wasm = require('@tensorflow/tfjs-backend-wasm');
  wasm.setThreadsCount?.(1);
  await tf.setBackend('wasm');
  await tf.ready();
  const r = await benchTfjs(tf, which, opt);
  r.max_rss_bytes = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify(r));
  process.exit(0);
}
