// A page's own Python for createRuntime: wheels it serves from its own origin (each checked
// against the sha256 the page gives, then installed with micropip), the Python skills they
// hold, and pyodide-http so that urllib.request and requests work in the page.
// py/agrun/adapters/pyodide/packages.py is the Python side.
import { AgrunConfigError, AgrunError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { unwrap } from '../wire.js';
import { loadOptionalPackages } from './boot.js';

const SHA256 = /^[0-9a-fA-F]{64}$/;
// A wheel's file name: name-version(-build)?-python-abi-platform.whl.
const WHEEL_FILE = /^[A-Za-z0-9_.]+-[^-/]+(-[^-/]+)?-[^-/]+-[^-/]+-[^-/]+\.whl$/;
const SKILL_PATH = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$/;

let staged = 0; // each install gets its own folder in Pyodide's filesystem

/**
 * Check createRuntime's `packages` ([{ url, sha256 }]): each URL on the page's own origin and
 * naming a wheel, each sha256 64 hex digits.
 * @returns {{ url: string, sha256: string, fileName: string, where: string }[]}
 */
export function checkPackages(packages = []) {
  const page = globalThis.location?.href ?? import.meta.url;
  const origin = new URL(page).origin;
  const names = new Set();
  return packages.map((item, index) => {
    const where = `packages[${index}]`;
    const { url, sha256 } = checkOptions(`createRuntime: option '${where}'`, item, { url: 'string', sha256: 'string' });
    if (!item || url === undefined || sha256 === undefined) {
      throw new AgrunConfigError(`createRuntime: option '${where}' must be { url, sha256 }, got ${describe(item)}`);
    }
    const resolved = new URL(url, page);
    if (resolved.origin !== origin) {
      throw new AgrunConfigError(
        `createRuntime: option '${where}.url' is ${resolved.href}, not on the page's origin ${origin}: serve the wheel from the page's own origin`,
      );
    }
    const fileName = resolved.pathname.split('/').pop();
    if (!WHEEL_FILE.test(fileName)) {
      throw new AgrunConfigError(`createRuntime: option '${where}.url' must name a wheel (name-version-py3-none-any.whl), got ${describe(fileName)}`);
    }
    if (names.has(fileName)) throw new AgrunConfigError(`createRuntime: option 'packages' lists ${fileName} twice`);
    names.add(fileName);
    if (!SHA256.test(sha256)) {
      throw new AgrunConfigError(`createRuntime: option '${where}.sha256' must be the wheel's sha256 as 64 hex digits, got ${describe(sha256)}`);
    }
    return { url: resolved.href, sha256: sha256.toLowerCase(), fileName, where };
  });
}

/** Check createRuntime's `pythonSkills`: each 'module:attribute'. */
export function checkPythonSkills(paths = []) {
  paths.forEach((path, index) => {
    if (typeof path !== 'string' || !SKILL_PATH.test(path)) {
      throw new AgrunConfigError(
        `createRuntime: option 'pythonSkills[${index}]' must be 'module:attribute' (say 'my_skills:weather'), got ${describe(path)}`,
      );
    }
  });
  return paths.slice();
}

/**
 * Fetch the page's wheels (all of them, before anything is written), then have Python check
 * each one's sha256 and install them with micropip. Nothing is installed if any step fails.
 * @param {object} pyodide the booted interpreter
 * @param {ReturnType<typeof checkPackages>} wheels
 */
export async function installPackages(pyodide, wheels) {
  if (!wheels.length) return;
  const files = [];
  for (const wheel of wheels) files.push(await fetchWheel(wheel.url));
  await loadOptionalPackages(pyodide, ['micropip']);
  const dir = `/tmp/agrun-packages/${++staged}`;
  pyodide.FS.mkdirTree(dir);
  const items = wheels.map(({ url, sha256, fileName, where }, index) => {
    const path = `${dir}/${fileName}`;
    pyodide.FS.writeFile(path, files[index]);
    return { url, sha256, path, where };
  });
  // install_wheels removes `dir` however it ends.
  await callPython(pyodide, (module) => module.install_wheels(JSON.stringify(items), dir));
}

/** Load pyodide-http and patch urllib.request (and requests, if installed) in Python. */
export async function enableHttp(pyodide) {
  await loadOptionalPackages(pyodide, ['pyodide-http']);
  await callPython(pyodide, (module) => module.enable_http());
}

async function callPython(pyodide, call) {
  const module = pyodide.pyimport('agrun.adapters.pyodide.packages');
  try {
    unwrap(await call(module));
  } finally {
    module.destroy();
  }
}

// Same origin only, redirects included (mode 'same-origin' refuses any that leave it).
async function fetchWheel(url) {
  let response;
  try {
    response = await fetch(url, { mode: 'same-origin' });
  } catch (cause) {
    throw new AgrunError(`agrun could not fetch the package ${url}: ${cause.message}`, { code: 'package_fetch_failed', cause });
  }
  if (!response.ok) {
    throw new AgrunError(`agrun could not fetch the package ${url}: HTTP ${response.status}`, { code: 'package_fetch_failed' });
  }
  return new Uint8Array(await response.arrayBuffer());
}
