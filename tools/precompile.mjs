// Precompiles what a page imports (tools/precompile.py) inside the vendored Pyodide under Node,
// so the bytecode is that of the Python the page runs (a .pyc is only good for the version
// that wrote it):
//
//   node tools/precompile.mjs PYODIDE_DIR OUT_DIR WHEEL...
//
// PYODIDE_DIR is the unpacked npm package. Writes OUT_DIR/<each wheel>, its modules compiled,
// and OUT_DIR/python_stdlib.zip, the package's standard library with the modules compiled
// that a boot and a first turn import: to learn which, it first installs the wheels as they
// are, imports what web/boot/boot.js imports and runs one turn of a runtime.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [pyodideDir, outDir, ...rest] = process.argv.slice(2);
if (!pyodideDir || !outDir || !rest.length) {
  console.error('usage: node tools/precompile.mjs PYODIDE_DIR OUT_DIR WHEEL...');
  process.exit(2);
}
const wheels = rest.map((wheel) => resolve(wheel));

// An uncaught error would print the line it came from: the whole of Pyodide's minified module.
process.on('uncaughtException', (error) => {
  console.error(`precompile: ${error?.message ?? error}`);
  process.exit(1);
});

const indexURL = `${resolve(pyodideDir)}/`;
const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
const pyodide = await loadPyodide({ indexURL, stdout: (line) => console.log(line) });

// 1. What a boot and a first turn import from the standard library, before this script's own
// imports add to it: the wheels loaded as a page loads them, then what web/boot/boot.js imports and
// one turn.
const failed = [];
await pyodide.loadPackage(wheels, { messageCallback: () => {}, errorCallback: (m) => failed.push(m) });
if (failed.length) throw new Error(failed.join('; '));
const used = await pyodide.runPythonAsync(`
import agrun.adapters.pyodide.bridge  # what web/boot/boot.js imports
import agrun, sys
await agrun.create_runtime().run("hello")
prefix = "/lib/python314.zip/"
"\\n".join(sorted({
    module.__file__.removeprefix(prefix)
    for module in list(sys.modules.values())
    if (getattr(module, "__file__", None) or "").startswith(prefix)
}))
`);

// 2. Compile.
const script = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), 'precompile.py'));
pyodide.FS.mkdirTree('/work/in');
pyodide.FS.writeFile('/work/precompile.py', script);
pyodide.FS.writeFile('/work/stdlib-modules.txt', `${used}\n`);
const inputs = wheels.map((wheel) => {
  const path = `/work/in/${basename(wheel)}`;
  pyodide.FS.writeFile(path, readFileSync(wheel));
  return path;
});
const run = (argv) => {
  pyodide.globals.set('argv', pyodide.toPy(argv));
  pyodide.runPython(`
import runpy, sys
sys.argv = ['precompile.py', *argv]
runpy.run_path('/work/precompile.py', run_name='__main__')
`);
};
run(['wheels', '/work/out', ...inputs]);
const [major, minor] = pyodide.runPython('import sys; sys.version_info[:2]').toJs();
run(['stdlib', `/lib/python${major}${minor}.zip`, '/work/out/python_stdlib.zip', '/work/stdlib-modules.txt']);

mkdirSync(outDir, { recursive: true });
for (const name of [...wheels.map((wheel) => basename(wheel)), 'python_stdlib.zip']) {
  writeFileSync(resolve(outDir, name), pyodide.FS.readFile(`/work/out/${name}`));
}
