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

/// `fetch` of `/api/v1` + `path` with the token. No answer is an APIError with status 0; a 401 for an expired access
/// token from Sign in with Apple is renewed once and the request sent again; any other answer that is not 2xx is an
/// APIError with the server's code, message and Retry-After. `body` may be a Blob (sent as it is, with its type).
async function send(path, { method = 'GET', body, headers = {}, cache = 'no-store' } = {}, renewed = false) {
  const h = { ...headers };
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
    response = await fetch(`/api/v1${path}`, { method, body: payload, headers: h, credentials: 'omit', cache });
  } catch {
    throw new APIError(0, 'network', '');
  }
  if (response.status === 401 && !renewed && t && await renew()) return send(path, { method, body, headers, cache }, true);
  if (!response.ok) {
    let json = null;
    try { json = JSON.parse(await response.text()); } catch { json = null; }
    const retry = Number(response.headers.get('Retry-After')) || undefined;
    throw new APIError(response.status, json?.error?.code ?? json?.code, json?.error?.message ?? json?.message, retry);
  }
  return response;
}

/// The API with JSON in and out (`send`'s rules); a 204 gives null.
export async function api(path, options = {}) {
  const response = await send(path, { ...options, headers: { Accept: 'application/json', ...options.headers } });
  if (response.status === 204) return null;
  const text = await response.text();
  try { return text ? JSON.parse(text) : null; } catch { return null; }
}

/// A kept photo of the signed-in user, as an object URL for an <img> (an <img> cannot send the token); null when it
/// cannot be had. The browser may cache it (the server allows a day, privately).
export async function imageURL(imageId) {
  try {
    const response = await send(`/images/${encodeURIComponent(imageId)}`, { cache: 'default' });
    return URL.createObjectURL(await response.blob());
  } catch {
    return null;
  }
}

/// Saves what `GET /api/v1` + `path` answers as a file (the export downloads): fetched with the token, handed to the
/// browser as a download named by the server's Content-Disposition.
export async function download(path, fallbackName) {
  const response = await send(path);
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
