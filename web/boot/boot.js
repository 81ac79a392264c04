// Boots Pyodide from the vendored files beside this module and installs agrun's wheels.
// One interpreter per page and indexURL: every createRuntime() shares it.
import { AgrunBootError, AgrunError } from '../errors.js';
import {
  leaveSnapshotMode,
  loadShipped,
  makeSnapshot,
  openSnapshotCache,
  probeModule,
  restoreLibraries,
  shippedManifest,
  shippedMatches,
  snapshotIdentity,
  snapshotStore,
} from './snapshot.js';
import { packSiteFiles, siteFilePaths, sitePackages, unpackSiteFiles, writeSiteFiles } from './site-files.js';

const CORE_FILES = ['pyodide.mjs', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip'];
const booting = new Map();
const bootKinds = new WeakMap();
// interpreter -> a promise that rejects if it ever fails fatally (it never resolves).
const fatal = new WeakMap();

/**
 * A promise that rejects when `pyodide` suffers a fatal error, and otherwise never settles:
 * raced against a call into Python, it ends the call that the dead interpreter never would.
 */
export function whenFatal(pyodide) {
  return fatal.get(pyodide) ?? new Promise(() => {});
}

// Pyodide calls its API's on_fatal hook once, when the interpreter dies; after that every
// call throws. The next createRuntime boots a fresh interpreter instead of the dead one.
function watchFatal(pyodide, indexURL) {
  let fail;
  const died = new Promise((_, reject) => {
    fail = reject;
  });
  died.catch(() => {});
  const api = pyodide._api;
  const previous = api.on_fatal;
  api.on_fatal = (error) => {
    booting.delete(indexURL);
    fail(new AgrunError(`agrun's Python interpreter failed and was dropped: ${error?.message ?? error}`, { code: 'interpreter_failed' }));
    previous?.(error);
  };
  fatal.set(pyodide, died);
}

/**
 * A file of agrun's dist/ by its path there ('engine/worker.js'). dist/agrun.js and the
 * worker's entry are bundles (build.sh), whose `import.meta.url` is the bundle's: this module
 * is never bundled, so where it lies is what every module finds agrun's files by.
 */
export function agrunFile(path) {
  return new URL(`../${path}`, import.meta.url);
}

/** The folder of the vendored Pyodide: `indexURL` if given, else `pyodide/` beside agrun.js. */
export function resolveIndexURL(indexURL) {
  const base = indexURL ?? agrunFile('pyodide/').href;
  const absolute = new URL(base, globalThis.location?.href ?? import.meta.url).href;
  return absolute.endsWith('/') ? absolute : `${absolute}/`;
}

/**
 * Start (or join) the boot of the interpreter at `indexURL`.
 * @param {string} indexURL absolute folder URL ending in '/'
 * @param {(p: {stage: string, loaded: number, total: number}) => void} progress
 * @returns {Promise<object>} the Pyodide API object, with agrun's wheel and its dependencies loaded
 */
export function bootPyodide(indexURL, progress, { shipped = false } = {}) {
  if (!booting.has(indexURL)) {
    const boot = bootOnce(indexURL, progress, shipped);
    // A failed boot may be retried (say, after the files are put back).
    boot.catch(() => booting.delete(indexURL));
    booting.set(indexURL, boot);
  } else {
    booting.get(indexURL).then(() => {
      progress({ stage: 'pyodide', loaded: 1, total: 1 });
      progress({ stage: 'packages', loaded: 1, total: 1 });
    }, () => {});
  }
  return booting.get(indexURL);
}

async function bootOnce(indexURL, progress, shipped) {
  mark('boot');
  progress({ stage: 'pyodide', loaded: 0, total: 1 });
  // The interpreter's wasm (9.6 MB, the longest download of a boot, compiled as it arrives)
  // starts now, not when loadPyodide is called after the lock, Pyodide's modules and the
  // snapshot lookup: on a link with round trips to wait, those overlap its download
  // (docs/performance.md).
  const wasm = compileWasm(indexURL);
  const cache = openSnapshotCache();
  // The lock, Pyodide's own module, its module factory (pyodide.asm.mjs, 1.2 MB of script
  // every boot needs) and the shipped snapshot's manifest (when the page asked for it:
  // `shippedSnapshot`) load side by side.
  const factory = moduleFactory(indexURL);
  factory.catch(() => {});
  const [lock, loadPyodide, manifest] = await Promise.all([
    fetchJSON(`${indexURL}pyodide-lock.json`),
    importPyodide(indexURL),
    shipped ? shippedManifest(indexURL) : null,
  ]);
  const names = bootPackages(lock);
  const identity = await snapshotIdentity(lock, names).catch(() => null);
  const store = await snapshotStore(indexURL, identity, cache);
  // The snapshot an earlier visit kept (read from Cache Storage while the interpreter's wasm
  // is compiled), else the one the build shipped (a first visit): fetched while it starts.
  const found = await store?.find().catch(() => null);
  let saved = found?.snapshot;
  let how = 'snapshot';
  if (!saved && shippedMatches(manifest, identity)) {
    saved = loadShipped(indexURL, manifest).then((snapshot) => {
      mark('shipped-fetched');
      return snapshot;
    });
    how = 'shipped-snapshot';
  }
  if (saved) {
    try {
      const kept = how === 'snapshot' ? found.files : null;
      const { pyodide, snapshot } = await restoreBoot(loadPyodide, factory, wasm, indexURL, lock, names, saved, kept, progress);
      mark('restored');
      // Kept in Cache Storage, so later visits (offline too) need not fetch it again; with the
      // packages' files as just installed (read when it is saved).
      if (how === 'shipped-snapshot') {
        const files = siteFilePaths(pyodide);
        later(() => store?.save(snapshot, packSiteFiles(pyodide, files)));
      }
      return ready(pyodide, indexURL, how);
    } catch (error) {
      // Never worse than no snapshot: forget it and start afresh (saving a new one).
      console.warn(`agrun: the ${how === 'snapshot' ? 'saved' : 'shipped'} snapshot did not restore (${error?.message ?? error}); starting afresh`);
      if (how === 'snapshot') await store.drop().catch(() => {});
    }
  }
  const { pyodide, probe } = await freshBoot(loadPyodide, factory, wasm, indexURL, lock, names, progress, Boolean(store));
  mark('packages');
  // The packages' files as just installed, kept with the snapshot (read when it is saved).
  const files = store ? siteFilePaths(pyodide) : [];
  // What every runtime imports first; a snapshot holds it imported.
  pyodide.runPython('import agrun.adapters.pyodide.bridge');
  mark('imported');
  let snapshot = null;
  try {
    snapshot = probe && makeSnapshot(pyodide, probe);
  } catch {
    // a Pyodide whose internals are not what snapshot.js knows: boot without saving
  }
  if (probe) leaveSnapshotMode(pyodide);
  mark('snapshot-made');
  // Written in the background: this visit does not wait for the next one's gain.
  if (snapshot) later(() => store.save(snapshot, packSiteFiles(pyodide, files)));
  return ready(pyodide, indexURL, snapshot ? 'saved-snapshot' : 'fresh');
}

// Work that must not delay this visit (writing a snapshot copies its ~29 MB): a second after
// the boot, once the page is idle (a worker has no requestIdleCallback), so the runtime's
// creation and its session's opening go first.
function later(work) {
  const run = () => Promise.resolve().then(work).catch(() => {});
  setTimeout(() => {
    if (typeof globalThis.requestIdleCallback === 'function') globalThis.requestIdleCallback(run, { timeout: 2000 });
    else run();
  }, 1000);
}

// Where a boot's time goes, as User Timing marks ('agrun:boot', 'agrun:packages', ...) that a
// bench or DevTools' performance panel reads; a mark costs microseconds.
export function mark(name) {
  globalThis.performance?.mark?.(`agrun:${name}`);
}

/**
 * The boot marks of this thread (a worker's are its own), each `[name, epoch ms]`: the page
 * can read a worker's boot step by step (diagnostics().bootMarks), on the clock both share.
 */
export function bootMarks() {
  const performance = globalThis.performance;
  if (!performance?.getEntriesByType) return [];
  return performance.getEntriesByType('mark')
    .filter((m) => m.name.startsWith('agrun:'))
    .map((m) => [m.name.slice(6), performance.timeOrigin + m.startTime]);
}

function ready(pyodide, indexURL, how) {
  watchFatal(pyodide, indexURL);
  pyodide.registerJsModule('_agrun_js', PYTHON_HELPERS);
  bootKinds.set(pyodide, how);
  return pyodide;
}

// What agrun's Python adapters import from `_agrun_js`, registered once the snapshot is made
// (or restored), so the snapshot holds none of it.
const PYTHON_HELPERS = Object.freeze({
  // fetch() started from a microtask of its own, not from under the interpreter's frames:
  // with DevTools attached (Playwright drives pages that way) Chromium records the stack each
  // request starts from, and a stack through the interpreter cost ~1 ms a request
  // (adapters/pyodide/fetch.py).
  fetchSoon: (url, init) => {
    watchConnectRefusals();
    return Promise.resolve()
      .then(() => fetch(url, init))
      .catch((error) => whyFetchFailed(url, error));
  },
});

// A fetch the Content Security Policy refused (connect-src: a model server on another origin
// that the page's policy does not list) fails as a network error does ("Failed to fetch"), and
// retrying cannot help; the violation event, dispatched after the rejection and before the
// next task, says which it was. The URLs refused so far, while nothing has looked at them.
const connectRefused = new Set();
let watchingConnects = false;

function watchConnectRefusals() {
  const scope = globalThis.document ?? globalThis;
  if (watchingConnects || typeof scope.addEventListener !== 'function') return;
  watchingConnects = true;
  scope.addEventListener('securitypolicyviolation', (event) => {
    if (event.effectiveDirective === 'connect-src' && event.disposition === 'enforce') {
      if (connectRefused.size >= 64) connectRefused.clear();
      connectRefused.add(event.blockedURI);
    }
  });
}

async function whyFetchFailed(url, error) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  const asked = new URL(url, globalThis.location?.href);
  const refused = [...connectRefused].find((blocked) => blocked === asked.href || blocked === asked.origin);
  if (refused === undefined) throw error;
  connectRefused.delete(refused);
  const policy = new Error(
    `the page's Content Security Policy (connect-src) refuses ${asked.origin}: add it to connect-src`,
  );
  policy.name = 'PolicyRefusal';
  throw policy;
}

/**
 * How `pyodide` started: 'snapshot' (restored from the one an earlier visit kept),
 * 'shipped-snapshot' (restored from the one the build ships: a first visit), 'saved-snapshot'
 * (booted afresh and saved one) or 'fresh'.
 */
export function bootKind(pyodide) {
  return bootKinds.get(pyodide) ?? 'fresh';
}

async function importPyodide(indexURL) {
  return (await importModule(`${indexURL}pyodide.mjs`)).loadPyodide;
}

// import(url), or an AgrunBootError that says why not. The browser's own message ("Failed to
// fetch dynamically imported module") names neither a missing file nor a server that sends
// the module as something other than JavaScript, which a browser refuses to run as a module
// (an older server without a type for .mjs sends application/octet-stream).
async function importModule(url) {
  try {
    return await import(url);
  } catch (cause) {
    const why = await whyNotServed(url, JAVASCRIPT_MODULE);
    throw new AgrunBootError(`agrun could not load ${url}: ${why ?? cause.message}`, { cause });
  }
}

// The types a browser takes for JavaScript (the HTML standard's list, by their essence).
const JAVASCRIPT_MODULE = {
  types: /^(?:(?:text|application)\/(?:x-)?(?:java|ecma)script|text\/javascript1\.[0-5]|text\/(?:jscript|livescript))$/,
  why: 'a browser runs a module only when it is served as JavaScript: serve .mjs files as text/javascript',
};

/**
 * What every boot hands `loadPyodide` (a page's, and tools/make_snapshot.mjs's under Node):
 * the vendored folder, its lock, and agrun's wheels (`names`) fetched while it starts.
 */
export function pyodideOptions(indexURL, lock, names) {
  return { indexURL, lockFileContents: lock, packageBaseUrl: indexURL, stdout: () => {}, packages: names };
}

// Pyodide, with agrun's wheels fetched while the interpreter starts (loadPyodide's `packages`)
// and, where a snapshot can be kept, made ready to be snapshotted.
async function freshBoot(loadPyodide, factory, wasm, indexURL, lock, names, progress, snapshots) {
  const probe = snapshots ? await probeFor(factory) : null;
  const options = pyodideOptions(indexURL, lock, names);
  let pyodide;
  try {
    pyodide = await startInterpreter(
      loadPyodide,
      probe ? { ...options, _makeSnapshot: true, createPyodideModule: probe.create } : { ...options, createPyodideModule: await factory },
      wasm,
    );
  } catch (cause) {
    throw await explainFailure(cause, CORE_FILES.map((f) => `${indexURL}${f}`));
  }
  mark('interpreter');
  progress({ stage: 'pyodide', loaded: 1, total: 1 });
  await checkPackages(pyodide, indexURL, lock, names, progress);
  return { pyodide, probe };
}

// `saved` is the snapshot or a promise of it: the interpreter's module is made (its wasm
// compiled) while the promise settles, and the snapshot goes in once both are done. `kept`
// (null, or a promise of the files kept with it) puts the packages' files back instead of
// installing the wheels; kept files that do not read back leave the wheels to install.
async function restoreBoot(loadPyodide, factory, wasm, indexURL, lock, names, saved, kept, progress) {
  const probe = await probeFor(factory);
  if (!probe) throw new Error('this Pyodide cannot be restored');
  // Awaited once the module is made; a failed fetch before then is not left unhandled.
  const pending = Promise.resolve(saved);
  pending.catch(() => {});
  probe.snapshot = pending;
  const options = pyodideOptions(indexURL, lock, kept ? [] : names);
  const pyodide = await startInterpreter(
    loadPyodide,
    { ...options, _loadSnapshot: PENDING_SNAPSHOT, createPyodideModule: probe.create },
    wasm,
  );
  mark('snapshot-loaded');
  progress({ stage: 'pyodide', loaded: 1, total: 1 });
  if (kept) await putKeptFiles(pyodide, kept, lock, names);
  await checkPackages(pyodide, indexURL, lock, names, progress);
  const snapshot = await pending;
  await restoreLibraries(pyodide, probe, snapshot.meta.libraries);
  // A restored interpreter's `js` is the recording proxy it was snapshotted with.
  leaveSnapshotMode(pyodide);
  return { pyodide, snapshot };
}

async function putKeptFiles(pyodide, kept, lock, names) {
  try {
    const { bytes, meta } = await kept;
    writeSiteFiles(pyodide, unpackSiteFiles(bytes, meta, sitePackages(pyodide)), lock, names);
    mark('files-kept');
  } catch (error) {
    console.warn(`agrun: the packages' files kept with the snapshot did not read back (${error?.message ?? error}); installing the wheels`);
  }
}

// What loadPyodide is handed as the snapshot, so it makes the interpreter's module at once;
// snapshot.js's probe puts the real one in its place when the module is made.
const PENDING_SNAPSHOT = new Uint8Array(16);

async function probeFor(factory) {
  try {
    return probeModule(await factory);
  } catch {
    return null;
  }
}

// Pyodide's module factory (what loadPyodide would import itself), so failFast can wrap it.
async function moduleFactory(indexURL) {
  return (await importModule(`${indexURL}pyodide.asm.mjs`)).default;
}

// pyodide.asm.wasm compiled as it downloads: `{ url, module }`, where `module` is a promise of
// the WebAssembly.Module, or of null if it did not compile (a damaged file, an error page: the
// instantiation fetches it again and says why); null where the browser cannot compile as it
// downloads (Pyodide then fetches it itself). A browser compiles a response as it streams only
// when it is served as application/wasm; served otherwise (an older server, an object store
// without the type set), where Pyodide's own boot fails, it compiles once downloaded.
function compileWasm(indexURL) {
  const wasm = globalThis.WebAssembly;
  if (typeof wasm?.compileStreaming !== 'function' || typeof fetch !== 'function') return null;
  const url = `${indexURL}pyodide.asm.wasm`;
  const module = fetch(url).then((response) => {
    const type = response.headers.get('Content-Type') ?? '';
    if (!response.ok || mimeEssence(type) === 'application/wasm') return wasm.compileStreaming(response);
    console.warn(
      `agrun: ${url} is served as ${type ? `'${type}'` : 'no type'}, not application/wasm, so it compiles only once downloaded: serve .wasm files as application/wasm for a quicker boot`,
    );
    return response.arrayBuffer().then((bytes) => wasm.compile(bytes));
  });
  return { url, module: module.catch(() => null) };
}

// 'application/wasm; charset=x' -> 'application/wasm', as the browser compares it.
function mimeEssence(type) {
  return type.split(';')[0].trim().toLowerCase();
}

// loadPyodide(options), whose module is made by `options.createPyodideModule` wrapped by
// failFast, instantiated from `wasm` (compileWasm's, or null). Pyodide fetches
// pyodide.asm.wasm itself before it makes its module; that one fetch is answered with an
// empty stand-in, which is never read, so a boot downloads the file once.
async function startInterpreter(loadPyodide, options, wasm) {
  const release = wasm ? holdFetch(wasm.url) : () => {};
  const create = options.createPyodideModule;
  const made = (settings) => {
    release();
    return create(settings);
  };
  try {
    return await loadPyodide({ ...options, createPyodideModule: failFast(made, options.indexURL, wasm) });
  } finally {
    release();
  }
}

// Until the returned function is called, a fetch of `url` (Pyodide asks with a URL object) is
// answered with an empty response and no request; every other fetch goes through.
function holdFetch(url) {
  const real = globalThis.fetch;
  let holding = true;
  const held = function fetch(input, init) {
    const asked = input instanceof URL ? input.href : input;
    return holding && asked === url ? Promise.resolve(new Response(new Uint8Array(0))) : real.call(this, input, init);
  };
  globalThis.fetch = held;
  // A page that wrapped fetch meanwhile keeps its wrapper, around one that now holds nothing.
  return () => {
    holding = false;
    if (globalThis.fetch === held) globalThis.fetch = real;
  };
}

// Pyodide's instantiateWasm catches a failed compile of pyodide.asm.wasm (a truncated or
// garbled file, an error page served in its place), only logs it ("wasm instantiation
// failed!") and never calls back, so loadPyodide would wait forever. Wrapped here, the
// compile's failure rejects the boot with an AgrunBootError instead. Its instantiation takes
// `wasm` (compileWasm's), the module compiled since the boot started, when there is one.
function failFast(createPyodideModule, indexURL, wasm) {
  return (settings) => {
    const instantiate = settings.instantiateWasm;
    if (typeof instantiate !== 'function') return createPyodideModule(settings);
    let fail;
    const failed = new Promise((_, reject) => {
      fail = reject;
    });
    settings.instantiateWasm = (imports, receive) => {
      const unwatch = watchInstantiate(imports, wasm, (cause) => {
        const why = String(cause?.message ?? cause);
        fail(new AgrunBootError(`agrun could not compile ${indexURL}pyodide.asm.wasm: ${why}${CSP.test(why) ? CSP_FIX : ''}`, { cause }));
      });
      return instantiate(imports, (...received) => {
        unwatch();
        receive(...received);
      });
    };
    return Promise.race([createPyodideModule(settings), failed]);
  };
}

// A page whose Content Security Policy does not allow WebAssembly: the browser's message names
// the directive, not what to add to it.
const CSP = /Content Security Policy/i;
const CSP_FIX = " (allow WebAssembly with 'wasm-unsafe-eval' in the policy's script-src)";

// Pyodide's instantiate calls WebAssembly.instantiateStreaming (or instantiate) with the
// imports object Emscripten handed it and keeps the outcome to itself: that one call,
// recognised by its imports object, instantiates the module `compiled` (compileWasm's, or
// null: Pyodide's own fetch) holds, or compiles its file afresh where that did not compile,
// and is watched for a rejection; any other call passes through.
function watchInstantiate(imports, compiled, onFailure) {
  const wasm = globalThis.WebAssembly;
  const originals = { instantiateStreaming: wasm.instantiateStreaming, instantiate: wasm.instantiate };
  const unwatch = () => Object.assign(wasm, originals);
  for (const [name, original] of Object.entries(originals)) {
    wasm[name] = function watched(source, given, ...rest) {
      if (given !== imports) return original.call(this, source, given, ...rest);
      unwatch();
      const outcome = compiled
        ? compiled.module.then((module) =>
            module
              ? originals.instantiate.call(wasm, module, imports).then((instance) => ({ instance, module }))
              : fetchedAgain(compiled.url).then((bytes) => originals.instantiate.call(wasm, bytes, imports)),
          )
        : original.call(this, source, given, ...rest);
      return outcome.catch((error) => {
        onFailure(error);
        throw error;
      });
    };
  }
  return unwatch;
}

// The wasm's bytes fetched again to say why it did not compile (from the bytes, whatever type
// it is served as), or that it could not be fetched.
async function fetchedAgain(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
  return response.arrayBuffer();
}

// loadPyodide loaded the packages (its `packages` option) but reports a wheel that failed only
// on the console: check every one, and ask again for those missing, to say why.
async function checkPackages(pyodide, indexURL, lock, names, progress) {
  const missing = missingPackages(pyodide, names);
  if (missing.length) {
    const errors = [];
    await pyodide.loadPackage(missing, { messageCallback: () => {}, errorCallback: (message) => errors.push(message) });
    const still = missingPackages(pyodide, missing);
    if (still.length) {
      const urls = still.map((name) => `${indexURL}${lock.packages[name].file_name}`);
      throw await explainFailure(new Error(errors.join('; ') || 'not loaded'), urls, still);
    }
  }
  progress({ stage: 'packages', loaded: names.length, total: names.length });
}

function missingPackages(pyodide, names) {
  const have = new Set(Object.keys(pyodide.loadedPackages).map(canonical));
  return names.filter((name) => !have.has(canonical(name)));
}

// What agrun needs: its own wheel and, through the lock's `depends`, every wheel it imports.
// The lock also lists optional wheels (micropip, pyodide-http) that load only when a page
// asks for them (loadOptionalPackages), so they cost a page that does not nothing at boot.
export function bootPackages(lock) {
  const wanted = new Set();
  const visit = (name) => {
    if (wanted.has(name)) return;
    const entry = lock.packages[name];
    if (!entry) throw new AgrunBootError(`agrun's pyodide-lock.json has no package '${name}': rebuild dist/ with ./build.sh`);
    wanted.add(name);
    (entry.depends ?? []).forEach(visit);
  };
  visit('agrun');
  return [...wanted];
}

/**
 * Load wheels of the lock that boot left out (say, 'micropip'), once per interpreter; Pyodide
 * checks each against the lock's sha256.
 * @throws {AgrunError} code 'package_load_failed', naming the wheels that did not load
 */
export async function loadOptionalPackages(pyodide, names) {
  const errors = [];
  await pyodide.loadPackage(names, { messageCallback: () => {}, errorCallback: (message) => errors.push(message) });
  const have = new Set(Object.keys(pyodide.loadedPackages).map(canonical));
  const missing = names.filter((name) => !have.has(canonical(name)));
  if (missing.length) {
    throw new AgrunError(`agrun could not load ${missing.join(', ')}: ${errors.join('; ') || 'not loaded'}`, { code: 'package_load_failed' });
  }
}

function canonical(name) {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

async function fetchJSON(url) {
  let response;
  try {
    response = await fetch(url);
  } catch (cause) {
    throw new AgrunBootError(`agrun could not load ${url}: ${cause.message}`, { cause });
  }
  if (!response.ok) {
    throw new AgrunBootError(`agrun could not load ${url}: HTTP ${response.status}${damaged(response) ? ` (${response.statusText})` : ''}`);
  }
  return response.json();
}

// Pyodide's own errors rarely say which file was missing; find it, so the page's author
// can tell which vendored file is not being served.
async function explainFailure(cause, urls, packages = []) {
  for (const url of urls) {
    const why = await whyNotServed(url);
    if (why) return new AgrunBootError(`agrun could not load ${url}: ${why}`, { cause });
  }
  if (cause instanceof AgrunBootError) return cause;
  const what = packages.length ? `the packages ${packages.join(', ')}` : 'Pyodide';
  return new AgrunBootError(`agrun could not start ${what}: ${cause.message}`, { cause });
}

// Why `url` is not served as a boot needs it, asked with a HEAD request: its HTTP status, a
// network error, or a type that `expected` ({ types, why }) does not take; null if none.
async function whyNotServed(url, expected = null) {
  return fetch(url, { method: 'HEAD' }).then(
    (response) => {
      if (!response.ok) return `HTTP ${response.status}${damaged(response) ? ` (${response.statusText})` : ''}`;
      const type = response.headers.get('Content-Type') ?? '';
      if (expected && !expected.types.test(mimeEssence(type))) {
        return `it is served as ${type ? `'${type}'` : 'no type'}, and ${expected.why}`;
      }
      return null;
    },
    () => 'network error',
  );
}

// agrun's service worker (sw.js) marks what it answers for a cached file it could not serve.
function damaged(response) {
  return response.headers.get('X-Agrun-Precache') === 'damaged';
}
