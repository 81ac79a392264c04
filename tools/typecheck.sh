#!/usr/bin/env bash
# Check agrun's TypeScript declarations (web/*.d.ts, web/providers/*.d.ts):
#
#   tools/typecheck.sh            tsc --noEmit --strict -p web/examples, then check that the
#                                 declarations list every option and method the JS has, and
#                                 web/engine/operations.js every engine operation runtime.js calls
#   tools/typecheck.sh --tsc      only install the pinned compiler; print the path of its tsc
#
# TypeScript (pins.env: TYPESCRIPT_VERSION) is installed once from the npm registry into
# .cache/typescript-VERSION; npm's own cache keeps it for an offline reinstall.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/pins.env"

log() { printf '\033[1m[typecheck]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[typecheck] error:\033[0m %s\n' "$*" >&2; exit 1; }

PREFIX=$ROOT/.cache/typescript-$TYPESCRIPT_VERSION
TSC=$PREFIX/node_modules/typescript/bin/tsc

if [ ! -x "$TSC" ] || [ "$(node "$TSC" --version 2>/dev/null)" != "Version $TYPESCRIPT_VERSION" ]; then
  log "installing typescript@$TYPESCRIPT_VERSION into ${PREFIX#"$ROOT"/}"
  rm -rf "$PREFIX" && mkdir -p "$PREFIX"
  npm install --prefix "$PREFIX" --prefer-offline --no-audit --no-fund --loglevel=error \
    "typescript@$TYPESCRIPT_VERSION" >&2 || die "npm could not install typescript@$TYPESCRIPT_VERSION"
  [ "$(node "$TSC" --version)" = "Version $TYPESCRIPT_VERSION" ] || die "typescript@$TYPESCRIPT_VERSION does not run here"
fi

if [ "${1:-}" = "--tsc" ]; then
  echo "$TSC"
  exit 0
fi

log "tsc --noEmit --strict -p web/examples ($(node "$TSC" --version))"
(cd "$ROOT" && node "$TSC" --noEmit --strict -p web/examples) || die "the declarations and web/examples/example.ts do not type-check"

# tsc cannot see plain JavaScript's option tables: compare them with the declarations here, so
# an option or method added to the JS without its declaration fails the check. createRuntime's
# options are the page's own (PAGE_OPTIONS in web/agrun.js) and the runtime's, generated from
# the Python model (web/runtime-options.js; tests/test_runtime_options.py checks them too).
log "declarations against the option tables and methods of web/agrun.js and web/runtime.js, and web/engine/operations.js"
(cd "$ROOT/web" && node --input-type=module - <<'EOF'
import { readFileSync } from 'node:fs';

const read = (path) => readFileSync(path, 'utf8');
const block = (text, start) => {
  const at = text.indexOf(start);
  if (at < 0) throw new Error(`'${start}' is not where it was expected`);
  const open = text.indexOf('{', at);
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if (text[i] === '{') depth += 1;
    if (text[i] === '}' && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`'${start}' has no end`);
};
// Names at the block's own level (two spaces in), properties and methods alike.
const names = (body, pattern = /^ {2}(?:readonly )?(?:async \*?)?(\w+)\??[:(<]/gm) =>
  new Set([...body.matchAll(pattern)].map((m) => m[1]));

const agrun = read('agrun.js');
const generated = read('runtime-options.js');
const runtime = read('runtime.js');
const dts = read('agrun.d.ts');
const declaredOptions = new Set([
  ...names(block(dts, 'export interface RuntimeOptionsBase')),
  ...names(block(dts, 'export interface InPageHooks')),
  ...names(block(dts, 'export interface WorkerRuntimeOptions')),
]);
const methods = names(block(runtime, 'export class Runtime'));
methods.delete('constructor');
// Every engine method the Runtime calls is an operation web/engine/operations.js declares
// (close() lets go of the engine itself).
const { OPERATIONS } = await import('./engine/operations.js');
const engineCalls = new Set([...runtime.matchAll(/#engine\.(\w+)\(/g)].map((m) => m[1]));
engineCalls.delete('close');
const pairs = [
  ['createRuntime options (PAGE_OPTIONS, RUNTIME_OPTIONS)', new Set([
    ...names(block(agrun, 'const PAGE_OPTIONS')),
    ...names(block(generated, 'export const RUNTIME_OPTIONS')),
  ]), declaredOptions],
  ['run() options (RUN_OPTIONS)', names(block(runtime, 'export const RUN_OPTIONS')), names(block(dts, 'export interface RunOptions'))],
  ['Runtime methods (web/runtime.js)', methods, names(block(dts, 'export interface Runtime {'))],
  ['engine operations (web/runtime.js), in web/engine/operations.js', engineCalls, new Set(Object.keys(OPERATIONS))],
];
let failed = false;
for (const [what, js, declared] of pairs) {
  const undeclared = [...js].filter((name) => !declared.has(name));
  const stale = [...declared].filter((name) => !js.has(name));
  if (undeclared.length || stale.length) {
    failed = true;
    console.error(`${what}: not declared: [${undeclared.join(', ')}]; declared but not in the JS: [${stale.join(', ')}]`);
  }
}
if (failed) process.exit(1);
EOF
) || die "web/agrun.d.ts or web/engine/operations.js is out of step with the JavaScript"
log "ok"
