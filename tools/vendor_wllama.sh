#!/usr/bin/env bash
# Vendor wllama (llama.cpp built to WebAssembly) from the npm registry into a folder a page
# serves, with only what runs in the page:
#
#   tools/vendor_wllama.sh DEST      (the build calls it with dist/wllama)
#
#   DEST/index.js            the ES module (worker and Emscripten glue are inlined in it)
#   DEST/wasm/wllama.wasm    the one wasm build (single- and multi-thread, chosen at run time)
#   DEST/LICENCE             wllama's MIT licence
#
# The package is fetched once into .cache/npm and unpacked once into .cache.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/pins.env"

die() { printf '\033[31m[wllama] error:\033[0m %s\n' "$*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 DEST"
DEST=$1
VERSION=$WLLAMA_VERSION
CACHE=$ROOT/.cache
TGZ=$CACHE/npm/wllama-wllama-$VERSION.tgz
UNPACKED=$CACHE/wllama-$VERSION

if [ ! -f "$TGZ" ]; then
  printf '\033[1m[wllama]\033[0m fetching @wllama/wllama@%s from the npm registry\n' "$VERSION" >&2
  mkdir -p "$CACHE/npm"
  (cd "$CACHE/npm" && npm pack --silent "@wllama/wllama@$VERSION" >/dev/null) \
    || die "npm could not fetch @wllama/wllama@$VERSION"
  [ -f "$TGZ" ] || die "npm pack did not leave $TGZ"
fi

if [ ! -f "$UNPACKED/esm/index.js" ]; then
  rm -rf "$UNPACKED" && mkdir -p "$UNPACKED"
  tar -xzf "$TGZ" -C "$UNPACKED" --strip-components=1 || die "could not unpack $TGZ"
fi
for f in esm/index.js esm/wasm/wllama.wasm LICENCE; do
  [ -f "$UNPACKED/$f" ] || die "@wllama/wllama@$VERSION has no $f: its layout changed"
done

# Plain cp, not cp -u: npm packs every file with the same 1985 mtime, so -u would keep an
# older version's files after a pin change.
mkdir -p "$DEST/wasm"
cp "$UNPACKED/esm/index.js" "$DEST/index.js"
cp "$UNPACKED/esm/wasm/wllama.wasm" "$DEST/wasm/wllama.wasm"
cp "$UNPACKED/LICENCE" "$DEST/LICENCE"
