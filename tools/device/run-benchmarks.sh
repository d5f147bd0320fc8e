#!/usr/bin/env bash
# On a 16-core GPU machine without a toolchain (see pack.sh): unpacks .dev/ and runs, each
# step bounded, writing its output to $OUT (default out/device):
#   1. gpu_benchmark.py   (make bench-gpu): the model on the CPU and the GPU, bulk, agreement
#   2. serve_gpu_benchmark.py: serve --accelerator gpu against cpu at 1 and 64 connections
#   3. decode_benchmark.py (make bench-decode) at 1, 4, 8 and 16 workers
# Python there must have numpy and Pillow; ai-edge-litert comes from .dev/litert.tar.xz.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out/device}
mkdir -p "$out" /tmp/nr /tmp/site /tmp/wrk
cd "$root"
tar -xJf .dev/nr.tar.xz -C /tmp/nr && tar -xJf .dev/litert.tar.xz -C /tmp/site || exit 1
mkdir -p Models && cp -n /tmp/nr/models/*.tflite Models/
for deb in .dev/debs/*.deb; do
  [ -n "${SKIP_DEBS:-}" ] && break  # a rehearsal here: this machine's own Vulkan and wrk
  case $deb in
    *wrk_*|*luajit*) dpkg -x "$deb" /tmp/wrk ;;
    *) dpkg -x "$deb" / ;;
  esac
done
[ -z "${SKIP_DEBS:-}" ] && ldconfig
export PATH=/tmp/wrk/usr/bin:$PATH PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/tmp/nr/lib:/tmp/wrk/usr/lib/x86_64-linux-gnu
export NETRUNNER_LITERT_LIBRARY=/tmp/site/ai_edge_litert/libLiteRt.so NETRUNNER_CACHE_DIR=/tmp/nr-cache
export XDG_RUNTIME_DIR=/tmp
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f $nvidia_icd ] && export VK_DRIVER_FILES=$nvidia_icd
nr=/tmp/nr/bin/netrunner
{
  date -u; nproc; nvidia-smi -L 2>&1; python3 -c 'import PIL, numpy; print("Pillow", PIL.__version__, "numpy", numpy.__version__)'
  $nr --version; wrk --version 2>&1 | head -1
  $nr classify Tests/Fixtures/Photos/test/coffee.jpg --accelerator gpu 2>&1 | head -3
} 2>&1 | tee "$out/00-setup.log"
step() {
  local name=$1 limit=$2; shift 2
  echo "== $name (at most ${limit}s): $*"
  local start=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.log"
  echo "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - start))s" | tee -a "$out/$name.log"
}
step 01-gpu ${GPU_LIMIT:-150} python3 Benchmarks/gpu_benchmark.py --netrunner $nr --json "$out/gpu.json"
step 02-serve-gpu ${SERVE_LIMIT:-120} python3 Benchmarks/serve_gpu_benchmark.py --netrunner $nr \
  --seconds ${SERVE_SECONDS:-8} --connections 1,64 --json "$out/serve-gpu.json"
step 03-decode ${DECODE_LIMIT:-300} python3 Benchmarks/decode_benchmark.py --netrunner $nr \
  --workers ${DECODE_WORKERS:-1,4,8,16} --rounds ${DECODE_ROUNDS:-1} --count ${DECODE_COUNT:-96} --fidelity-count 0 --json "$out/decode.json"
