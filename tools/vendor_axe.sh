#!/usr/bin/env bash
# Fetch axe-core (the accessibility rules engine e2e/test_widget.py runs in the page) from the
# npm registry, once, and print the path of its axe.min.js:
#
#   tools/vendor_axe.sh          -> .cache/axe-core-$AXE_CORE_VERSION/axe.min.js
#
# The package is packed into .cache/npm and unpacked into .cache (tools/npm_unpack.sh);
# nothing goes into dist/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/pins.env"

die() { printf '\033[31m[axe] error:\033[0m %s\n' "$*" >&2; exit 1; }

UNPACKED=$("$ROOT/tools/npm_unpack.sh" axe-core "$AXE_CORE_VERSION") || die "could not get axe-core@$AXE_CORE_VERSION"
[ -f "$UNPACKED/axe.min.js" ] || die "axe-core@$AXE_CORE_VERSION has no axe.min.js: its layout changed"
echo "$UNPACKED/axe.min.js"
