#!/usr/bin/env bash
# The GPU sweep: how the NVIDIA numbers in README.md and the issue notes were measured.
#   bash benches/gpu-sweep.sh pack   # here: build release tests/examples, copy them and the anchors into .gpu/
#   bash .gpu/gpu-sweep.sh run [all|tests|bench|compact|cold] [all]  # on the GPU machine (device tool, carry .gpu):
#                                    # parity tests on each GPU in a process of its own (and PoCL with a
#                                    # last `all`), bench table, CUB and CuPy anchors
#   bash benches/gpu-sweep.sh pack-dask   # here: clpix's wheel, Dask, distributed and dask-image wheels
#                                    # (about 6 MB; the GPU machines have numpy and scipy) and the Python benches
#   bash .gpu/gpu-sweep.sh dask [ARGS]   # there: python bench/multi_gpu.py ARGS (issue 55: one Dask
#                                    # worker per GPU against one, and dask-image on the host's cores)
set -uo pipefail
case "${1:-}" in
pack)
  cd "$(dirname "$0")/.."
  rm -rf .gpu && mkdir -p .gpu
  cargo test --release --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import sys,json
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"], m["target"]["name"])' \
    | while read -r exe name; do cp "$exe" ".gpu/test-$name"; done
  cargo build --release --examples
  for e in bench devices demo cold_start; do cp "target/release/examples/$e" .gpu/; done
  cp -r ../shared/anchors .gpu/anchors
  cp -r cl .gpu/cl
  cp benches/gpu-sweep.sh .gpu/
  # The device tool carries 64 MiB at most: symbols stripped, everything is 72 MiB (93 before);
  # `run tests` needs only test-*, devices, cl/ and this script (leave out bench, demo,
  # cold_start and anchors/: 53 MiB), `run bench` the examples and anchors/.
  strip .gpu/test-* .gpu/bench .gpu/devices .gpu/demo .gpu/cold_start
  du -sh .gpu
  ;;
run)
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
  export POCL_CACHE_DIR=/tmp/pocl && mkdir -p "$POCL_CACHE_DIR"
  cd "$(dirname "$0")"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
  (cd anchors && nvcc -O3 -arch=sm_90 -std=c++17 --extended-lambda cub_anchor.cu -o /tmp/cub_anchor >/dev/null 2>&1) &
  ./devices | tee "$OUT/devices.txt"
  phase="${2:-all}"   # all | tests | bench | compact | cold
  mkdir -p "$OUT/tests"
  # One binary at a time on one device (CLPIX_DEVICE=$2: the test harness then opens only that
  # device), its summary in $OUT/tests/dev$2/summary. 23 binaries at once on two GPUs failed to
  # create contexts (CL_OUT_OF_HOST_MEMORY), so each device runs its binaries one after another.
  one_test() {
    local t=$1 dev=$2 d="$OUT/tests/dev$2" t0=$EPOCHREALTIME rc
    mkdir -p "$d"
    CLPIX_DEVICE=$dev CLPIX_REQUIRE_OPENCL=1 timeout 400 ./"$t" > "$d/$t.txt" 2>&1
    rc=$?
    printf '%s rc=%s %ss %s\n' "$t" "$rc" "$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}")" \
      "$(grep -E '^test result' "$d/$t.txt" | tail -1)" >> "$d/summary"
    grep -E "panicked|FAILED|minimal failing" "$d/$t.txt" | head -5 >> "$d/summary"
    if [ $rc -ne 0 ] && ! grep -q "test result" "$d/$t.txt"; then
      # No summary: the process died. One test at a time names the one that kills it.
      CLPIX_DEVICE=$dev CLPIX_REQUIRE_OPENCL=1 timeout 120 ./"$t" --test-threads=1 > "$d/$t.serial.txt" 2>&1
      { echo "   serial rc=$?"; tail -5 "$d/$t.serial.txt"; } >> "$d/summary"
    fi
  }
  # The devices to test: every GPU (`run tests`), or every device, PoCL too (`run tests all`).
  if [ "${3:-}" = all ]; then pattern='^\[[0-9]+\]'; else pattern='^\[[0-9]+\].*\(GPU\)'; fi
  test_devices=$(grep -E "$pattern" "$OUT/devices.txt" | sed -E 's/^\[([0-9]+)\].*/\1/')
  if [ "$phase" = cold ]; then
    # First calls in fresh processes: everything cold (CUDA_CACHE_DISABLE=1), clpix's program
    # cache warm with the driver's cold, everything warm (examples/cold_start.rs).
    ./cold_start --device nvidia --rounds 1 2>&1 | tee "$OUT/cold.md"
    exit 0
  fi
  if [ "$phase" = compact ]; then
    # The compaction alone (`run compact [notests]`): its tests on every device, then CUB beside
    # the compactions, each kernel's time (CLPIX_PROFILE), the sorted ones with and without the
    # single-digit relocation, then CUB again. (A register cap cannot be tried: driver 580
    # ignores -cl-nv-maxrregcount=N and refuses -cl-nv-maxrregcount N.)
    [ "${3:-}" = notests ] || for dev in $test_devices; do for t in test-compact_* test-variants; do one_test "$t" "$dev"; done; cat "$OUT/tests/dev$dev/summary"; done 2>&1 | tee "$OUT/tests.txt"
    wait
    /tmp/cub_anchor 2>&1 | tee "$OUT/cub.txt"
    ops=compacted_image,compact,compacted_image_sorted,compact_sorted
    ./bench --size 8192 --reps 25 --backends opencl --device nvidia --ops $ops,exclusive_scan 2>&1 | grep "^|" | tee "$OUT/bench.md"
    for op in compacted_image compacted_image_sorted compact_sorted; do echo "CLPIX_PROFILE=1 $op (last call)"; CLPIX_PROFILE=1 ./bench --size 8192 --reps 2 --backends opencl --device nvidia --ops $op 2>&1 | grep "clpix profile" | tail -8; done 2>&1 | tee "$OUT/profile.txt"
    # The sorted compactions with and without the single-digit groups' relocation
    # (RADIX_SINGLE_DIGIT), twice over (random image first, then the constant one). With 0 the
    # host still launches radix_single, whose groups all return: the gap leaves out its launch
    # cost (0.007-0.009 ms a pass on the H200), which only a build without it shows.
    for round in 1 2; do for f in 1 0; do
      echo "RADIX_SINGLE_DIGIT=$f"
      ./bench --tune "build_options=-D RADIX_SINGLE_DIGIT=$f" --size 8192 --reps 25 --backends opencl --device nvidia --ops compacted_image_sorted,compact_sorted 2>&1 | grep "^| compact"
    done; done 2>&1 | tee "$OUT/radix.txt"
    for f in 1 0; do CLPIX_PROFILE=1 ./bench --tune "build_options=-D RADIX_SINGLE_DIGIT=$f" --size 8192 --reps 2 --backends opencl --device nvidia --ops compacted_image_sorted 2>&1 | grep "clpix profile" > "$OUT/profile_sorted_$f.txt"; done
    /tmp/cub_anchor 2>&1 | tee -a "$OUT/cub.txt"
    exit 0
  fi
  if [ "$phase" != bench ]; then
    # Each device's binaries in turn, the devices at once (the two GPUs of nvidia-h200-x2:
    # about 9 minutes cold, 5 with the driver's and clpix's program caches warm).
    for dev in $test_devices; do (for t in test-*; do one_test "$t" "$dev"; done) & done
    wait
    for dev in $test_devices; do echo "== device $dev"; cat "$OUT/tests/dev$dev/summary"; done
  fi 2>&1 | tee "$OUT/tests.txt"
  wait
  [ "$phase" = tests ] && exit 0
  /tmp/cub_anchor 2>&1 | tee "$OUT/cub.txt"
  PYTHONUNBUFFERED=1 python3 anchors/cupy_blur.py 2>&1 | tee "$OUT/cupy.txt"
  ./bench --size 8192 --reps 25 --backends opencl --device nvidia --out "$OUT/bench.md" > /dev/null 2>&1
  cat "$OUT/bench.md"
  /tmp/cub_anchor 2>&1 | tee -a "$OUT/cub.txt"
  # Variants (the bench's --tune NAME=VALUE, clpix::tuning::SETTINGS): the fused, radius-built
  # and generic GPU blurs.
  {
    radii=blur_w2,blur_w4,blur_w6,blur_w8,blur_w12,blur_w16,blur_w20,blur_w25
    for m in registers band radius two-pass; do echo "blur.kernel=$m"; ./bench --tune blur.kernel=$m --size 8192 --reps 15 --backends opencl --device nvidia --ops $radii; done
    # The radius-built passes on the tensor cores (NVIDIA's default from w = 6 to 64), one of them, or
    # neither (beyond w = 32 both or neither: the generic passes).
    for t in 1 horizontal vertical 0; do echo "blur.kernel=radius blur.tensor=$t"; ./bench --tune blur.kernel=radius --tune blur.tensor=$t --size 8192 --reps 15 --backends opencl --device nvidia --ops $radii,blur_w40,blur_w48,blur_w64; done
    # The band kernel's shapes (work-items, channels, pixels, rows a step) beyond its defaults.
    for w in 20 25; do
      for sh in 128,2,4,8 128,2,8,16 128,1,4,16 128,4,8,4; do echo "blur.band=$sh blur_w$w"; ./bench --tune blur.kernel=band --tune blur.band=$sh --size 8192 --reps 10 --backends opencl --device nvidia --ops blur_w$w 2>&1 | grep "^| blur"; done
    done
    for op in blur_w8 blur_w25; do echo "CLPIX_PROFILE=1 $op (last call)"; CLPIX_PROFILE=1 ./bench --size 8192 --reps 2 --backends opencl --device nvidia --ops $op 2>&1 | grep "clpix profile" | tail -2; done
    # The opt-in single-pass scan-order compaction (a decoupled look-back with fallback).
    echo "compact_relocate=lookback"; ./bench --tune compact_relocate=lookback --size 8192 --reps 25 --backends opencl --device nvidia --ops compacted_image,compact
    # Each kernel's time (CLPIX_PROFILE) of the compactions and the scan: which step costs what.
    for op in compacted_image compacted_image_sorted exclusive_scan; do echo "CLPIX_PROFILE=1 $op (last call)"; CLPIX_PROFILE=1 ./bench --size 8192 --reps 2 --backends opencl --device nvidia --ops $op 2>&1 | grep "clpix profile" | tail -10; done
  } 2>&1 | tee "$OUT/variants.txt"
  ;;
pack-dask)
  cd "$(dirname "$0")/.."
  mkdir -p .gpu/wheels .gpu/pybench
  pip="${PIP:-python3 -m pip}"   # the GPU machines run Python 3.12
  $pip wheel -q ./python -w .gpu/wheels --no-deps
  $pip download -q "dask[array]" distributed --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d .gpu/wheels
  $pip download -q dask-image --no-deps --only-binary=:all: -d .gpu/wheels
  rm -f .gpu/wheels/numpy-*
  cp python/bench/*.py .gpu/pybench/
  cp benches/gpu-sweep.sh .gpu/
  # The device tool carries 64 MiB at most: symbols stripped, everything is 72 MiB (93 before);
  # `run tests` needs only test-*, devices, cl/ and this script (leave out bench, demo,
  # cold_start and anchors/: 53 MiB), `run bench` the examples and anchors/.
  strip .gpu/test-* .gpu/bench .gpu/devices .gpu/demo .gpu/cold_start
  du -sh .gpu
  ;;
dask)
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
  cd "$(dirname "$0")"
  pip install -q --no-deps --no-index --target /tmp/pylib wheels/*.whl >/dev/null 2>&1
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  shift
  (cd pybench && PYTHONPATH=/tmp/pylib python3 multi_gpu.py "$@" 2>&1 | grep -v "distributed\.\|INFO\|WARNING")
  ;;
*) echo "usage: gpu-sweep.sh pack|run|pack-dask|dask"; exit 2 ;;
esac
