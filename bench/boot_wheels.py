"""What a cold page's boot spends on agrun's wheels, and what the ways around it would cost:
each measured in a fresh bare interpreter (dist/pyodide, no snapshot) in one Chromium run.

    .venv/bin/python bench/boot_wheels.py [--rounds 5]      (after ./build.sh)

- ``pyodide unpack``: Pyodide's own installer (``unpackArchive``: Python's zipfile and
  shutil, what loadPyodide's ``packages`` runs) on the six wheels a boot loads, the first use
  in the interpreter, as a cold boot pays it;
- ``plain unpack``: a plain Python loop instead (zipfile, one write per file), first use;
- ``js inflate``: the same files inflated in JavaScript with DecompressionStream (what an
  unpacker outside Python would start from, before writing a file);
- ``pydantic-core load``: loading its extension (``loadDynlib``) once its files are there,
  with the part that WebAssembly.instantiate takes, and a plain WebAssembly.compile of it;
- ``import, unpacked`` / ``import, wheels on sys.path``: ``import
  agrun.adapters.pyodide.bridge`` with the wheels unpacked, and with the pure-Python wheels
  left whole on sys.path (zipimport; pydantic-core unpacked, its extension must be a file:
  the ``(zips)`` rows).

Prints each one's median over the rounds, in ms.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from _browser import chromium_and_site

# Runs in a blank page of dist/: `mode` is 'unpacked', 'zips' or 'plain'.
VISIT = """async (mode) => {
  const { loadPyodide } = await import('/pyodide/pyodide.mjs');
  const py = await loadPyodide({ indexURL: new URL('/pyodide/', location.href).href });
  const lock = await (await fetch('/pyodide/pyodide-lock.json')).json();
  const names = ['agrun', 'annotated-types', 'pydantic', 'pydantic-core', 'typing-extensions',
                 'typing-inspection'];
  const wheels = await Promise.all(names.map(async (name) => {
    const file = lock.packages[name].file_name;
    return { name, file, bytes: new Uint8Array(await (await fetch('/pyodide/' + file)).arrayBuffer()) };
  }));
  const site = '/lib/python3.14/site-packages';
  const out = {};
  const time = async (key, work) => {
    const t = performance.now();
    await work();
    out[key] = (out[key] ?? 0) + performance.now() - t;
  };
  if (mode === 'plain') {
    py.runPython(`
import io, os, zipfile
def plain_unpack(buffer, target):
    archive = zipfile.ZipFile(io.BytesIO(buffer.to_py()))
    for info in archive.infolist():
        if info.is_dir():
            continue
        path = os.path.join(target, info.filename)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(archive.read(info))
`);
    const unpack = py.globals.get('plain_unpack');
    for (const { bytes } of wheels) await time('plain unpack', () => unpack(bytes, '/tmp/plain'));
    await time('js inflate', () => Promise.all(wheels.map(({ bytes }) => inflate(bytes))));
    return out;
  }
  for (const { name, file, bytes } of wheels) {
    if (mode === 'zips' && name !== 'pydantic-core') {
      py.FS.writeFile(`${site}/${file}`, bytes);
      py.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(`${site}/${file}`)})`);
    } else {
      await time('pyodide unpack', () => py.unpackArchive(bytes, 'whl', { extractDir: site }));
    }
  }
  const library = py.FS.readdir(`${site}/pydantic_core`).find((f) => f.endsWith('.so'));
  const path = `${site}/pydantic_core/${library}`;
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async function timed(...args) {
    const t = performance.now();
    try { return await instantiate.apply(this, args); }
    finally { out['  of it, instantiate'] = (out['  of it, instantiate'] ?? 0) + performance.now() - t; }
  };
  try { await time('pydantic-core load', () => py._api.loadDynlib(path)); }
  finally { WebAssembly.instantiate = instantiate; }
  await time('  a plain compile of it', () => WebAssembly.compile(py.FS.readFile(path)));
  py.runPython('import importlib; importlib.invalidate_caches()');
  await time(mode === 'zips' ? 'import, wheels on sys.path' : 'import, unpacked',
             () => py.runPython('import agrun.adapters.pyodide.bridge'));
  return out;

  // A zip's entries, each inflated with DecompressionStream (the central directory read).
  async function inflate(bytes) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let end = bytes.length - 22;
    while (view.getUint32(end, true) !== 0x06054b50) end--;
    let at = view.getUint32(end + 16, true);
    const jobs = [];
    for (let i = view.getUint16(end + 10, true); i > 0; i--) {
      const method = view.getUint16(at + 10, true);
      const size = view.getUint32(at + 20, true);
      const local = view.getUint32(at + 42, true);
      at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
      const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
      const data = bytes.subarray(start, start + size);
      if (method === 8) {
        jobs.push(new Response(new Blob([data]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer());
      }
    }
    return Promise.all(jobs);
  }
}"""


ORDER = (
    "pyodide unpack",
    "plain unpack",
    "js inflate",
    "pydantic-core load",
    "  of it, instantiate",
    "  a plain compile of it",
    "import, unpacked",
    "pyodide unpack (zips)",
    "pydantic-core load (zips)",
    "import, wheels on sys.path",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {}
    with chromium_and_site() as (browser, url):
        for n in range(args.rounds):
            for mode in ("unpacked", "zips", "plain"):
                context = browser.new_context(base_url=url)
                page = context.new_page()
                page.goto("/blank.html")
                result: dict[str, Any] = page.evaluate(VISIT, mode)
                context.close()
                for key, value in result.items():
                    name = f"{key} (zips)" if mode == "zips" and "import" not in key else key
                    figures.setdefault(name, []).append(value)
            print(f"round {n + 1}/{args.rounds} done")
    print(f"\nagrun's wheels in a cold boot, median of {args.rounds} rounds (ms)")
    for key in ORDER:
        values = figures.get(key)
        if values:
            print(f"  {key:<40} {statistics.median(values):7.0f}")


if __name__ == "__main__":
    main()
