#!/usr/bin/env bash
# op T's 16-byte fp16/bf16 kernels take 40-44 registers (6 blocks of 256 an SM at most)
# and the heuristic launches about 4 blocks an SM: 47% occupancy, or 25% on tall-skinny
# shapes capped at 64 slices (op_t_profile.sh). Times the dispatcher's config and
# configs of more slices, first as built, then with the column kernels held to 2048
# threads an SM (__launch_bounds__ min blocks: 32 registers, 12-44 bytes spilled).
#   OUT=dir bash benchmarks/experiments/op_t_occupancy.sh   (rebuilds the package twice)
set -u
OUT=${OUT:-.}
T="python3 -P scripts/time_configs.py --op T"
S=t_splitm_twopass
shapes() {
  $T 4096 4096 float16 $S:8:32:1:4:0:8 $S:16:16:1:2:0:16 $S:16:16:1:2:0:32 $S:8:32:1:2:0:16 $S:16:32:1:2:0:8 $S:16:16:1:4:0:16
  $T 2048 2048 float16 $S:16:16:1:2:0:32 $S:16:16:1:2:0:64 $S:16:32:1:2:0:16
  $T 8192 8192 float16 $S:16:16:1:4:0:8 $S:16:16:1:2:0:16 $S:16:16:1:2:0:32
  $T 14336 4096 float16 $S:8:32:1:4:0:8 $S:16:16:1:2:0:16 $S:16:16:1:2:0:32
  $T 131072 128 float16 $S:8:64:1:4:0:64 $S:16:32:1:4:0:256 $S:16:32:1:2:0:256 $S:16:16:1:2:0:512 $S:8:32:1:2:0:512
  $T 65536 256 float16 $S:8:64:1:4:0:64 $S:16:16:1:4:0:256 $S:16:16:1:2:0:256 $S:16:32:1:2:0:128
  $T 1048576 16 float16 $S:2:128:1:4:0:512 $S:2:128:1:2:0:1024 $S:2:256:1:2:0:1024 $S:2:512:1:2:0:512
  $T 1048576 32 bfloat16 $S:4:64:1:4:0:512 $S:4:128:1:2:0:1024 $S:4:64:1:2:0:1024
  $T 4096 4096 bfloat16 $S:8:32:1:4:0:8 $S:16:16:1:2:0:16 $S:16:16:1:2:0:32
  $T 1024 1024 float16 $S:16:16:1:2:0:32 $S:16:16:1:2:0:64 $S:8:16:1:2:0:64
}
build() { python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 . > "$OUT/build-$1.log" 2>&1; }
F=libgemv/src/columns.cu
{
  echo "== as built"; build base && shapes
  cp $F /tmp/columns.cu.orig
  sed -i 's/__launch_bounds__(max_block_threads(UNROLL)) gemv_columns_kernel/__launch_bounds__(max_block_threads(UNROLL), 2048 \/ max_block_threads(UNROLL)) gemv_columns_kernel/' $F
  grep -q "2048 / max_block_threads" $F || echo "PATCH FAILED"
  echo "== min blocks"; build minblocks && shapes
  cp /tmp/columns.cu.orig $F
} 2>&1 | tee "$OUT/op-t-occupancy.txt"
