#!/usr/bin/env bash
# Runs on a lent GPU host that has no MLIR and no package registry (see docs/performance.md):
# every GPU test from the AOT bundle, compute-sanitizer on one odd shape, then the benchmark table.
#   bash scripts/gpu_session.sh [tests|bench|all|models]     (bundle in build/aot; outputs under $OUT)
# models: fit the split-K/stream-K model's constants (k_calibration.json, copied to $OUT), then the model suite
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/cute-out}
mkdir -p "$OUT"
what=${1:-all}
export PYTHONPATH=packages/cute-layout/src:packages/cute-nvarch/src:packages/cute-runtime/src:packages/cute-examples/src
export CUTE_REQUIRE_GPU=1 CUTE_BUNDLE_DIR=build/aot PYTHONUNBUFFERED=1
export CUTE_RECORD_MISSES=${CUTE_RECORD_MISSES:-$OUT/misses.jsonl}  # specs the bundle lacks: build_bundle --add-specs
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
if [[ $what == tests || $what == all ]]; then
  python3 -m pytest -q -m gpu -p no:cacheprovider tests packages > "$OUT/gpu-tests.txt" 2>&1
  tail -n 40 "$OUT/gpu-tests.txt"
  # --report-api-errors no: torch and cuda-bindings probe driver entry points (cuGetProcAddress) on purpose
  for dt in Float16 Float32; do
    compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \
      python3 -m cute_examples.elementwise_add --M 127 --N 129 --dtype $dt > "$OUT/memcheck-$dt.txt" 2>&1
    echo "memcheck elementwise_add $dt 127x129: exit $? ($(grep -c 'Invalid' "$OUT/memcheck-$dt.txt") invalid accesses)"
    tail -n 2 "$OUT/memcheck-$dt.txt"
  done
  # the tutorial transpose (JIT kernel from the bundle): odd shape, every dtype, both shared layouts
  compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \
    python3 -m pytest -q -m gpu -p no:cacheprovider packages/cute-examples/tests/test_transpose_gpu.py \
    -k "exact and 129x257" > "$OUT/memcheck-transpose.txt" 2>&1
  echo "memcheck transpose 129x257: exit $? ($(grep -c 'Invalid' "$OUT/memcheck-transpose.txt") invalid accesses)"
  tail -n 2 "$OUT/memcheck-transpose.txt"
fi
if [[ $what == bench || $what == all ]]; then
  # compile-cost rows need MLIR: staged under $HOME/mlirsite by the two staging calls (docs/performance.md)
  if [[ -d $HOME/mlirsite/mlir ]]; then
    export PYTHONPATH=$PYTHONPATH:packages/cute-ir/src:$HOME/mlirsite
  fi
  python3 -m cute_examples.bench 2>&1 | tee "$OUT/bench.txt"
fi
if [[ $what == models ]]; then
  python3 -m cute_examples.dense_gemm.calibrate --write 2>&1 | tee "$OUT/calibrate.txt"
  cp packages/cute-examples/src/cute_examples/dense_gemm/k_calibration.json "$OUT/"
  python3 -m cute_examples.dense_gemm.bench --suite models 2>&1 | tee "$OUT/models.txt"
fi
