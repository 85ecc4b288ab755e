// The app shell offline: the page, its scripts, style and icon are kept in a cache and served from it when the
// network is down. Network first, so a new version of the app is used as soon as the server has it. The API is never
// cached (a diary must not be served stale); a meal logged offline waits in IndexedDB (queue.js) instead.
const shell = 'foodmoment-shell-v2';
const files = ['./', 'index.html', 'app.js', 'api.js', 'i18n.js', 'queue.js', 'style.css', 'icon.svg', 'manifest.webmanifest'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(shell).then((cache) => cache.addAll(files)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n !== shell).map((n) => caches.delete(n))))
    .then(() => self.clients.claim()));
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
  event.respondWith(fetch(event.request)
    .then((response) => {
      if (response.ok) { const copy = response.clone(); caches.open(shell).then((cache) => cache.put(event.request, copy)); }
      return response;
    })
    .catch(() => caches.match(event.request, { ignoreSearch: true }).then((hit) => hit ?? caches.match('index.html'))));
});
