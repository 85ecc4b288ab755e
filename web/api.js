// The server's /api/v1 over fetch, same origin. The token lives in localStorage (see docs/web.md for why, and what
// the Content-Security-Policy does about it); it is only ever sent in the Authorization header, never in a URL.

const tokenKey = 'foodmoment.token', refreshKey = 'foodmoment.refresh';

export function token() { return localStorage.getItem(tokenKey); }

/// The access token, and with Sign in with Apple the refresh token that renews it; `null` signs out (both go).
export function setToken(value, refresh) {
  if (value) localStorage.setItem(tokenKey, value); else localStorage.removeItem(tokenKey);
  if (refresh) localStorage.setItem(refreshKey, refresh);
  if (!value) localStorage.removeItem(refreshKey);
}

/// One renewal at a time: the server revokes a refresh token used twice, so concurrent 401s share one refresh.
let renewing = null;
function renew() {
  const refresh = localStorage.getItem(refreshKey);
  if (!refresh) return Promise.resolve(false);
  renewing ??= (async () => {
    try {
      const r = await fetch('/api/v1/auth/refresh', { method: 'POST', credentials: 'omit', cache: 'no-store',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ refresh_token: refresh }) });
      if (!r.ok) return false;
      const answer = await r.json();
      setToken(answer.access_token, answer.refresh_token);
      return true;
    } catch {
      return false;
    } finally {
      renewing = null;
    }
  })();
  return renewing;
}

/// An answer that is not 2xx, or no answer at all (`status` 0): `code` and `message` are the server's when it sent them.
export class APIError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/// `fetch` of `/api/v1` + `path` with the token; JSON in and out. `body` may be a Blob (sent as it is, with its type).
export async function api(path, { method = 'GET', body, headers = {} } = {}, renewed = false) {
  const h = { Accept: 'application/json', ...headers };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  let payload;
  if (body instanceof Blob) {
    payload = body;
    h['Content-Type'] = body.type || 'application/octet-stream';
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    h['Content-Type'] = 'application/json';
  }
  let response;
  try {
    response = await fetch(`/api/v1${path}`, { method, body: payload, headers: h, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new APIError(0, 'network', '');
  }
  // An expired access token from Sign in with Apple is renewed once and the request sent again.
  if (response.status === 401 && !renewed && t && await renew()) return api(path, { method, body, headers }, true);
  if (response.status === 204) return null;
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (!response.ok) {
    const retry = Number(response.headers.get('Retry-After')) || undefined;
    throw new APIError(response.status, json?.error?.code ?? json?.code, json?.error?.message ?? json?.message, retry);
  }
  return json;
}

/// A kept photo of the signed-in user, as an object URL for an <img> (an <img> cannot send the token).
export async function imageURL(imageId) {
  const response = await fetch(`/api/v1/images/${encodeURIComponent(imageId)}`, {
    headers: { Authorization: `Bearer ${token()}` }, credentials: 'omit',
  });
  if (!response.ok) return null;
  return URL.createObjectURL(await response.blob());
}

/// Saves what `GET /api/v1` + `path` answers as a file (the export downloads): fetched with the token, handed to the
/// browser as a download named by the server's Content-Disposition.
export async function download(path, fallbackName) {
  let response;
  try {
    response = await fetch(`/api/v1${path}`, { headers: { Authorization: `Bearer ${token()}` }, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new APIError(0, 'network', '');
  }
  if (!response.ok) {
    let json = null;
    try { json = await response.json(); } catch { json = null; }
    throw new APIError(response.status, json?.error?.code, json?.error?.message);
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

/// SHA-256 of a text, lower-case hex (Sign in with Apple's nonce: Apple gets the hash, our server the text).
export async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/// A key for one user action, so a retried POST is applied once (`Idempotency-Key`).
export function idempotencyKey() { return crypto.randomUUID(); }
