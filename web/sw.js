// agrun's service worker: a page of agrun works offline after its first visit.
//
// Install caches the whole build, every file precache.json lists (tools/make_precache.py
// writes it at build time, with each file's sha256), under a cache named for the build's
// version, and completes only once every file is in and matches its hash: a failed or
// half-finished download, or a deploy that changed files in between, fails the install and
// nothing of it is used. Fetches of those files are answered from that cache first.
//
// A new build is a new version (make_precache.py stamps it below, so the browser sees a
// changed worker): it installs into a cache of its own while the old worker goes on serving
// the pages it controls, and becomes active only when none of those is open any more (no
// skipWaiting, no clients.claim), so a page is served by one version from start to end.
// Activation then deletes every other version's cache.
//
// A file is checked against its sha256 when this worker puts it into the cache (install, or a
// repair), and the entry it puts carries that hash in a header of its own (CHECKED_HEADER).
// Serving an entry that carries its file's hash trusts it and streams it as it is: a warm
// start hashes nothing. An entry without that mark (put by anything but this worker: a
// page's code, an older build's worker) or with another file's hash is checked before it is
// served. One that does not match is fetched again when online, checked, and put back;
// offline, the page gets a clear failure (a module that throws AgrunBootError code
// 'boot_failed', or an HTTP 503 naming the file) instead of the damaged bytes.
const BUILD = null;

const PREFIX = 'agrun-precache-';
const CACHE = `${PREFIX}${BUILD}`;
const MANIFEST_URL = new URL('precache.json', self.location.href).href;
// The header of a cache entry this worker checked when it put it there: the file's sha256.
const CHECKED_HEADER = 'X-Agrun-Checked';

self.addEventListener('install', (event) => {
  event.waitUntil(install());
});

self.addEventListener('activate', (event) => {
  event.waitUntil(dropOtherVersions());
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (!['GET', 'HEAD'].includes(request.method) || new URL(request.url).origin !== self.location.origin) return;
  // A cross-origin only-if-cached request is one fetch() refuses; leave it to the browser.
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  event.respondWith(cacheFirst(request));
});

async function install() {
  if (BUILD === null) {
    throw new Error('agrun: this sw.js was not stamped with a build version: build dist/ with ./build.sh (tools/make_precache.py)');
  }
  const manifest = await fetchManifest();
  // Replace whatever an earlier, failed install of this version left.
  await caches.delete(CACHE);
  const cache = await caches.open(CACHE);
  try {
    // Past the HTTP cache: a stale copy of one file would mix two builds. Each file is
    // checked as it arrives and put in marked as checked.
    await Promise.all(manifest.files.map(async (file) => {
      const fresh = await fetch(new Request(fileURL(file.path), { cache: 'reload' }));
      if (!fresh.ok) throw new Error(`agrun: ${file.path} answered HTTP ${fresh.status}`);
      const body = await fresh.arrayBuffer();
      if (!(await matches(body, file))) {
        throw new Error(`agrun: ${file.path} does not match precache.json (${body.byteLength} bytes): the server changed during the install`);
      }
      await cache.put(fileURL(file.path), markedChecked(body, fresh, file));
    }));
    await cache.put(MANIFEST_URL, jsonResponse(manifest));
  } catch (error) {
    await caches.delete(CACHE);
    throw error;
  }
}

async function fetchManifest() {
  const response = await fetch(MANIFEST_URL, { cache: 'no-store' });
  if (!response.ok) throw new Error(`agrun: ${MANIFEST_URL} answered HTTP ${response.status}`);
  const manifest = await response.json();
  if (manifest.version !== BUILD) {
    // The server holds another build than this worker (a deploy in progress): install
    // nothing; the browser's next update check finds the worker that matches.
    throw new Error(`agrun: ${MANIFEST_URL} is version ${manifest.version}, this worker is ${BUILD}`);
  }
  return manifest;
}

async function dropOtherVersions() {
  const names = await caches.keys();
  await Promise.all(names.filter((name) => name.startsWith(PREFIX) && name !== CACHE).map((name) => caches.delete(name)));
}

async function cacheFirst(request) {
  const url = indexFor(request) ?? request.url;
  const file = (await manifestFiles())?.get(url);
  if (file) {
    const response = await checkedFile(url, file, request);
    return request.method === 'HEAD' ? withoutBody(response) : response;
  }
  if (request.method === 'HEAD') return fetch(request);
  const cache = await caches.open(CACHE);
  return (await cache.match(request)) ?? fetch(request);
}

// The manifest this version installed (url -> file), read once per start of this worker.
let manifestMap = null;

async function manifestFiles() {
  manifestMap ??= (async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(MANIFEST_URL);
    if (!hit) return null; // this version is not installed (yet)
    let manifest = await hit.json().catch(() => null);
    if (manifest?.version !== BUILD || !Array.isArray(manifest.files)) {
      // Damaged: the server's, if it is still this build's; else files are served unchecked.
      manifest = await fetchManifest().catch(() => null);
      if (manifest === null) return null;
      await cache.put(MANIFEST_URL, jsonResponse(manifest));
    }
    return new Map(manifest.files.map((file) => [fileURL(file.path), file]));
  })();
  const files = await manifestMap;
  if (files === null) manifestMap = null;
  return files;
}

/** A listed file from the cache, trusted if this worker checked it when it put it there, else checked now; repaired from the network if it must be. */
async function checkedFile(url, file, request) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(url);
  if (hit && hit.headers.get(CHECKED_HEADER) === file.sha256) return hit;
  if (hit) {
    const body = await hit.arrayBuffer();
    if (await matches(body, file)) {
      // The right bytes without the mark: marked now, so the next serve need not hash them.
      const response = markedChecked(body, hit, file);
      await cache.put(url, response.clone());
      return response;
    }
  }
  let why;
  try {
    const fresh = await fetch(new Request(url, { cache: 'reload' }));
    if (!fresh.ok) throw new Error(`the server answered HTTP ${fresh.status}`);
    const body = await fresh.arrayBuffer();
    if (!(await matches(body, file))) throw new Error('the server holds another build');
    const response = markedChecked(body, fresh, file);
    await cache.put(url, response.clone());
    return response;
  } catch (error) {
    why = error.message;
  }
  const damage = hit ? 'is damaged (it does not match its sha256 in precache.json)' : 'is missing';
  return failure(request, `agrun: ${file.path} in this page's offline cache ${damage} and could not be fetched again (${why}): load the page again when the network is back`);
}

// `body` (checked against `file`) as a response like `like`, marked as checked.
function markedChecked(body, like, file) {
  const headers = new Headers(like.headers);
  headers.set(CHECKED_HEADER, file.sha256);
  return new Response(body, { status: like.status, statusText: like.statusText, headers });
}

async function matches(body, file) {
  return body.byteLength === file.size && hex(await crypto.subtle.digest('SHA-256', body)) === file.sha256;
}

// What a page gets for a file that cannot be served: a module that throws agrun's boot error
// where a script asked (an import fails with a message, not a bare "failed to fetch"), and an
// HTTP 503 naming the file otherwise (boot.js puts its status text into its error).
function failure(request, message) {
  const headers = { 'X-Agrun-Precache': 'damaged', 'Cache-Control': 'no-store' };
  if (['script', 'worker', 'sharedworker'].includes(request.destination)) {
    const errors = fileURL('errors.js');
    // errors.js itself must not import itself (it would wait for its own evaluation).
    const load = request.url === errors ? '' : `try { ({ AgrunBootError: BootError } = await import(${JSON.stringify(errors)})); } catch {}`;
    const body = `let BootError = null;\n${load}\nconst message = ${JSON.stringify(message)};\n`
      + 'const error = BootError ? new BootError(message) : Object.assign(new Error(message), { name: "AgrunBootError", code: "boot_failed" });\n'
      + 'throw error;\n';
    return new Response(body, { headers: { ...headers, 'Content-Type': 'text/javascript' } });
  }
  return new Response(message, { status: 503, statusText: 'damaged in the offline cache and not fetched again', headers: { ...headers, 'Content-Type': 'text/plain' } });
}

function withoutBody(response) {
  return new Response(null, { status: response.status, statusText: response.statusText, headers: response.headers });
}

// A folder's URL is its index.html (the site's own page at its root).
function indexFor(request) {
  const url = new URL(request.url);
  return url.pathname.endsWith('/') ? new URL('index.html', url).href : null;
}

function fileURL(path) {
  return new URL(path, self.location.href).href;
}

function jsonResponse(value) {
  return new Response(JSON.stringify(value), { headers: { 'Content-Type': 'application/json' } });
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
