#!/usr/bin/env bash
# Fetch one pinned npm package once (npm pack into .cache/npm), unpack it once into .cache,
# and print the folder it is unpacked in:
#
#   tools/npm_unpack.sh NAME VERSION      e.g. tools/npm_unpack.sh @highlightjs/cdn-assets 11.12.0
#
# For packages whose files are used as they ship (build.sh's vendor_markdown, tools/vendor_axe.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

die() { printf '\033[31m[npm] error:\033[0m %s\n' "$*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: $0 NAME VERSION"
NAME=$1 VERSION=$2
# npm pack names a scoped package's file scope-name-version.tgz.
FILE=$(echo "${NAME#@}" | tr / -)-$VERSION
TGZ=$ROOT/.cache/npm/$FILE.tgz
UNPACKED=$ROOT/.cache/$FILE

if [ ! -f "$TGZ" ]; then
  printf '\033[1m[npm]\033[0m fetching %s@%s from the npm registry\n' "$NAME" "$VERSION" >&2
  mkdir -p "$ROOT/.cache/npm"
  (cd "$ROOT/.cache/npm" && npm pack --silent "$NAME@$VERSION" >/dev/null) || die "npm could not fetch $NAME@$VERSION"
  [ -f "$TGZ" ] || die "npm pack did not leave $TGZ"
fi
if [ ! -f "$UNPACKED/package.json" ]; then
  rm -rf "$UNPACKED" && mkdir -p "$UNPACKED"
  tar -xzf "$TGZ" -C "$UNPACKED" --strip-components=1 || die "could not unpack $TGZ"
fi
echo "$UNPACKED"
