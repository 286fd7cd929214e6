// The measurement behind bench/studies/gen-threads.mjs, in Node or in a page: each build's models
// of each preset on 1 and 2 threads, all generating the same text in turns, round after
// round (order reversed every other round), wall clock. builds: [{name, pkg}] with pkg a
// wasmformer entry point (src/js/node.js or src/js/index.js); worker: the models run in
// a worker (createWorkerModel), as the page's do. Resolves to one row per model.
import { median } from '../configs.mjs';

export async function measureGeneration(builds, { text, presets, rounds, tokens, worker = false, onRound = () => {} }) {
  const prompt = text.slice(0, 16);
  const cases = [];
  for (const { name, pkg } of builds) {
    for (const preset of presets) {
      for (const threads of [1, 2]) {
        const model = await (worker ? pkg.createWorkerModel : pkg.createModel)(preset, { threads, text });
        cases.push({ build: name, preset, threads, got: (await model.info()).threads, model, times: [] });
      }
    }
  }
  const opts = { maxTokens: tokens, temperature: 0.8, seed: 7 };
  for (const c of cases) await c.model.generateText(prompt, opts); // warm up: compile, fill the caches
  for (let r = 0; r < rounds; r++) {
    for (const c of r % 2 ? [...cases].reverse() : cases) {
      const t0 = performance.now();
      await c.model.generateText(prompt, opts);
      c.times.push((performance.now() - t0) / 1000);
    }
    onRound(r + 1);
  }
  const rate = (c) => tokens / median(c.times);
  const find = (build, preset, threads) => cases.find((c) => c.build === build && c.preset === preset && c.threads === threads);
  const base = builds.length > 1 ? builds[0].name : null;
  const rows = cases.map((c) => {
    const one = find(c.build, c.preset, 1), before = base && c.build !== base ? find(base, c.preset, c.threads) : null;
    return {
      build: c.build, preset: c.preset, threads: c.threads, threads_running: c.got, tok_s: rate(c),
      over_1_thread: c.threads > 1 ? rate(c) / rate(one) : null,
      over_baseline: before ? rate(c) / rate(before) : null,
    };
  });
  for (const c of cases) c.model.dispose();
  return rows;
}
