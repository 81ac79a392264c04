// agrun's installed packages, kept beside a memory snapshot (docs/performance.md, "A warm
// start that installs no wheel"). A restored interpreter has imported what its snapshot holds,
// but still needs the files of its packages: pydantic-core's extension is loaded from its
// file, and a module imported later is read from its own. Pyodide would install the wheels
// again, unpacking them in Python once the interpreter is back (80-110 ms of a warm boot);
// the files as they were installed are written back instead, in a few milliseconds.
//
// Kept as one section: a JSON index of [path, length] then the files' bytes, one after the
// other.

/** The files under site-packages now, by path: the boot's packages, just installed. */
export function siteFilePaths(pyodide) {
  const { FS } = pyodide;
  const paths = [];
  const walk = (folder) => {
    for (const name of FS.readdir(folder)) {
      if (name === '.' || name === '..') continue;
      const path = `${folder}/${name}`;
      if (FS.isDir(FS.stat(path).mode)) walk(path);
      else paths.push(path);
    }
  };
  walk(sitePackages(pyodide));
  return paths;
}

/** The section that keeps the files at `paths` as they are now: `{ bytes, meta }`. */
export function packSiteFiles(pyodide, paths) {
  const files = paths.map((path) => [path, pyodide.FS.readFile(path)]);
  const index = new TextEncoder().encode(JSON.stringify(files.map(([path, data]) => [path, data.length])));
  const bytes = new Uint8Array(index.length + files.reduce((sum, [, data]) => sum + data.length, 0));
  bytes.set(index);
  let at = index.length;
  for (const [, data] of files) {
    bytes.set(data, at);
    at += data.length;
  }
  return { bytes, meta: { index: index.length, length: bytes.length } };
}

/**
 * The files a section holds, each `[path, bytes]`: views into a copy of the section (`bytes`
 * may be a view into a larger buffer, the snapshot's, which the files must not keep alive).
 * Throws for a section that is not one packSiteFiles made for `site` (lengths that do not add
 * up, a path outside it).
 */
export function unpackSiteFiles(section, meta, site) {
  if (!Number.isInteger(meta?.index) || meta.length !== section.length || meta.index > section.length) {
    throw new Error(`the kept files are not a section agrun wrote (${section.length} bytes)`);
  }
  const bytes = section.slice();
  const index = JSON.parse(new TextDecoder().decode(bytes.subarray(0, meta.index)));
  let at = meta.index;
  const files = [];
  for (const entry of Array.isArray(index) ? index : [null]) {
    const [path, length] = Array.isArray(entry) ? entry : [];
    const inside = typeof path === 'string' && path.startsWith(`${site}/`) && !path.split('/').includes('..');
    if (!inside || !Number.isInteger(length) || length < 0 || at + length > bytes.length) {
      throw new Error(`the kept files name ${JSON.stringify(entry)}, not a file of ${site}`);
    }
    files.push([path, bytes.subarray(at, at + length)]);
    at += length;
  }
  if (at !== bytes.length) throw new Error('the kept files do not fill their section');
  return files;
}

/**
 * Write `files` (unpackSiteFiles', which nothing else may hold) into a restored interpreter's
 * site-packages, and count the boot's packages (`names`, of `lock`) installed, as Pyodide's
 * loadPackage would have.
 */
export function writeSiteFiles(pyodide, files, lock, names) {
  const { FS } = pyodide;
  const folders = new Set();
  for (const [path, data] of files) {
    const folder = path.slice(0, path.lastIndexOf('/'));
    if (!folders.has(folder)) {
      FS.mkdirTree(folder);
      folders.add(folder);
    }
    // The file keeps the view itself (Emscripten's MEMFS owns it), not a copy of it.
    FS.writeFile(path, data, { canOwn: true });
  }
  for (const name of names) pyodide.loadedPackages[lock.packages[name].name] = 'default channel';
  pyodide.runPython('import importlib\nimportlib.invalidate_caches()');
}

/** Where Pyodide installs packages: the folder kept files must lie in. */
export function sitePackages(pyodide) {
  return pyodide._api.sitePackages;
}
