// The worker side of WorkerModel: one Model in this thread, driven by messages from
// worker-client.js. The protocol, both directions plain structured-clone objects:
//   client -> worker  {id, op, args}            one call; {op: 'abort', target} cancels one
//   worker -> client  {id, kind: 'progress' | 'piece' | 'done' | 'error', ...}
// Calls run as they arrive, like calls on a Model in the main thread: a second call while
// one runs fails with WF_ERR_BUSY from the Model itself.

/** A structured-clone form of an error; the client rebuilds a WfError or an AbortError. */
function wireError(e) {
  return { name: e?.name ?? 'Error', code: e?.code, message: e?.message ?? String(e) };
}

/** The buffers of the typed arrays in value, to transfer instead of copy. */
function transferables(value) {
  if (ArrayBuffer.isView(value)) return [value.buffer];
  if (value && typeof value === 'object') return Object.values(value).flatMap((v) => (ArrayBuffer.isView(v) ? [v.buffer] : []));
  return [];
}

/**
 * Serves one model over port ({post(message, transfer), listen(handler)}), with api the
 * package's entry point of this thread (createModel, loadModel, ...).
 */
export function serveModel(api, port) {
  let model = null;
  const running = new Map(); // call id -> AbortController

  const ops = {
    async create(id, [config, opts]) {
      model?.dispose();
      model = await api.createModel(config, opts);
      return model.info();
    },
    async load(id, [bytes, opts]) {
      const next = await api.loadModel(bytes, opts);
      model?.dispose();
      model = next;
      return model.info();
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
    async loadInto(id, [bytes]) {
      need().load(bytes);
      return model.info();
    },
    tensors: () => need().tensors(),
    getTensor: (id, [name]) => need().getTensor(name),
    setTensor: (id, [name, values]) => need().setTensor(name, values),
    setOptimizer: (id, [settings]) => { need().setOptimizer(settings); return need().optimizer; },
    encode: (id, [text]) => tokenizer().encode(text),
    decode: (id, [ids]) => tokenizer().decode(ids),
    dispose() {
      model?.dispose();
      model = null;
      return null;
    },
  };

  function need() {
    if (!model) throw Object.assign(new Error('the worker has no model'), { name: 'WfError', code: 'WF_ERR_STATE' });
    return model;
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
