// Meals logged while the server cannot be reached: kept in IndexedDB with the Idempotency-Key they were first sent
// with, shown at once, and sent again (same key, so the server applies each once) when the browser is back online or
// the app starts.
import { api, APIError } from './api.js';

const dbName = 'foodmoment', store = 'pending-meals';

function open() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(dbName, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(store, { keyPath: 'key' });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function run(mode, action) {
  const db = await open();
  return new Promise((resolve, reject) => {
    const tx = db.transaction(store, mode);
    const result = action(tx.objectStore(store));
    tx.oncomplete = () => { db.close(); resolve(result.result ?? result); };
    tx.onerror = () => { db.close(); reject(tx.error); };
  });
}

/// Keeps a meal to send later: `body` is the POST /meals body, `key` its Idempotency-Key, `preview` what Today shows.
export function enqueue(key, body, preview) {
  return run('readwrite', (s) => s.put({ key, body, preview, queuedAt: Date.now() }));
}

export function pending() { return run('readonly', (s) => s.getAll()); }

function remove(key) { return run('readwrite', (s) => s.delete(key)); }

let flushing = null;

/// Sends every waiting meal, oldest first; stops at the first network failure (still offline). A meal the server
/// refuses (4xx) is dropped with its reason, so one bad entry cannot block the rest. Returns how many were sent.
export function flush(onRefused = () => {}) {
  flushing ??= (async () => {
    let sent = 0;
    try {
      const waiting = (await pending()).sort((a, b) => a.queuedAt - b.queuedAt);
      for (const item of waiting) {
        try {
          await api('/meals', { method: 'POST', body: item.body, headers: { 'Idempotency-Key': item.key } });
          await remove(item.key);
          sent += 1;
        } catch (error) {
          if (error instanceof APIError && error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 429) {
            await remove(item.key);
            onRefused(item, error);
          } else {
            break;
          }
        }
      }
    } finally {
      flushing = null;
    }
    return sent;
  })();
  return flushing;
}
