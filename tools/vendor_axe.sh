#!/usr/bin/env bash
# Fetch axe-core (the accessibility rules engine e2e/test_widget.py runs in the page) from the
# npm registry, once, and print the path of its axe.min.js:
#
#   tools/vendor_axe.sh          -> .cache/axe-core-$AXE_CORE_VERSION/axe.min.js
#
# The package is packed into .cache/npm and unpacked into .cache; nothing goes into dist/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/pins.env"

die() { printf '\033[31m[axe] error:\033[0m %s\n' "$*" >&2; exit 1; }

VERSION=$AXE_CORE_VERSION
CACHE=$ROOT/.cache
TGZ=$CACHE/npm/axe-core-$VERSION.tgz
UNPACKED=$CACHE/axe-core-$VERSION

if [ ! -f "$TGZ" ]; then
  printf '\033[1m[axe]\033[0m fetching axe-core@%s from the npm registry\n' "$VERSION" >&2
  mkdir -p "$CACHE/npm"
  (cd "$CACHE/npm" && npm pack --silent "axe-core@$VERSION" >/dev/null) || die "npm could not fetch axe-core@$VERSION"
  [ -f "$TGZ" ] || die "npm pack did not leave $TGZ"
fi
if [ ! -f "$UNPACKED/axe.min.js" ]; then
  rm -rf "$UNPACKED" && mkdir -p "$UNPACKED"
  tar -xzf "$TGZ" -C "$UNPACKED" --strip-components=1 || die "could not unpack $TGZ"
  [ -f "$UNPACKED/axe.min.js" ] || die "axe-core@$VERSION has no axe.min.js: its layout changed"
fi
echo "$UNPACKED/axe.min.js"
