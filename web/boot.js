// Boots Pyodide from the vendored files beside this module and installs agrun's wheels.
// One interpreter per page and indexURL: every createRuntime() shares it.
import { AgrunBootError, AgrunError } from './errors.js';

const CORE_FILES = ['pyodide.mjs', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip'];
const booting = new Map();
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

/** The folder of the vendored Pyodide: `indexURL` if given, else `pyodide/` beside this module. */
export function resolveIndexURL(indexURL) {
  const base = indexURL ?? new URL('./pyodide/', import.meta.url).href;
  const absolute = new URL(base, globalThis.location?.href ?? import.meta.url).href;
  return absolute.endsWith('/') ? absolute : `${absolute}/`;
}

/**
 * Start (or join) the boot of the interpreter at `indexURL`.
 * @param {string} indexURL absolute folder URL ending in '/'
 * @param {(p: {stage: string, loaded: number, total: number}) => void} progress
 * @returns {Promise<object>} the Pyodide API object, with agrun's wheel and its dependencies loaded
 */
export function bootPyodide(indexURL, progress) {
  if (!booting.has(indexURL)) {
    const boot = bootOnce(indexURL, progress);
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

async function bootOnce(indexURL, progress) {
  progress({ stage: 'pyodide', loaded: 0, total: 1 });
  const lockURL = `${indexURL}pyodide-lock.json`;
  const lock = await fetchJSON(lockURL);
  const moduleURL = `${indexURL}pyodide.mjs`;
  let loadPyodide;
  try {
    ({ loadPyodide } = await import(moduleURL));
  } catch (cause) {
    throw new AgrunBootError(`agrun could not load ${moduleURL}: ${cause.message}`, { cause });
  }
  let pyodide;
  try {
    pyodide = await loadPyodide({
      indexURL,
      lockFileContents: lock,
      packageBaseUrl: indexURL,
      stdout: () => {},
    });
  } catch (cause) {
    throw await explainFailure(cause, CORE_FILES.map((f) => `${indexURL}${f}`));
  }
  progress({ stage: 'pyodide', loaded: 1, total: 1 });

  const names = bootPackages(lock);
  let loaded = 0;
  const errors = [];
  progress({ stage: 'packages', loaded, total: names.length });
  await pyodide.loadPackage(names, {
    messageCallback: (message) => {
      if (message.startsWith('Loaded ')) {
        loaded = Math.min(names.length, loaded + message.slice(7).split(',').length);
        progress({ stage: 'packages', loaded, total: names.length });
      }
    },
    errorCallback: (message) => errors.push(message),
  });
  // Pyodide reports a wheel that failed to load but does not throw: check every one.
  const have = new Set(Object.keys(pyodide.loadedPackages).map(canonical));
  const missing = names.filter((name) => !have.has(canonical(name)));
  if (missing.length) {
    const urls = missing.map((name) => `${indexURL}${lock.packages[name].file_name}`);
    throw await explainFailure(new Error(errors.join('; ') || 'not loaded'), urls, missing);
  }
  progress({ stage: 'packages', loaded: names.length, total: names.length });
  watchFatal(pyodide, indexURL);
  return pyodide;
}

// What agrun needs: its own wheel and, through the lock's `depends`, every wheel it imports.
// The lock also lists optional wheels (micropip, pyodide-http) that load only when a page
// asks for them (loadOptionalPackages), so they cost a page that does not nothing at boot.
function bootPackages(lock) {
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
    throw new AgrunBootError(`agrun could not load ${url}: HTTP ${response.status}`);
  }
  return response.json();
}

// Pyodide's own errors rarely say which file was missing; find it, so the page's author
// can tell which vendored file is not being served.
async function explainFailure(cause, urls, packages = []) {
  for (const url of urls) {
    const status = await fetch(url, { method: 'HEAD' }).then((r) => (r.ok ? 0 : r.status), () => -1);
    if (status !== 0) {
      const why = status === -1 ? 'network error' : `HTTP ${status}`;
      return new AgrunBootError(`agrun could not load ${url}: ${why}`, { cause });
    }
  }
  const what = packages.length ? `the packages ${packages.join(', ')}` : 'Pyodide';
  return new AgrunBootError(`agrun could not start ${what}: ${cause.message}`, { cause });
}
