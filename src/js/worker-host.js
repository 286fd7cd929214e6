// The worker side of WorkerModel and WorkerSeq2Seq: one model in this thread, driven by
// messages from worker-client.js under the protocol of worker-ops.js.
import { WORKER_OPS } from './worker-ops.js';

/** A structured-clone form of an error; the client rebuilds a WfError or an AbortError. */
function wireError(e) {
  return { name: e?.name ?? 'Error', code: e?.code, message: e?.message ?? String(e), ...(e?.facts ? { facts: e.facts } : {}) };
}

function stateError(message) {
  return Object.assign(new Error(message), { name: 'WfError', code: 'WF_ERR_STATE' });
}

/** The buffers of the typed arrays in value (or in its fields, or in arrays there), to
 * transfer instead of copy. */
function transferables(value, depth = 0) {
  if (ArrayBuffer.isView(value)) return [value.buffer];
  if (depth < 2 && value && typeof value === 'object') return Object.values(value).flatMap((v) => transferables(v, depth + 1));
  return [];
}

/** How long a stream's pieces gather before they cross as one message. One message per
 * token floods the receiving thread: a small model writes thousands of tokens a second, and
 * a page that cannot keep up stops answering clicks (its Stop button among them). */
export const STREAM_GATHER_MS = 16;

/** A stream callback (piece, count) that sends the pieces joined, with the latest count: at
 * once when the last message went STREAM_GATHER_MS ago or more, else with a later piece or
 * at flush(). A slow model's tokens still cross one by one, as they come. */
function gathered(send) {
  let text = '', count = 0, waiting = false, sent = -Infinity;
  const flush = () => {
    if (!waiting) return;
    send(text, count);
    text = '';
    waiting = false;
    sent = performance.now();
  };
  const add = (piece, n) => {
    text += piece;
    count = n;
    waiting = true;
    if (performance.now() - sent >= STREAM_GATHER_MS) flush();
  };
  return { add, flush };
}

/**
 * Serves one model over port ({post(message, transfer), listen(handler)}), with api the
 * package's entry point of this thread (createModel, loadModel, ...).
 */
export function serveModel(api, port) {
  let model = null; // the Model, owned here
  let main = null;  // what the client's calls go to: the model, or its Seq2Seq view
  let kind = null;  // 'model' or 'seq2seq': the client's class, and so its table of operations
  const running = new Map(); // call id -> AbortController

  function use(next, nextKind) {
    if (model !== next) model?.dispose();
    model = next;
    kind = nextKind;
    main = kind === 'seq2seq' ? api.Seq2Seq.from(model) : model;
  }

  /** A loaded model of the kind asked for, or a WF_ERR_STATE that says which it is; source:
   * bytes, a Blob or a ReadableStream (loadWorkerModel), read here. */
  async function loadChecked(bytes, opts, asKind) {
    const next = await api.loadModel(bytes, opts);
    try {
      if (asKind === 'seq2seq') api.Seq2Seq.from(next);
    } catch (e) {
      next.dispose();
      throw e;
    }
    return next;
  }

  const lifecycle = {
    /** A new model: ['create', config, opts], ['createSeq2Seq', config, opts], ['load', source, opts, kind,
     * progress] (progress: send the load's onProgress events) or ['safetensors', files, opts]. A load
     * stops when the call is aborted. */
    async start([how, what, opts, asKind = 'model', progress = false], id) {
      model?.dispose();
      model = null;
      if (how === 'create') use(await api.createModel(what, opts), 'model');
      else if (how === 'safetensors') use(await api.importSafetensors(what, opts), 'model');
      else if (how === 'createSeq2Seq') use((await api.createSeq2Seq(what, opts)).model, 'seq2seq');
      else {
        const onProgress = progress ? (p) => port.post({ id, kind: 'event', name: 'onProgress', args: [p] }) : undefined;
        use(await loadChecked(what, { ...opts, signal: running.get(id).signal, ...(onProgress && { onProgress }) }, asKind), asKind);
      }
      return null;
    },
    /** The model replaced by a checkpoint's of the same kind: in place for a Model, loaded
     * aside and checked for a Seq2Seq (a decoder's file must not replace it). */
    async replace([bytes]) {
      need();
      if (kind === 'seq2seq') use(await loadChecked(bytes, undefined, 'seq2seq'), 'seq2seq');
      else model.load(bytes);
      return null;
    },
  };

  function need() {
    if (!model) throw stateError('the worker has no model');
    return model;
  }

  function target(on) {
    if (on === 'model') return need();
    if (on === 'tokenizer') {
      const tok = need().tokenizer;
      if (!tok) throw stateError('the model has no tokenizer yet: train it on text first');
      return tok;
    }
    need();
    return main;
  }

  /** Runs operation op of the table with the client's args. */
  async function call(id, op, args) {
    const spec = WORKER_OPS[kind ?? 'model'][op];
    let stream = null;
    if (!spec || !Object.hasOwn(WORKER_OPS[kind ?? 'model'], op)) {
      throw Object.assign(new Error(`unknown operation "${op}"`), { name: 'WfError', code: 'WF_ERR_ARG' });
    }
    if (spec.opts !== undefined) {
      const opts = { ...(args[spec.opts] ?? {}) };
      if (spec.signal) opts.signal = running.get(id).signal;
      for (const [i, name] of (spec.events ?? []).entries()) {
        if (!opts[name]) continue;
        const send = (...a) => port.post({ id, kind: 'event', name, args: a });
        if (spec.stream && i === 0) {
          stream = gathered(send);
          opts[name] = stream.add;
        } else {
          opts[name] = send;
        }
      }
      args[spec.opts] = opts;
    }
    const obj = target(spec.on);
    try {
      const value = await obj[op](...args);
      if (spec.stream) {
        for await (const piece of value); // eslint-disable-line no-unused-vars
        return null;
      }
      return value;
    } finally {
      stream?.flush(); // the last pieces go before the call's end (or its error)
    }
  }

  port.listen(async (msg) => {
    const { id, op, args } = msg;
    if (op === 'abort') {
      running.get(msg.target)?.abort();
      return;
    }
    running.set(id, new AbortController());
    try {
      const value = Object.hasOwn(lifecycle, op) ? await lifecycle[op](args ?? [], id) : await call(id, op, [...(args ?? [])]);
      port.post({ id, kind: 'done', value, info: model?.info() ?? null }, transferables(value));
    } catch (e) {
      let info = null;
      try { info = model?.info() ?? null; } catch { /* a disposed or failed model: no snapshot */ }
      port.post({ id, kind: 'error', error: wireError(e), info });
    } finally {
      running.delete(id);
    }
  });
}
