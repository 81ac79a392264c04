// Makes the memory snapshot a first visit restores (docs/performance.md, "A snapshot made at
// build time"): boots dist/pyodide's Pyodide under Node as web/boot/boot.js boots it in a page
// (the same lock, wheels, standard library and snapshot.js), imports what boot.js imports, and
// writes the snapshot beside it:
//
//   node tools/make_snapshot.mjs PYODIDE_DIR
//
// PYODIDE_DIR/agrun-snapshot-<identity>.bin, the memory image without its runs of zeros
// (served compressed, like pyodide.asm.wasm), and
// PYODIDE_DIR/agrun-snapshot.json, its manifest: the build's identity (snapshotIdentity: the
// Pyodide build and the lock's wheels with their sha256), the file's name, sha256 and length,
// the memory's length and where its zero runs were, and where pydantic-core's extension was
// loaded. A page fetches the snapshot only when the
// manifest's identity is its own build's.
//
// Agrun's import reaches no JS object a page would not have (the snapshot names each JS
// object Python holds by its path from the globals; this script fails if there is one that a
// page's globals might lack), so a snapshot made under Node restores in a page and a worker.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { bootPackages, pyodideOptions } from '../web/boot/boot.js';
import { makeSnapshot, probeModule, SHIPPED_MANIFEST, snapshotIdentity, withoutZeroRuns } from '../web/boot/snapshot.js';

const [pyodideDir] = process.argv.slice(2);
if (!pyodideDir) {
  console.error('usage: node tools/make_snapshot.mjs PYODIDE_DIR');
  process.exit(2);
}
// An uncaught error would print the line it came from: the whole of Pyodide's minified module.
process.on('uncaughtException', (error) => {
  console.error(`make_snapshot: ${error?.message ?? error}`);
  process.exit(1);
});

standInForTheTrampoline();

const indexURL = `${resolve(pyodideDir)}/`;
for (const name of readdirSync(indexURL)) {
  if (name === SHIPPED_MANIFEST || /^agrun-snapshot-.*\.bin$/.test(name)) rmSync(`${indexURL}${name}`);
}
const lock = JSON.parse(readFileSync(`${indexURL}pyodide-lock.json`, 'utf8'));
const names = bootPackages(lock);
const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
const probe = probeModule((await import(`${indexURL}pyodide.asm.mjs`)).default);
const pyodide = await loadPyodide({
  ...pyodideOptions(indexURL, lock, names),
  _makeSnapshot: true,
  createPyodideModule: probe.create,
  // A page's program name (under Node it would be this script's path, seen in sys.executable).
  _sysExecutable: './this.program',
});
pyodide.runPython('import agrun.adapters.pyodide.bridge');
// Under Node, Pyodide puts the working folder ('') on sys.path twice; a page has it once.
pyodide.runPython('import sys\nsys.path[:] = list(dict.fromkeys(sys.path))');

// Each JS object Python holds past Pyodide's own is named by its path from the globals: one a
// page lacks would be restored as null. Only the standard globals of a page and a worker pass.
// (Pyodide expects its package registry empty, as makeSnapshot leaves it while it snapshots.)
const loaded = { ...pyodide.loadedPackages };
for (const name of Object.keys(loaded)) delete pyodide.loadedPackages[name];
const held = pyodide._api.serializeHiwireState(() => null);
Object.assign(pyodide.loadedPackages, loaded);
const PORTABLE = new Set(['Object', 'Array', 'JSON', 'Promise', 'Error', 'Symbol', 'Reflect', 'Function', 'Map', 'Set']);
for (const entry of held.hiwireKeys) {
  if (entry && !(entry.API || entry.abortSignalAny || (entry.path && PORTABLE.has(entry.path[0])))) {
    throw new Error(`agrun's import holds a JS object a page may not have: ${JSON.stringify(entry)}`);
  }
}
const made = makeSnapshot(pyodide, probe);
if (!made) throw new Error('this Pyodide could not be snapshotted');
const snapshot = withoutZeroRuns(made);
const identity = await snapshotIdentity(lock, names);
const file = `agrun-snapshot-${identity.slice(0, 16)}.bin`;
writeFileSync(`${indexURL}${file}`, snapshot.bytes);
const manifest = {
  identity,
  format: snapshot.meta.format,
  file,
  sha256: createHash('sha256').update(snapshot.bytes).digest('hex'),
  length: snapshot.meta.length,
  memory: snapshot.meta.memory,
  holes: snapshot.meta.holes,
  libraries: snapshot.meta.libraries,
};
writeFileSync(`${indexURL}${SHIPPED_MANIFEST}`, `${JSON.stringify(manifest, null, 1)}\n`);
const gzipped = gzipSync(snapshot.bytes, { level: 9 }).length;
const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
console.log(`${file}: ${mib(snapshot.bytes.length)} MiB (a memory of ${mib(snapshot.meta.memory)} MiB without its zero runs), ${mib(gzipped)} MiB gzip -9`);
process.exit(0);

// CPython in Pyodide calls C functions through a small wasm "trampoline" that Pyodide compiles
// at start and puts in the function table, and keeps its slot in the interpreter's memory.
// It uses WebAssembly GC instructions, which browsers compile and Node 20 does not: Pyodide
// then goes without one, its function table is a slot shorter than a browser's, and every
// later slot (pydantic-core's functions) would be off by one in a page (snapshot.js refuses
// such a snapshot). Under a Node that cannot compile it, a stand-in that does what it does
// (calls the function with the arguments it takes, or reports one that takes more) takes its
// slot; a page's restore finds its own trampoline in that slot.
function standInForTheTrampoline() {
  const { Module: NativeModule, Instance: NativeInstance } = WebAssembly;
  const standIns = new WeakSet();
  const isTrampoline = (bytes) => Buffer.from(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, bytes.byteLength).includes('trampoline_call');
  function Module(bytes, ...rest) {
    try {
      return new NativeModule(bytes, ...rest);
    } catch (error) {
      if (!isTrampoline(bytes)) throw error;
      const standIn = Object.create(NativeModule.prototype);
      standIns.add(standIn);
      return standIn;
    }
  }
  function Instance(module, imports) {
    if (!standIns.has(module)) return new NativeInstance(module, imports);
    const { __indirect_function_table: table, memory } = imports.env;
    const call = (success, func, self, args, kw) => {
      const target = table.get(func);
      if (target.length > 3) {
        new Int32Array(memory.buffer)[success >>> 2] = 0;
        return 0;
      }
      return target(self, args, kw);
    };
    // (i32 x 5) -> i32, calling the imported e.f: a table holds wasm functions only.
    const wrapper = Uint8Array.of(
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
      0x01, 0x0a, 0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f,
      0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00,
      0x03, 0x02, 0x01, 0x00,
      0x07, 0x05, 0x01, 0x01, 0x63, 0x00, 0x01,
      0x0a, 0x10, 0x01, 0x0e, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0x20, 0x03, 0x20, 0x04, 0x10, 0x00, 0x0b,
    );
    const { c } = new NativeInstance(new NativeModule(wrapper), { e: { f: call } }).exports;
    return { exports: { trampoline_call: c } };
  }
  Object.assign(Module, { customSections: NativeModule.customSections, imports: NativeModule.imports, exports: NativeModule.exports });
  Module.prototype = NativeModule.prototype;
  Instance.prototype = NativeInstance.prototype;
  WebAssembly.Module = Module;
  WebAssembly.Instance = Instance;
}
