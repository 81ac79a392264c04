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
const BUILD = null;

const PREFIX = 'agrun-precache-';
const CACHE = `${PREFIX}${BUILD}`;
const MANIFEST_URL = new URL('precache.json', self.location.href).href;

self.addEventListener('install', (event) => {
  event.waitUntil(install());
});

self.addEventListener('activate', (event) => {
  event.waitUntil(dropOtherVersions());
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
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
    const urls = manifest.files.map((file) => fileURL(file.path));
    // Past the HTTP cache: a stale copy of one file would mix two builds.
    await cache.addAll(urls.map((url) => new Request(url, { cache: 'reload' })));
    await checkHashes(cache, manifest.files);
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

// Every cached body, byte for byte what the build wrote.
async function checkHashes(cache, files) {
  for (const file of files) {
    const response = await cache.match(fileURL(file.path));
    const body = await response.arrayBuffer();
    const digest = hex(await crypto.subtle.digest('SHA-256', body));
    if (body.byteLength !== file.size || digest !== file.sha256) {
      throw new Error(`agrun: ${file.path} does not match precache.json (sha256 ${digest}, ${body.byteLength} bytes): the server changed during the install`);
    }
  }
}

async function dropOtherVersions() {
  const names = await caches.keys();
  await Promise.all(names.filter((name) => name.startsWith(PREFIX) && name !== CACHE).map((name) => caches.delete(name)));
}

async function cacheFirst(request) {
  const cache = await caches.open(CACHE);
  const index = indexFor(request);
  const hit = (await cache.match(request)) ?? (index && (await cache.match(index)));
  return hit ?? fetch(request);
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
