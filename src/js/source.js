// Model files as they arrive (docs/API.md, "Loading from a URL, a file or a stream"): bytes,
// a fetch Response, a ReadableStream of bytes, a Blob (a File from a file picker) or an async
// iterable of byte chunks (Node's file reads), each read as pieces in file order with the
// file's size where it is known. A GGUF file goes into the core piece by piece
// (handle.js fromSource, wf_model_load_feed) and is never whole in memory; the other formats
// are gathered first.
import { WfError } from './errors.js';
import { show } from './options.js';

/** Bytes the loaders hand the core at a time: a staging buffer of this size in the heap. */
export const PIECE = 4 << 20;

const isBytes = (x) => x instanceof ArrayBuffer || ArrayBuffer.isView(x);
const bytesOf = (x) => (x instanceof Uint8Array ? x : x instanceof ArrayBuffer ? new Uint8Array(x) : new Uint8Array(x.buffer, x.byteOffset, x.byteLength));

/** Whether x is a source loadModel streams (not bytes already in memory). */
export function isStreamSource(x) {
  return (typeof Response !== 'undefined' && x instanceof Response) || (typeof ReadableStream !== 'undefined' && x instanceof ReadableStream)
    || (typeof Blob !== 'undefined' && x instanceof Blob) || (!isBytes(x) && typeof x?.[Symbol.asyncIterator] === 'function');
}

/** A stream's reader as an async iterator of Uint8Array pieces; cancel() releases it. A byte
 * stream (a fetch body, a Blob's) is read into one buffer of PIECE bytes, again and again
 * (reused: a piece is valid until the next is read): a file read in network-sized pieces
 * would otherwise leave hundreds of megabytes of them for the garbage collector, and the
 * page's peak memory would hold them. */
function readerChunks(stream, what) {
  let reader, buf = null;
  try {
    reader = stream.getReader({ mode: 'byob' });
    buf = new ArrayBuffer(PIECE);
  } catch {
    reader = stream.getReader(); // not a byte stream: its own pieces
  }
  return {
    reused: buf !== null,
    async next() {
      const { value, done } = buf ? await reader.read(new Uint8Array(buf, 0, PIECE)) : await reader.read();
      if (buf && value) buf = value.buffer; // the same memory, handed back to read into again
      if (done) return { done: true, value: undefined };
      if (!isBytes(value)) throw new WfError('WF_ERR_ARG', `${what} gave a piece that is not bytes: ${show(value)}`);
      return { done: false, value: bytesOf(value) };
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}

/** Bytes in pieces of at most PIECE (views, no copy). */
function sliceChunks(bytes) {
  let at = 0;
  return {
    async next() {
      if (at >= bytes.length) return { done: true, value: undefined };
      const piece = bytes.subarray(at, Math.min(bytes.length, at + PIECE));
      at += piece.length;
      return { done: false, value: piece };
    },
    cancel() {},
  };
}

/** The size a Response announces for its body, or null: none, or a compressed one (its
 * Content-Length counts the bytes on the wire, not the file's). */
function announced(response) {
  const encoding = response.headers.get('content-encoding');
  const length = response.headers.get('content-length');
  if (length === null || (encoding && encoding !== 'identity')) return null;
  const n = Number(length);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** A Response a model can be read from: ok (a 404's page is no model) and unread. */
export function checkResponse(response, what) {
  const where = response.url ? ` (${response.url})` : '';
  if (!response.ok) throw new WfError('WF_ERR_ARG', `${what} is a Response of status ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${where}: not a model file`);
  if (response.bodyUsed) throw new WfError('WF_ERR_ARG', `${what} is a Response whose body has been read already${where}`);
}

/**
 * A model source opened: {total (bytes, or null when unknown), next() (the next piece, as an
 * iterator's result), cancel(), reused (a piece is overwritten by the next read: copy it to
 * keep it)}. A Response must be ok and unread; `what` names the source in
 * messages.
 */
export function openSource(source, what = 'the model source') {
  if (isBytes(source)) return { total: source.byteLength, ...sliceChunks(bytesOf(source)) };
  if (typeof Response !== 'undefined' && source instanceof Response) {
    checkResponse(source, what);
    if (!source.body) return { total: 0, ...sliceChunks(new Uint8Array(0)) };
    return { total: announced(source), ...readerChunks(source.body, `${what} (a Response)`) };
  }
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) {
    if (source.locked) throw new WfError('WF_ERR_ARG', `${what} is a ReadableStream that is locked (read by someone else)`);
    return { total: null, ...readerChunks(source, `${what} (a ReadableStream)`) };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) return { total: source.size, ...readerChunks(source.stream(), `${what} (a Blob)`) };
  if (source && typeof source[Symbol.asyncIterator] === 'function') {
    const it = source[Symbol.asyncIterator]();
    return {
      total: Number.isSafeInteger(source.size) ? source.size : null,
      async next() {
        const r = await it.next();
        if (!r.done && !isBytes(r.value)) throw new WfError('WF_ERR_ARG', `${what} gave a piece that is not bytes: ${show(r.value)}`);
        return r.done ? { done: true, value: undefined } : { done: false, value: bytesOf(r.value) };
      },
      cancel: () => { it.return?.()?.catch?.(() => {}); },
    };
  }
  throw new WfError('WF_ERR_ARG', `${what} must be bytes (Uint8Array, ArrayBuffer, Buffer), a Response, a ReadableStream, a Blob or File, or an async iterable of bytes, not ${show(source)}`);
}

/** The pieces' bytes as one Uint8Array (total: its length when known). */
export function concat(pieces, total) {
  const n = pieces.reduce((s, p) => s + p.length, 0);
  if (pieces.length === 1 && (total === null || total === n)) return pieces[0];
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
