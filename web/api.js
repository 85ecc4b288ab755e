// The server's /api/v1 over fetch, same origin. The token lives in localStorage (see docs/web.md for why, and what
// the Content-Security-Policy does about it); it is only ever sent in the Authorization header, never in a URL.

const tokenKey = 'foodmoment.token';

export function token() { return localStorage.getItem(tokenKey); }
export function setToken(value) { value ? localStorage.setItem(tokenKey, value) : localStorage.removeItem(tokenKey); }

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
export async function api(path, { method = 'GET', body, headers = {} } = {}) {
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

/// A key for one user action, so a retried POST is applied once (`Idempotency-Key`).
export function idempotencyKey() { return crypto.randomUUID(); }
