// Runs tests/ with pytest inside real Pyodide under Node, so the core is proven in
// WebAssembly and not only in CPython. agrun comes from the built wheel (as in the page),
// tests/ from the work tree mounted read-only through NODEFS.
//
//   node tools/pyodide_pytest.mjs [pytest args...]      (after ./build.sh)
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const indexURL = `${root}/dist/pyodide/`;
const nodeLock = `${root}/build/pyodide-node/`;

const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
const pyodide = await loadPyodide({
  indexURL,
  lockFileURL: `${nodeLock}pyodide-lock.json`,
  packageBaseUrl: nodeLock,
});

// Pyodide reports a package that failed to load but does not throw: check every one.
const lock = JSON.parse(readFileSync(`${nodeLock}pyodide-lock.json`, 'utf8'));
const wanted = Object.keys(lock.packages);
const failures = [];
await pyodide.loadPackage(wanted, {
  messageCallback: () => {},
  errorCallback: (message) => failures.push(message),
});
const loaded = new Set(Object.keys(pyodide.loadedPackages).map((n) => n.toLowerCase().replaceAll('_', '-')));
const missing = wanted.filter((name) => !loaded.has(name));
if (failures.length || missing.length) {
  console.error('Pyodide could not load:', missing.join(', '), failures.join('\n'));
  process.exit(2);
}

pyodide.FS.mkdirTree('/repo');
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root }, '/repo');
pyodide.globals.set('pytest_args', pyodide.toPy(process.argv.slice(2)));
// Synchronous on purpose: tests drive their own event loop (tests/conftest.py).
const code = pyodide.runPython(`
import os, sys
sys.dont_write_bytecode = True
os.chdir('/repo')
import pytest
pytest.main(['tests', '-p', 'no:cacheprovider', *pytest_args])
`);
process.exit(Number(code));
