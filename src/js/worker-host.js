// The worker side of WorkerModel and WorkerSeq2Seq: one model in this thread (a Model; for
// an encoder-decoder also its Seq2Seq view), driven by messages from worker-client.js. The protocol, both directions plain structured-clone objects:
//   client -> worker  {id, op, args}            one call; {op: 'abort', target} cancels one
//   worker -> client  {id, kind: 'progress' | 'piece' | 'done' | 'error', ...}
// Calls run as they arrive, like calls on a Model in the main thread: a second call while
// one runs fails with WF_ERR_BUSY from the Model itself.

/** A structured-clone form of an error; the client rebuilds a WfError or an AbortError. */
function wireError(e) {
  return { name: e?.name ?? 'Error', code: e?.code, message: e?.message ?? String(e) };
}

/** The buffers of the typed arrays in value (or in its fields, or in arrays there), to
 * transfer instead of copy. */
function transferables(value, depth = 0) {
  if (ArrayBuffer.isView(value)) return [value.buffer];
  if (depth < 2 && value && typeof value === 'object') return Object.values(value).flatMap((v) => transferables(v, depth + 1));
  return [];
}

/**
 * Serves one model over port ({post(message, transfer), listen(handler)}), with api the
 * package's entry point of this thread (createModel, loadModel, ...).
 */
export function serveModel(api, port) {
  let model = null;
  let s2s = null; // the Seq2Seq view of model, when it is an encoder-decoder
  const running = new Map(); // call id -> AbortController

  function use(next) {
    if (model !== next) model?.dispose();
    model = next;
    s2s = model.config.arch === 'encoder-decoder' ? api.Seq2Seq.from(model) : null;
    return model.info();
  }

  const ops = {
    async create(id, [config, opts]) {
      model?.dispose();
      model = null;
      return use(await api.createModel(config, opts));
    },
    async createSeq2Seq(id, [config, opts]) {
      model?.dispose();
      model = null;
      return use((await api.createSeq2Seq(config, opts)).model);
    },
    async load(id, [bytes, opts, kind]) {
      const next = await api.loadModel(bytes, opts);
      try {
        if (kind === 'seq2seq') api.Seq2Seq.from(next); // the right arch, or a WF_ERR_STATE that says which
      } catch (e) {
        next.dispose();
        throw e;
      }
      return use(next);
    },
    info: () => need().info(),
    async train(id, [data, opts]) {
      const summary = await need().train(data, {
        ...opts, signal: running.get(id).signal,
        onProgress: opts.progress ? (p) => port.post({ id, kind: 'progress', value: p }) : undefined,
      });
      return { summary, info: model.info() };
    },
    evaluate: (id, [data, opts]) => need().evaluate(data, { ...opts, signal: running.get(id).signal }),
    async generate(id, [prompt, opts]) {
      const it = need().generate(prompt, {
        ...opts, signal: running.get(id).signal,
        onToken: (piece, tokens) => port.post({ id, kind: 'piece', value: piece, tokens }),
      });
      for await (const piece of it); // eslint-disable-line no-unused-vars
      return null;
    },
    save: (id, [opts]) => need().save(opts),
    async loadInto(id, [bytes, kind]) {
      if (kind !== 'seq2seq') {
        need().load(bytes);
        return use(model);
      }
      // a decoder's file must not replace an encoder-decoder: load aside, check, swap
      const next = await api.loadModel(bytes);
      try {
        api.Seq2Seq.from(next);
      } catch (e) {
        next.dispose();
        throw e;
      }
      return use(next);
    },
    tensors: () => need().tensors(),
    getTensor: (id, [name]) => need().getTensor(name),
    setTensor: (id, [name, values]) => need().setTensor(name, values),
    setOptimizer: (id, [settings]) => { need().setOptimizer(settings); return need().optimizer; },
    selfAttention: (id, [data]) => need().selfAttention(data),
    async trainPairs(id, [pairs, opts]) {
      const result = await seq2seq().train(pairs, {
        ...opts, signal: running.get(id).signal,
        onProgress: opts.progress ? (p) => port.post({ id, kind: 'progress', value: p }) : undefined,
      });
      return { result, info: model.info() };
    },
    evaluatePairs: (id, [pairs, opts]) => seq2seq().evaluate(pairs, opts),
    decodeIds: (id, [source, opts]) => seq2seq().decodeIds(source, opts),
    translate: (id, [text, opts]) => seq2seq().translate(text, opts),
    accuracy: (id, [pairs, opts]) => seq2seq().accuracy(pairs, opts),
    crossAttention: (id, [source, output]) => seq2seq().crossAttention(source, output),
    encode: (id, [text]) => tokenizer().encode(text),
    decode: (id, [ids]) => tokenizer().decode(ids),
    dispose() {
      model?.dispose();
      model = null;
      s2s = null;
      return null;
    },
  };

  function need() {
    if (!model) throw Object.assign(new Error('the worker has no model'), { name: 'WfError', code: 'WF_ERR_STATE' });
    return model;
  }

  function seq2seq() {
    need();
    if (!s2s) throw Object.assign(new Error(`this worker's model is a ${model.config.arch}, not an encoder-decoder`), { name: 'WfError', code: 'WF_ERR_STATE' });
    return s2s;
  }

  function tokenizer() {
    const tok = need().tokenizer;
    if (!tok) throw Object.assign(new Error('the model has no tokenizer yet: train it on text first'), { name: 'WfError', code: 'WF_ERR_STATE' });
    return tok;
  }

  port.listen(async (msg) => {
    const { id, op, args } = msg;
    if (op === 'abort') {
      running.get(msg.target)?.abort();
      return;
    }
    running.set(id, new AbortController());
    try {
      const fn = ops[op];
      if (!fn) throw Object.assign(new Error(`unknown operation "${op}"`), { name: 'WfError', code: 'WF_ERR_ARG' });
      const value = await fn(id, args ?? []);
      port.post({ id, kind: 'done', value }, transferables(value));
    } catch (e) {
      port.post({ id, kind: 'error', error: wireError(e) });
    } finally {
      running.delete(id);
    }
  });
}
