// Autosave in IndexedDB: one record per key, each written by one put in one readwrite
// transaction. IndexedDB commits a transaction whole or not at all, so a reload, a crash
// or a full disk in the middle of a save leaves the previous record, never half of one.

const DB = 'wasmformer';
const STORE = 'autosave';

let opening = null;

function db() {
  if (!opening) {
    opening = new Promise((resolve, reject) => {
      if (!globalThis.indexedDB) {
        reject(new Error('this browser offers no IndexedDB here (a private window may block it)'));
        return;
      }
      const req = indexedDB.open(DB, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error ?? new Error('IndexedDB could not be opened'));
      req.onblocked = () => reject(new Error('IndexedDB is blocked by another tab of this page; close it and reload'));
    });
    opening.catch(() => { opening = null; });
  }
  return opening;
}

/** Runs one transaction on the store; resolves with the request's result once it commits. */
async function transact(mode, work) {
  const d = await db();
  return new Promise((resolve, reject) => {
    const tx = d.transaction(STORE, mode);
    const req = work(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(req.result);
    tx.onerror = () => reject(tx.error ?? req.error ?? new Error('the IndexedDB transaction failed'));
    tx.onabort = () => reject(tx.error ?? new Error('the IndexedDB transaction was aborted (is the disk full?)'));
  });
}

/** Replaces the record under key with value (a structured-clone object) in one transaction. */
export function saveRecord(key, value) {
  return transact('readwrite', (s) => s.put(value, key));
}

/** Writes every [key, value] of `puts` and deletes every key of `deletes`, in ONE transaction:
 * all of it happens or none (autosave's two slots move together). */
export function changeRecords(puts, deletes = []) {
  return transact('readwrite', (s) => {
    let req = null;
    for (const [key, value] of puts) req = s.put(value, key);
    for (const key of deletes) req = s.delete(key);
    return req ?? s.count();
  });
}

/** The record under key, or undefined. */
export function loadRecord(key) {
  return transact('readonly', (s) => s.get(key));
}

export function deleteRecord(key) {
  return transact('readwrite', (s) => s.delete(key));
}
