// The package's errors, shared by every thread and module (the worker client too, which
// loads no wasm).

/** An error from wasmformer: `code` is a status name such as 'WF_ERR_CONFIG' (or one of the
 * JavaScript side's: 'WF_ERR_DISPOSED', 'WF_ERR_BUSY', 'WF_ERR_LOAD', 'WF_ERR_WORKER', 'WF_ERR_MODULE');
 * `message` is the core's message. */
export class WfError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'WfError';
    this.code = code;
  }
}

/** The error a cancelled operation throws: the signal's reason when it is an error
 * (abort(new Error(...)), AbortSignal.timeout()'s TimeoutError), else a DOMException named
 * 'AbortError' (with a string reason as its message). */
export function abortError(signal) {
  const reason = signal?.reason;
  if (reason instanceof Error || (typeof DOMException === 'function' && reason instanceof DOMException)) return reason;
  return new DOMException(typeof reason === 'string' ? reason : 'The operation was aborted', 'AbortError');
}

/** Throws the AbortError of signal when it has been aborted. */
export function throwIfAborted(signal) {
  if (signal?.aborted) throw abortError(signal);
}

/** The symbol `using` calls (Symbol.dispose), where the runtime has one (Node 20.4+, recent
 * browsers); elsewhere a registered symbol nothing calls, so the method is merely inert. */
export const DISPOSE = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : Symbol.for('Symbol.dispose');
