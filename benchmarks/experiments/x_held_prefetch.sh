# x_held prefetch/ring experiment (NOTES 34): builds this tree with x-held-prefetch.patch applied, times each mode.
# usage on the device (a scratch copy of the tree: the patch is applied in place):
#   OUT=dir [MODES="0 1,4 2,2 2,4 3,4 4 5 6 7 8"] [SHAPES_FP16=...] [SHAPES_BF16=...] bash benchmarks/experiments/x_held_prefetch.sh
set -e
grep -q GEMV_XHELD_PF libgemv/src/qmma.cu || patch -p1 < benchmarks/experiments/x-held-prefetch.patch
python3 -m pip install -q --no-index --no-deps --target /tmp/site .carry/*.whl; export PYTHONPATH=/tmp/site
T0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=/tmp/skb -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 . > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
R=$PWD; cd /tmp
for mode in ${MODES:-0 1,4 2,2 2,4 3,4}; do
  GEMV_XHELD_PF=$mode python3 -P $R/benchmarks/experiments/x_held_prefetch.py --format 4,128,int,float16 ${SHAPES_FP16:-4096x4096 8192x8192 128256x4096} >> $OUT/pf.jsonl 2>>$OUT/err.txt
  GEMV_XHELD_PF=$mode python3 -P $R/benchmarks/experiments/x_held_prefetch.py --format 4,128,float,bfloat16 ${SHAPES_BF16:-4096x4096 2560x1408} >> $OUT/pf.jsonl 2>>$OUT/err.txt
  echo "mode $mode done $(( $(date +%s) - T0 )) s"
done
python3 - <<'PY'
import json,os,collections
rows=[json.loads(l) for l in open(os.environ['OUT']+'/pf.jsonl')]
best=collections.defaultdict(dict)
for r in rows:
    if r['us'] is None: continue
    key=(r['format'],r['shape']); b=best[key].get(r['mode'])
    if b is None or r['us']<b[0]: best[key][r['mode']]=(r['us'],r['config'].split('(')[1][:60])
for key,d in best.items():
    print(key, ' '.join(f"{m}:{v[0]:.2f}" for m,v in d.items()))
bad=[r for r in rows if r['us'] is None]
print('not timed', len(bad), bad[:3])
PY
