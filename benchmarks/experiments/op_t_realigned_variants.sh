#!/usr/bin/env bash
# op T's realigned packs in several forms (NOTES 37), each built from this checkout with one
# patch applied ("-": none, the working tree as it is), side by side, then timed against
# element loads on the same shapes with the tuner's instrument (scripts/time_configs.py).
# After the .carry wheels:
#   OUT=dir PATCHES="- benchmarks/experiments/op-t-realigned-batched-broad.patch ..." \
#     bash benchmarks/experiments/op_t_realigned_variants.sh
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
builds=()
PIP="python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90"
i=0
for p in ${PATCHES:--}; do
  rm -rf /tmp/v$i /tmp/site-v$i /tmp/skb-v$i && mkdir -p /tmp/v$i && (cd "$R" && tar --exclude=./.carry --exclude=./.git --exclude=./build -cf - .) | tar -x -C /tmp/v$i
  [ "$p" = - ] || (cd /tmp/v$i && patch -s -p1 < "$R/$p") || { echo "patch $p failed"; exit 1; }
  $PIP --target /tmp/site-v$i -Cbuild-dir=/tmp/skb-v$i /tmp/v$i > /tmp/build-v$i.log 2>&1 &
  builds+=($!)
  i=$((i + 1))
done
# A failed build would leave its runs to whatever pygemv is installed: stop instead.
for b in "${!builds[@]}"; do wait "${builds[$b]}" || { tail -30 /tmp/build-v$b.log; exit 1; }; done
CASES=${CASES:-"97394:743:float32:t_splitm_twopass:16:16:X:4:0:32 5730:44609:bfloat16:t_columns:16:16:X:4:0:1 2455:18515:float16:t_splitm_twopass:16:16:X:4:0:2 12:2410074:bfloat16:t_columns:32:8:X:2:0:1"}
i=0
for p in ${PATCHES:--}; do
  echo "== $p"
  for c in $CASES; do
    IFS=: read -r m k dt cfg <<< "$c"
    (cd /tmp && PYTHONPATH=/tmp/site-v$i:${PYTHONPATH:-} python3 -P "$R/scripts/time_configs.py" --op T "$m" "$k" "$dt" \
      "${cfg//X/2}" "${cfg//X/0}" 2>&1 | grep -v dispatch)
  done
  i=$((i + 1))
done | tee "$OUT/op-t-realigned-variants.txt"
