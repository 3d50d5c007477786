#!/usr/bin/env bash
# q_mma_rounds' configs against the dispatch with the tuner's instrument (scripts/time_configs.py:
# checked first, cold L2, graph replay, medians), after installing pygemv (NOTES.md section 43):
#   PART=large      fp16 integer zeros past the first rule's rows (-q-mma-rounds-large-configs.txt)
#   PART=past4096   fp16 integer and bf16 float zeros, 4608-16384 rows (-q-mma-rounds-past-4096-rows-configs.txt)
#   PART=others     bf16 integer and fp16 float zeros there (-q-mma-rounds-bf16-int-fp16-float-configs.txt)
#   PART=symmetric  fp16 symmetric zeros: the dispatch of the build on PYTHONPATH alone; run once
#                   with the previous build first on PYTHONPATH (-q-mma-rounds-symmetric.txt)
#   OUT=dir PART=... bash benchmarks/experiments/q_mma_rounds_configs.sh
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
T="python3 -P $R/scripts/time_configs.py"
cd /tmp
case "${PART:-large}" in
large)
  C="q_mma_rounds:256:1:1:2:0:1 q_mma_rounds:256:1:1:1:0:1 q_mma_rounds:128:1:1:2:0:1 q_mma_rounds:128:1:1:1:0:1 q_mma_rounds:64:1:1:2:0:1"
  for s in "8192 8192" "14336 4096" "4096 14336" "28672 8192" "5003 7392" "8192 2048" "5120 3072"; do
    $T --weights 4,128,int $s float16 $C
  done 2>&1 | tee "$OUT/rounds-large.txt" ;;
past4096)
  C="q_mma_rounds:256:1:1:1:0:1 q_mma_rounds:128:1:1:1:0:1 q_mma_rounds:128:1:1:2:0:1 q_mma_rounds:256:1:1:2:0:1"
  for w in "4,128,int float16" "4,128,float bfloat16"; do
    set -- $w
    for s in "4608 3584" "5120 2048" "6144 2730" "8192 1024" "8192 2048" "8192 4096" "12288 2048" "16384 2048" \
             "11008 4096" "16384 4096" "7392 4096" "5003 7392"; do
      $T --weights $1 $s $2 $C
    done
  done 2>&1 | tee "$OUT/rounds-past-4096.txt" ;;
others)
  C="q_mma_rounds:256:1:1:1:0:1 q_mma_rounds:128:1:1:2:0:1 q_mma_rounds:256:1:1:2:0:1"
  for w in "4,128,int bfloat16" "4,128,float float16"; do
    set -- $w
    for s in "4608 3584" "5120 2048" "5300 2092" "6144 2730" "8192 1024" "8192 2048" "8192 4096" "7392 4096"; do
      $T --weights $1 $s $2 $C
    done
  done 2>&1 | tee "$OUT/rounds-bf16-int-fp16-float.txt" ;;
symmetric)
  for s in "6144 4096" "8192 2048" "5300 2092" "3072 2560" "7392 4096"; do
    $T --weights 4,128,symmetric $s float16
  done 2>&1 | tee -a "$OUT/symmetric.txt" ;;
*) echo "PART: large, past4096, others or symmetric" >&2; exit 2 ;;
esac
