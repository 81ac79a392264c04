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

const FORMAT = 1;
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
 * Where this boot's snapshot is kept: an entry of Cache Storage named for the Pyodide folder,
 * the lock's packages (with their sha256) and whether it runs in a page or a worker, so a new
 * build never finds an old snapshot. Null where none can be kept (Cache Storage and
 * crypto.subtle exist in secure contexts only; a sandboxed frame may refuse them).
 */
export async function snapshotStore(indexURL, lock, names) {
  try {
    if (!globalThis.caches || !globalThis.crypto?.subtle) return null;
    const scope = typeof globalThis.WorkerGlobalScope === 'function' && globalThis instanceof globalThis.WorkerGlobalScope ? 'worker' : 'page';
    const identity = JSON.stringify({
      format: FORMAT,
      scope,
      pyodide: lock.info,
      packages: names.map((name) => [name, lock.packages[name].sha256]),
    });
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(identity));
    const prefix = `${indexURL}agrun-snapshot/${scope}/`;
    const url = `${prefix}${hex(digest)}`;
    const cache = await caches.open(CACHE_NAME);
    return {
      /** The saved snapshot, `{ bytes, meta }`, or null; throws for an entry that is not one. */
      async load() {
        const response = await cache.match(url);
        if (!response) return null;
        const meta = JSON.parse(response.headers.get(META_HEADER) ?? 'null');
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (meta?.format !== FORMAT || bytes.length !== meta.length || !Array.isArray(meta.libraries)) {
          throw new Error(`the saved snapshot is not one agrun wrote (${bytes.length} bytes)`);
        }
        return { bytes, meta };
      },
      /** Keep `snapshot` (replacing this folder's older ones); resolves when written. */
      async save({ bytes, meta }) {
        const headers = { 'Content-Type': 'application/octet-stream', [META_HEADER]: JSON.stringify(meta) };
        await cache.put(url, new Response(bytes, { headers }));
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

/**
 * Pyodide's `createPyodideModule` (the default export of pyodide.asm.mjs), wrapped so that the
 * places extensions are loaded at are known. Emscripten asks calloc for an extension's data
 * block from JavaScript, and for nothing else: the wrapper stands in for the calloc that JS
 * calls (extensions still link the real one), records each block while a snapshot can be made,
 * and hands out the recorded block when an extension is loaded again after a restore.
 * @returns {{ create: Function, module: object | null, blocks: object[] }}
 */
export function probeModule(createPyodideModule) {
  const probe = { module: null, table: null, blocks: [], replay: null };
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
    // Pyodide sizes the memory from the snapshot, but this build's memory is the module's own
    // and starts small: grow it to the snapshot's size before the snapshot is copied in.
    const restore = module.API.restoreSnapshot;
    module.API.restoreSnapshot = (bytes) => {
      const header = new Uint32Array(bytes.buffer, bytes.byteOffset, 2);
      const heap = bytes.length - header[1];
      if (heap > module.HEAP8.length) module.growMemory(heap);
      return restore(bytes);
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
  return bytes && { bytes, meta: { format: FORMAT, length: bytes.length, libraries } };
}

/**
 * Python's `js` module the real globals again, once the snapshot is taken. While a snapshot can
 * be made (loadPyodide's `_makeSnapshot`), Python sees the JS globals through a proxy that
 * records how each object was reached, so the snapshot can name them; that proxy passes itself
 * as `this` to native getters, which then throw "Illegal invocation" (pyodide-http's
 * XMLHttpRequest, for one). Modules imported from now on see the real globals.
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
    const { name, handle, ptr, size } = library;
    // Emscripten's dlopen wrote the library's name and flags into its handle: a snapshot of
    // another build, or a stray entry, names another file.
    if (module.UTF8ToString(handle + 36) !== name) throw new Error(`the snapshot's handle for ${name} names another library`);
    const flags = module.HEAP32[(handle + 4) >>> 2];
    const global = Boolean(flags & 256);
    const data = module.HEAP8.slice(ptr, ptr + size);
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
  pyodide.runPython(AFTER_RESTORE);
}

// The restored interpreter goes on: garbage collection back on, `random` reseeded (its state
// came from the visit that made the snapshot), and one call into pydantic-core's extension.
const AFTER_RESTORE = `
import gc, sys
gc.enable()
if "random" in sys.modules:
    sys.modules["random"].seed()
import pydantic_core
if pydantic_core.SchemaValidator({"type": "int"}).validate_python("7") != 7:
    raise RuntimeError("pydantic-core does not answer after the restore")
`;

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
