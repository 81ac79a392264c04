// Memory snapshots of agrun's interpreter (docs/performance.md): the first visit saves
// Pyodide's memory, with agrun and its packages imported, in the origin's Cache Storage; a later
// visit restores it instead of starting Python and importing everything again.
//
// Pyodide's snapshot (loadPyodide's _makeSnapshot and _loadSnapshot, experimental) holds the
// interpreter's linear memory and nothing else. pydantic-core's extension is a wasm module of
// its own, whose code and function-table slots live outside that memory: restored alone, the
// first call into it dies with "table index is out of bounds". So this module notes where each
// extension's data block and table slots were placed when the snapshot was made, loads the
// extension again at those same places after a restore, and puts back its data block (which
// the reload resets to its initial image). Any check that fails throws, and boot.js starts
// afresh instead.
//
// A snapshot is kept and shipped without the memory's long runs of zeros (a third of it: the
// heap's unused end, and a large block freed during the import): a warm visit reads ~29 MB
// from Cache Storage instead of ~45, and that read is what a restore waits on.

const FORMAT = 2;
// Zero runs are cut out in whole aligned blocks of this size (the memory grows in 64 KiB
// pages): a handful of runs holds nearly all the zeros.
const ZERO_BLOCK = 1 << 16;
const CACHE_NAME = 'agrun-snapshots';
const META_HEADER = 'X-Agrun-Snapshot';

// A wasm function that calls the JS function it imports as `e.f` with (i32, i32) -> i32, so a
// JS wrapper can stand in for an export that Emscripten puts in the function table.
const TRAMPOLINE = Uint8Array.of(
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, // type 0: (i32, i32) -> i32
  0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00, // import e.f: type 0
  0x03, 0x02, 0x01, 0x00, // function 1: type 0
  0x07, 0x05, 0x01, 0x01, 0x63, 0x00, 0x01, // export "c": function 1
  0x0a, 0x0a, 0x01, 0x08, 0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x00, 0x0b, // f(a, b) = e.f(a, b)
);

/**
 * The identity of a build's interpreter as a snapshot sees it: the Pyodide build, and the lock's
 * packages that boot loads with their sha256 (hex of a SHA-256). A snapshot is kept and shipped
 * under it, so a new build never restores an old snapshot. Null where crypto.subtle is missing
 * (it exists in secure contexts only).
 */
export async function snapshotIdentity(lock, names) {
  if (!globalThis.crypto?.subtle) return null;
  const identity = JSON.stringify({
    format: FORMAT,
    pyodide: lock.info,
    packages: names.map((name) => [name, lock.packages[name].sha256]),
  });
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(identity)));
}

function currentScope() {
  return typeof globalThis.WorkerGlobalScope === 'function' && globalThis instanceof globalThis.WorkerGlobalScope ? 'worker' : 'page';
}

/**
 * The Cache Storage cache snapshots are kept in, or null where there is none: opened by a boot
 * as it starts, since a first open in a browser profile takes up to ~100 ms, which then
 * overlaps the lock's fetch instead of following it.
 * @returns {Promise<Cache | null>}
 */
export function openSnapshotCache() {
  try {
    if (!globalThis.caches) return Promise.resolve(null);
    return caches.open(CACHE_NAME).catch(() => null);
  } catch {
    // a sandboxed frame's `caches` throws when read
    return Promise.resolve(null);
  }
}

/**
 * Where this boot's snapshot is kept: an entry of Cache Storage named for the Pyodide folder,
 * the build's identity (snapshotIdentity) and whether it runs in a page or a worker. Null
 * where none can be kept (Cache Storage exists in secure contexts only; a sandboxed frame may
 * refuse it). `opened`: the cache, as openSnapshotCache gives it.
 */
export async function snapshotStore(indexURL, identity, opened = openSnapshotCache()) {
  try {
    const cache = await opened;
    if (!cache || !identity) return null;
    const scope = currentScope();
    const prefix = `${indexURL}agrun-snapshot/${scope}/`;
    const url = `${prefix}${identity}`;
    return {
      /**
       * Null if no snapshot is kept, else `{ snapshot, files }`: a promise of it (`{ bytes,
       * meta }`), read while the caller goes on, that rejects for an entry that is not one;
       * and null, or a promise of the site-packages files kept with it (`{ bytes, meta }`,
       * site-files.js's section).
       */
      async find() {
        const response = await cache.match(url);
        if (!response) return null;
        const meta = JSON.parse(response.headers.get(META_HEADER) ?? 'null');
        const body = response.arrayBuffer();
        // The snapshot is the entry's first meta.length bytes, the kept files the rest.
        const length = Number.isInteger(meta?.length) ? meta.length : -1;
        const snapshot = body.then((buffer) => checked(new Uint8Array(buffer, 0, Math.min(Math.max(length, 0), buffer.byteLength)), meta, buffer.byteLength - length));
        const files = meta?.files ? body.then((buffer) => ({ bytes: new Uint8Array(buffer, length), meta: meta.files })) : null;
        snapshot.catch(() => {});
        files?.catch(() => {});
        return { snapshot, files };
      },
      /**
       * Keep `snapshot`, and the site-packages files `files` (null, or packSiteFiles'), in one
       * entry (replacing this folder's older ones); resolves when written.
       */
      async save(snapshot, files = null) {
        const { bytes, meta } = withoutZeroRuns(snapshot);
        const kept = files ? { ...meta, files: files.meta } : meta;
        const headers = { 'Content-Type': 'application/octet-stream', [META_HEADER]: JSON.stringify(kept) };
        await cache.put(url, new Response(files ? new Blob([bytes, files.bytes]) : bytes, { headers }));
        for (const request of await cache.keys()) {
          if (request.url.startsWith(prefix) && request.url !== url) await cache.delete(request);
        }
      },
      /** Forget the saved snapshot (it failed to restore). */
      async drop() {
        await cache.delete(url);
      },
    };
  } catch {
    return null;
  }
}

// `extra`: the bytes a kept entry holds after the snapshot (its files), never fewer than none.
function checked(bytes, meta, extra = 0) {
  if (meta?.format !== FORMAT || bytes.length !== meta.length || extra < 0 || (extra > 0 && !meta.files) || !Array.isArray(meta.libraries) || !imageFits(bytes, meta)) {
    throw new Error(`the snapshot is not one agrun wrote (${bytes.length} bytes)`);
  }
  return { bytes, meta };
}

// Where Pyodide's snapshot puts the memory image: after its header (the JS objects Python
// holds, as JSON), whose length the header's second word gives.
function imageStart(bytes) {
  return new Uint32Array(bytes.buffer, bytes.byteOffset, 2)[1];
}

// Whether the memory image and its zero runs (`meta.holes`, each [offset, length] in the
// memory, in order) add up to the memory the snapshot was made of.
function imageFits(bytes, meta) {
  const { memory, holes } = meta;
  if (!Number.isInteger(memory) || !Array.isArray(holes) || bytes.length < 8 || bytes.byteOffset % 4) return false;
  const start = imageStart(bytes);
  let end = 0;
  let cut = 0;
  for (const hole of holes) {
    const [at, size] = Array.isArray(hole) ? hole : [];
    if (!Number.isInteger(at) || !Number.isInteger(size) || at < end || size <= 0) return false;
    end = at + size;
    cut += size;
  }
  return start % 16 === 0 && start <= bytes.length && end <= memory && bytes.length - start + cut === memory;
}

/**
 * `snapshot` (makeSnapshot's) without its memory's runs of zeros: each whole zero block of
 * ZERO_BLOCK bytes is cut out and noted in `meta.holes` ([offset, length] in the memory), and
 * putImage writes zeros there again. A snapshot already without them is returned as it is.
 */
export function withoutZeroRuns(snapshot) {
  const { bytes, meta } = snapshot;
  if (meta.holes.length) return snapshot;
  const start = imageStart(bytes);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + start, meta.memory >>> 2);
  const holes = [];
  const per = ZERO_BLOCK >>> 2;
  for (let block = 0; (block + 1) * per <= words.length; block++) {
    let i = block * per;
    const end = i + per;
    while (i < end && words[i] === 0) i++;
    if (i < end) continue;
    const at = block * ZERO_BLOCK;
    const last = holes.at(-1);
    if (last && last[0] + last[1] === at) last[1] += ZERO_BLOCK;
    else holes.push([at, ZERO_BLOCK]);
  }
  if (!holes.length) return snapshot;
  const cut = holes.reduce((sum, [, size]) => sum + size, 0);
  const kept = new Uint8Array(bytes.length - cut);
  kept.set(bytes.subarray(0, start));
  for (const [at, size, from] of keptParts(holes, meta.memory)) {
    kept.set(bytes.subarray(start + at, start + at + size), start + from);
  }
  return { bytes: kept, meta: { ...meta, length: kept.length, holes } };
}

// The parts of a memory that its snapshot keeps, in order, between its zero runs: each
// [at, size, from], `at` its place in the memory and `from` in the kept image.
function keptParts(holes, memory) {
  const parts = [];
  let at = 0;
  let from = 0;
  for (const [hole, size] of [...holes, [memory, 0]]) {
    parts.push([at, hole - at, from]);
    from += hole - at;
    at = hole + size;
  }
  return parts;
}

/**
 * Write the memory image of a snapshot (`bytes`, `meta`: checked's) into `heap` (the
 * interpreter's memory, at least `meta.memory` long): what it kept, and zeros in its holes,
 * whatever the memory held there before.
 */
export function putImage(heap, bytes, meta) {
  const start = imageStart(bytes);
  for (const [at, size, from] of keptParts(meta.holes, meta.memory)) {
    heap.set(bytes.subarray(start + from, start + from + size), at);
  }
  for (const [at, size] of meta.holes) heap.fill(0, at, at + size);
}

/** The name of the manifest of the snapshot a build ships beside its Pyodide (tools/make_snapshot.mjs). */
export const SHIPPED_MANIFEST = 'agrun-snapshot.json';

/**
 * The manifest of the snapshot shipped in `indexURL` (null if there is none or it cannot be
 * read): small, fetched beside the lock, so the snapshot itself is fetched only when it is
 * this build's.
 */
export async function shippedManifest(indexURL) {
  try {
    const response = await fetch(`${indexURL}${SHIPPED_MANIFEST}`);
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/** Whether `manifest` (shippedManifest) names a snapshot of this build's `identity`. */
export function shippedMatches(manifest, identity) {
  return Boolean(identity) && manifest?.identity === identity && manifest.format === FORMAT && typeof manifest.file === 'string';
}

/**
 * The snapshot the build made (under Node, tools/make_snapshot.mjs) that `manifest` names,
 * `{ bytes, meta }`. It is the memory image as it is (a server compresses it as it does
 * pyodide.asm.wasm: the browser then inflates it off the page's thread while it arrives).
 * Throws for a file that is not the one the manifest describes (its length and sha256).
 */
export async function loadShipped(indexURL, manifest) {
  const response = await fetch(`${indexURL}${manifest.file}`);
  if (!response.ok) throw new Error(`${manifest.file}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  // A spoiled or half-finished download is refused before it is restored.
  const digest = bytes.length === manifest.length ? hex(await crypto.subtle.digest('SHA-256', bytes)) : null;
  if (digest !== manifest.sha256) throw new Error(`${manifest.file} is not the file its manifest describes`);
  const { format, length, memory, holes, libraries } = manifest;
  return checked(bytes, { format, length, memory, holes, libraries });
}

/**
 * Pyodide's `createPyodideModule` (the default export of pyodide.asm.mjs), wrapped so that the
 * places extensions are loaded at are known. Emscripten asks calloc for an extension's data
 * block from JavaScript, and for nothing else: the wrapper stands in for the calloc that JS
 * calls (extensions still link the real one), records each block while a snapshot can be made,
 * and hands out the recorded block when an extension is loaded again after a restore.
 * @returns {{ create: Function, module: object | null, blocks: object[] }}
 */
export function probeModule(createPyodideModule) {
  // snapshot: a promise of the snapshot (`{ bytes, meta }`), which replaces the placeholder
  // loadPyodide is handed (boot.js), so the module is made while the image is still read.
  const probe = { module: null, table: null, blocks: [], replay: null, snapshot: null };
  const calloc = (real, count, size) => {
    const want = probe.replay;
    if (want) {
      probe.replay = null;
      if (count === want.count && size === want.size && probe.table.length === want.table) {
        want.used = true;
        return want.ptr;
      }
      throw new Error(`an extension asked for ${count}x${size} bytes at table slot ${probe.table.length}, not what its snapshot recorded`);
    }
    const ptr = real(count, size) >>> 0;
    probe.blocks.push({ count, size, ptr, table: probe.table.length });
    return ptr;
  };
  probe.create = async (settings) => {
    const instantiate = settings.instantiateWasm;
    if (typeof instantiate !== 'function') throw new Error('this Pyodide build instantiates its module itself');
    settings.instantiateWasm = (imports, receive) =>
      instantiate(imports, (instance, wasmModule) => {
        const real = instance.exports.calloc;
        probe.table = instance.exports.__indirect_function_table;
        const wrapped = new WebAssembly.Instance(new WebAssembly.Module(TRAMPOLINE), {
          e: { f: (count, size) => calloc(real, count >>> 0, size >>> 0) },
        }).exports.c;
        receive({ exports: { ...instance.exports, calloc: wrapped } }, wasmModule);
        imports.env.calloc = real;
      });
    const module = await createPyodideModule(settings);
    probe.module = module;
    const image = probe.snapshot && (await probe.snapshot);
    // Pyodide sizes the memory from the snapshot, but this build's memory is the module's own
    // and starts small: grow it to the snapshot's size before the snapshot is copied in.
    // Pyodide's restore is handed the header alone (it reads the JS objects' state from it);
    // putImage writes the memory, zero runs and all.
    const restore = module.API.restoreSnapshot;
    module.API.restoreSnapshot = () => {
      if (!image) throw new Error('no snapshot to restore');
      const { bytes, meta } = image;
      if (meta.memory > module.HEAP8.length) module.growMemory(meta.memory);
      const state = restore(bytes.subarray(0, imageStart(bytes)));
      putImage(module.HEAP8, bytes, meta);
      return state;
    };
    return module;
  };
  return probe;
}

/**
 * Snapshot `pyodide` as it is now (agrun imported, no runtime made): its memory, and where each
 * extension was loaded. Null if this interpreter cannot be snapshotted (an extension whose
 * placement is not known, or a JS object Python holds that Pyodide cannot name).
 */
export function makeSnapshot(pyodide, probe) {
  const module = probe.module;
  const libraries = [];
  for (const [name, dso] of Object.entries(module.LDSO.loadedLibsByName)) {
    if (name === '__main__') continue;
    const handle = Object.entries(module.LDSO.loadedLibsByHandle).find(([, d]) => d === dso)?.[0];
    if (handle === undefined) return null;
    libraries.push({ name, handle: Number(handle) });
  }
  // Emscripten places libraries in the order it loads them: one data block each.
  if (libraries.length !== probe.blocks.length) return null;
  libraries.forEach((library, i) => Object.assign(library, probe.blocks[i]));
  // Pyodide checks its package registry is empty (what a fresh interpreter has): the
  // restore loads the packages again, which fills it.
  const loaded = pyodide.loadedPackages;
  const kept = { ...loaded };
  let bytes = null;
  try {
    for (const name of Object.keys(kept)) delete loaded[name];
    // No garbage collection until the libraries are back: a finalizer calling into one
    // before then would find no code.
    pyodide.runPython('import gc\ngc.collect()\ngc.disable()');
    bytes = pyodide.makeMemorySnapshot();
  } catch {
    // a JS object Python holds that Pyodide cannot name: no snapshot
  } finally {
    Object.assign(loaded, kept);
    pyodide.runPython('import gc\ngc.enable()');
  }
  if (!bytes) return null;
  const memory = bytes.length - imageStart(bytes);
  return { bytes, meta: { format: FORMAT, length: bytes.length, memory, holes: [], libraries } };
}

/**
 * Python's `js` module the real globals again, once the snapshot is taken. While a snapshot can
 * be made (loadPyodide's `_makeSnapshot`), Python sees the JS globals through a proxy that
 * records how each object was reached, so the snapshot can name them; that proxy passes itself
 * as `this` to native getters, which then throw "Illegal invocation" (pyodide-http's
 * XMLHttpRequest, for one), and every call through it costs (a turn start's read took 2.0 ms
 * through it against 1.3). A restored interpreter's `js` is that proxy too. Modules imported
 * from now on, and code that imports from `js` when it runs, see the real globals; agrun's
 * adapters never hold a JS global at module level for this reason.
 */
export function leaveSnapshotMode(pyodide) {
  pyodide.registerJsModule('js', globalThis);
  pyodide.runPython("import sys\nsys.modules.pop('js', None)");
}

/**
 * After a restore (and its packages' files are back): load each extension again where the
 * snapshot had it, give back its data block, and let Python collect garbage again.
 */
export async function restoreLibraries(pyodide, probe, libraries) {
  const module = probe.module;
  for (const library of libraries) {
    const { name, handle, ptr, count, size } = library;
    // Emscripten's dlopen wrote the library's name and flags into its handle: a snapshot of
    // another build, or a stray entry, names another file.
    if (module.UTF8ToString(handle + 36) !== name) throw new Error(`the snapshot's handle for ${name} names another library`);
    const flags = module.HEAP32[(handle + 4) >>> 2];
    const global = Boolean(flags & 256);
    // The whole block (calloc's count x size bytes): its statics include the extension's
    // type objects (pydantic-core's ValidationError), which must stay the ones Python holds.
    const data = module.HEAP8.slice(ptr, ptr + count * size);
    const want = { ...library };
    probe.replay = want;
    try {
      await module.loadDynamicLibrary(name, { global, nodelete: Boolean(flags & 4096), loadAsync: true }, global ? null : {}, handle);
    } finally {
      probe.replay = null;
    }
    if (!want.used) throw new Error(`${name} was loaded without its recorded block`);
    module.HEAP8.set(data, ptr);
  }
  resetTimeZone(module);
  pyodide.runPython(AFTER_RESTORE.replace('HOST', JSON.stringify(JSON.stringify(host()))));
}

// The C library read the time zone once, where the snapshot was made: the restored memory
// holds that zone's names (a local time's tm_zone). Emscripten's _tzset_js writes this
// page's into the same places again.
function resetTimeZone(module) {
  const exports = module.LDSO.loadedLibsByName.__main__?.exports ?? {};
  const address = (symbol) => (typeof symbol === 'object' && symbol !== null ? symbol.value : symbol);
  const [timezone, daylight, tzname] = [exports.timezone, exports.daylight, exports.tzname].map(address);
  if (typeof exports._tzset_js !== 'function' || ![timezone, daylight, tzname].every(Number.isInteger)) return;
  exports._tzset_js(timezone, daylight, module.HEAPU32[tzname >>> 2], module.HEAPU32[(tzname >>> 2) + 1]);
}

// What the interpreter read from its host when it started, as this page would give it: a
// snapshot may have been made elsewhere (the build's, under Node) or in another time zone.
// The language is Emscripten's LANG (its getEnvStrings).
function host() {
  const language = (typeof navigator === 'object' && navigator.language) || 'C';
  const january = new Date(new Date().getFullYear(), 0, 1).getTimezoneOffset();
  const july = new Date(new Date().getFullYear(), 6, 1).getTimezoneOffset();
  return { lang: `${language.replace('-', '_')}.UTF-8`, runtime: globalThis.navigator?.userAgent ?? 'UNKNOWN', january, july };
}

// The restored interpreter goes on: garbage collection back on, `random` reseeded (its state
// came from the visit that made the snapshot), the host's language, user agent and time zone
// put back (CPython on Emscripten has no time.tzset(): time.timezone and the rest are worked
// out as CPython does at start, from January's and July's local times), and one call into
// pydantic-core's extension.
const AFTER_RESTORE = `
import gc, json, locale, os, sys, time
gc.enable()
if "random" in sys.modules:
    sys.modules["random"].seed()
# A restore reads nothing of the standard library: one missing (a file the server did not
# send) would fail only the first import that needs it.
for entry in sys.path:
    if entry.endswith(".zip") and not os.path.exists(entry):
        raise RuntimeError(f"the standard library ({entry}) did not load")
host = json.loads(HOST)
sys.path[:] = list(dict.fromkeys(sys.path))  # Pyodide's restore puts '' in front once more
os.environ["LANG"] = host["lang"]
try:
    locale.setlocale(locale.LC_CTYPE, "")
except locale.Error:
    pass
info = getattr(sys, "_emscripten_info", None)
if info is not None and info.runtime != host["runtime"]:
    try:
        sys._emscripten_info = type(info)((info.emscripten_version, host["runtime"], *info[2:]))
    except TypeError:
        pass
january, july = host["january"] * 60, host["july"] * 60
year = time.localtime().tm_year
names = (time.localtime(time.mktime((year, 1, 1, 12, 0, 0, 0, 0, -1))).tm_zone,
         time.localtime(time.mktime((year, 7, 1, 12, 0, 0, 0, 0, -1))).tm_zone)
if january < july:  # the southern hemisphere: July is standard time
    time.timezone, time.altzone, time.tzname = july, january, names[::-1]
else:
    time.timezone, time.altzone, time.tzname = january, july, names
time.daylight = int(january != july)
del host, info, january, july, year, names
import pydantic_core
if pydantic_core.SchemaValidator({"type": "int"}).validate_python("7") != 7:
    raise RuntimeError("pydantic-core does not answer after the restore")
`;

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
