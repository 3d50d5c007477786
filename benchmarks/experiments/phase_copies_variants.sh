#!/usr/bin/env bash
# Phased rows with x's phase copies: three builds of the row kernels, timed on the same
# shapes. (a) edges loaded after the loop, blocks class-major (a class's rows together);
# (b) the same, classes interleaved (consecutive blocks take consecutive rows, as aligned
# rows do); (c) interleaved, one loop over every pack with the edge packs masked in it.
#   bash benchmarks/experiments/phase_copies_variants.sh
T="python3 -P scripts/time_configs.py"
S='s/Config\(variant=.([a-z_]+)., threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/'
for flags in "" "-DGEMV_EXP_INTERLEAVED" "-DGEMV_EXP_INTERLEAVED -DGEMV_EXP_ONE_LOOP"; do
  python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 \
    "-Ccmake.define.CMAKE_CUDA_FLAGS=$flags" . > /dev/null 2>&1 || { echo "build failed: $flags"; continue; }
  echo "== build: ${flags:-default}"
  {
  $T 8191 8191 float16 block_per_row:256:1:5:1:0:1 block_per_row:128:1:5:1:0:1 block_per_row:256:1:5:2:0:1 block_per_row:256:1:5:4:0:1
  $T 16384 8193 bfloat16 block_per_row:256:1:5:1:0:1 block_per_row:128:1:5:1:0:1 block_per_row:256:1:5:4:0:1
  $T 8191 8191 float32 block_per_row:256:1:5:1:0:1 block_per_row:256:1:5:4:0:1 block_per_row:512:1:5:1:0:1
  $T 16384 8193 float32 block_per_row:256:1:5:1:0:1 block_per_row:256:1:5:4:0:1
  } 2>&1 | sed -E "$S" | grep -v dispatch
done
