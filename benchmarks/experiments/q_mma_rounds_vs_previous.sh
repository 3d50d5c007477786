#!/usr/bin/env bash
# int4 on q_mma_rounds (NOTES.md sections 42-43) against the commit before it (526cf53), in one
# session: both builds run this checkout's benchmark code on int4-g128 (fp16 integer zeros) and
# int4-g128-float (bf16 float zeros, tinygemm alongside). SET picks the shapes:
#   final (default)  three sets: the rule's two regimes, their edges and shapes just outside;
#                    26 random shapes (seed 2911: 18 of 2048-8448 rows, 1024-8192 columns up to
#                    2^25 codes, 8 of 1024-32768 x 1024-16384 up to 2^27); the benchmark's 11
#   first            s29's first run (2048 rows up to 2^24 codes), with int4-g32 as a second set
#   to4096           the rule cut to 4096 rows: 14 random shapes of the regime (seed 29) and edges
#   past-one-an-sm   133 to 143 tiles at 2048 to 7000 columns
#   band             145 to 170 tiles at long rows
#   widen            s30: the one-step regime widened to bf16 and to float zeros up to 3 tiles an
#                    SM; its shapes and edges and 20 random shapes (seed 3030: 14 of 4700-8500 x
#                    1024-4096, 6 of 2048-16384 x 1024-8192) in bf16 integer and symmetric zeros,
#                    fp16 and bf16 float zeros
#   prefetch         s31: the first wave's prefetch of its first round, on both regimes' shapes
#                    and edges and 16 random shapes (seed 3132: 8 of 2048-4096 x 2048-8192 up to
#                    2^24 codes, 8 of 4752-8448 x 1024-4096) in fp16 and bf16 integer, fp16
#                    symmetric and bf16 float zeros; the benchmark's 11 shapes as a third set
#   unroll           s32: steps a round by tiles, 1024 columns up to 4096 rows, 1024 to 4096
#                    columns past them up to 297 tiles, 4609 columns where tiles just pass one
#                    an SM: the changed shapes and their edges, 24 random shapes (seed 3201:
#                    2048-4752 x 1024-5000, up to 2^24 codes to 4096 rows) in the prefetch set's
#                    four formats; the benchmark's 11 shapes as a third set
#   groups           s32: groups of 32 and 64 on q_mma_rounds: the regimes' shapes and edges, 16
#                    random shapes (seed 3202: 2048-8448 x 1024-4096) in fp16 integer and
#                    symmetric zeros g32 and bf16 float zeros g64 and g32 (tinygemm alongside); the
#                    benchmark's 11 shapes in those float formats and int4-g32 as a third set
#   g64              s32: groups of 64 in D's columns 0 and 2 (a scale a lane) in x held and
#                    rounds: their regimes and the benchmark's shapes in bf16 float zeros g64, fp16
#                    integer zeros g64 and bf16 float zeros g32 (unchanged: the control); 16 random
#                    shapes (seed 3203: 1024-16384 x 1024-16384 up to 2^27 codes) in both g64 formats
#   past-b           s34: q_mma_rounds past regime (b) (regime d): its shapes and edges at 3.2 to 6
#                    tiles an SM in fp16 integer, fp16 symmetric and bf16 float zeros g128, g64, g32;
#                    18 random shapes (seed 3401: 6336-12672 x 1024 or 2049-4096) in five formats
#   past-b-final     s34: the rule's final form (float zeros not on 17 steps, not g32 over 3072
#                    columns): the cases it returned and 16 random shapes (seed 3402)
#   long-rows        s34: x held's smaller-matrix form on long rows of few tiles (2^23 to 2^25
#                    codes under 2048 rows, or to 1.5 tiles an SM in groups of 128 up): its shapes and
#                    edges in six formats, 16 random shapes (seed 3404: 512-3168 x 4096-32768 in that
#                    band) in four; tinygemm's formats on 40 random shapes (seed 3403)
#   holes            s35: the int4 holes of NOTES.md section 53 (rounds under 2048 rows, x held's
#                    small form on long rows under 512 rows and from 2048 to 4095 past 2^24 codes,
#                    regime (a)'s long rows, regime (d) past 6 tiles an SM, huge matrices) in five
#                    formats, two sets of 24 shapes; 40 random shapes (seed 3501, 2^21 to 2^25
#                    codes) in four
#   holes-final      s35: the final form (groups of 32 to 1.1 tiles an SM from 2048 rows): the
#                    cases around that bound and the holes run's slowest, in groups of 32, 64 and
#                    128; tinygemm's formats on s34's 40 random shapes (seed 3403); 40 random
#                    shapes (seed 3502, 2^21 to 2^27 codes) in four formats
#   short-rows       s36: rows of 65 to 1023 columns on rounds to one wave (3 blocks an SM with
#                    float zeros, else 4) and x held's small form beyond to 6 tiles an SM (257-896
#                    columns), its larger form past 6; x held's small form at 9 to 16 steps past 2^25
#                    codes, rounds past its one wave (integer and symmetric zeros to 200 tiles an
#                    SM); regime (d) to 10 tiles an SM in every integer and symmetric format: the
#                    shapes and edges in four formats, the large ones and (d)'s in four more; 50
#                    random shapes (seed 3601: 40 of 16-20000 x 65-1023 log-uniform; seed 3602: 10
#                    of 20000-400000 x 1025-2048) in four
#   float-34         s37: float zeros on 3073 to 4096 columns from 3 to 4 tiles an SM on rounds at
#                    4 warps of 2 steps (regime h): its shapes and edges, 16 random shapes (seed 3701:
#                    6337-8448 x 3073-4096) in four float formats; the benchmark's 11 in int4-g128-float
#   wave-2           s37: regime (i), rows of 4097-8192 columns filling 90% of a wave of 8-warp blocks
#                    of 2 steps, and (h) down to 2177 columns: shapes and edges in six formats; 24
#                    random shapes (seed 3702: 16 of 3793-4224 x 4097-8192, 8 of 6337-8448 x
#                    2177-3072) in four; the benchmark's 11 in int4-g128 and int4-g32
#   int-long         s37: regime (j), integer and symmetric zeros on 4097-7168 columns from 2.75 to 4
#                    tiles an SM, with (h)'s lower edge: shapes and edges in six formats (bf16 float
#                    zeros as the control); 16 random shapes (seed 3703: 5809-8448 x 4097-7168) in
#                    four; the benchmark's 11 in its four formats
#   int-long-final   s37: (j)'s final form (longer rows need more tiles): int-long's returned cases and
#                    the new edges in five formats; 16 random shapes (seed 3704: 5809-8448 x
#                    4097-7168) in four; the benchmark's 11 in its four formats
#   g32-8192         s37: (j) for groups of 32 to 8192 columns from 3 tiles an SM: shapes and edges in
#                    int4-g32 and -g32-sym (g64 and g32 float zeros as controls); 12 random shapes
#                    (seed 3705: 6337-8448 x 7169-8192) in two; the benchmark's 11 in its four formats
#   split-few        s38: few tiles on long rows with K split on rounds (regime k: to half a tile an
#                    SM from 20 steps, to 0.75 from 40, to 3 x 2^23 codes), against 5d29356: the
#                    regime's shapes, edges and controls outside it in int4-g128, -g32, -g128-float
#                    and -g64; 24 random shapes (seed 3801: 16-1700 x 2048-32768 log-uniform, up to
#                    2^25 codes) in int4-g128, -g128-float, -g32 and -g32-sym; the benchmark's 11
#   split-few-8w     s38: the same with (k)'s 8-warp form (slices of 6 steps where 4 warps' slices
#                    of 4 pass 4 blocks an SM): its shapes and edges added to the first set
#   short-rows-final s36: the final form (under 128 columns only whole 16-column packs): the
#                    short-rows run's slowest cases and its random shapes under 128 columns in
#                    four formats; 40 random shapes (seed 3603: 16-20000 x 65-1023) in two; the
#                    benchmark's 11 shapes in int4-g32 (14336 x 4096 moves to regime (d))
#   rounds-warps     s36: regime (f) with a warp a step (1 or 2 warps a block) on rows of up to 256
#                    columns at any size and 4 warps on 257-512 columns to 8 tiles an SM, against
#                    c170324 (8 warps): 40 shapes of 64-1048576 x 80-512 in four formats; 40 random
#                    shapes (seed 3604: 16-300000 x 65-512 log-uniform, up to 2^28 codes) in four
#   rounds-float     s36: float zeros on two steps past 6 tiles an SM on rounds, one warp taking
#                    both steps in a round (to 32 tiles an SM), against 5e7d36a: 10 shapes in four
#                    float formats; 24 random shapes (seed 3605: 12700-67584 x 129-256) in two
#   git archive --format=tar -o .carry/old-src.tar 526cf53 -- . ':!benchmarks/results'   (on the host)
#   OUT=dir [SET=final] [SKIP_BUILD=1] bash benchmarks/experiments/q_mma_rounds_vs_previous.sh .carry/old-src.tar
set -eu
F="--formats int4-g128,int4-g128-float"
case "${SET:-final}" in
final)
  REG=2048x2048,4096x4096,3072x2560,2130x7000,2130x2048,2500x6500,2640x4000,2656x4000,4768x2048,8448x2048,8192x1024,6144x4096,7392x4096,8192x4096,4752x2048,8449x2048,5120x3072,8192x2048,16384x2048,5003x7392
  RAND=7960x1035,4171x7426,5300x2092,2488x4910,3893x2772,4190x2824,4685x5816,5655x1782,7184x4303,5824x5266,2388x4704,3681x4989,2818x2164,3157x2764,2329x4866,5154x2437,7429x1196,4458x3878,1198x2915,2158x1783,9263x7250,10965x1044,4042x3581,10816x7755,31898x2047,9816x5673
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $REG $F" BENCH_ARGS2="--quantized --shapes $RAND $F" BENCH_ARGS3="--quantized --shapes $SUITE $F" ;;
first)
  S=2048x2048,2048x4096,3072x2560,4096x2048,4096x4096,2048x8192,8192x2048,2051x4099,3000x5000,2600x6100,5120x3072,2304x2304,4096x4224,2047x4096,8192x1024,1536x8192,8192x8192,14336x4096,1000x4100,5003x7392
  export BENCH_ARGS="--quantized --shapes $S $F" BENCH_ARGS2="--quantized --shapes 4096x4096,2048x4096,3072x2560 --formats int4-g32" ;;
to4096)
  export BENCH_ARGS="--quantized --shapes 2120x4132,2935x2958,2239x2107,2691x3469,2081x2849,3173x2652,3671x3672,2088x7668,3940x3199,2883x2989,3123x4795,2404x2969,2667x4506,3403x2186,8192x2048,5120x3072,4096x4096,4097x4095 $F" ;;
past-one-an-sm)
  S=""; for m in 2113 2130 2160 2200 2240 2280; do for k in 2048 3000 4132 5500 7000; do S="$S,${m}x${k}"; done; done
  export BENCH_ARGS="--quantized --shapes ${S#,} $F" ;;
band)
  export BENCH_ARGS="--quantized --shapes 2350x4500,2400x6000,2450x5000,2500x6500,2560x6400,2300x3500,2500x3000,2700x6000,2048x2600 $F" ;;
widen)
  W="--formats int4-g128-bf16,int4-g128-sym-bf16,int4-g128-float-fp16,int4-g128-float"
  REG=4608x3584,4752x2048,4768x2048,5120x2048,5300x2092,6144x2730,6336x2048,6352x2048,7392x4096,8192x1024,8192x2048,8192x4096,8448x2048,8449x2048,8192x4097
  RAND=5632x2292,7788x3490,5042x1131,5992x2933,8023x2418,8267x2882,5960x2239,5859x2186,7404x2362,6996x1281,5339x1058,6262x2608,7251x2304,6006x2577,3261x2853,9418x3203,5107x3852,14182x3750,3034x4441,12990x2662
  export BENCH_ARGS="--quantized --shapes $REG $W" BENCH_ARGS2="--quantized --shapes $RAND $W" ;;
prefetch)
  P="--formats int4-g128,int4-g128-bf16,int4-g128-sym,int4-g128-float"
  REG=2048x2048,2048x4096,2048x8192,3072x2560,4042x3581,4096x2048,4096x4096,2130x7000,4752x2048,5120x2048,5300x2092,6144x2730,7392x4096,8023x2418,8192x1024,8192x4096,8449x2048
  RAND=3667x3668,2855x4669,4061x4042,3495x3606,3681x2064,2273x2509,2870x2168,3185x3305,8282x2131,8079x1071,5648x1109,8013x1360,8297x2272,7152x3033,8419x3770,6845x1218
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $REG $P" BENCH_ARGS2="--quantized --shapes $RAND $P" BENCH_ARGS3="--quantized --shapes $SUITE $F" ;;
unroll)
  P="--formats int4-g128,int4-g128-bf16,int4-g128-sym,int4-g128-float"
  REG=2128x4096,2400x4096,2560x3072,2640x4000,2700x3000,2800x5000,3000x5000,3072x2560,3072x4096,2150x4400,2300x4600,2200x5000,2500x1024,3000x1500,3500x1800,4096x1024,4096x2047,2200x1536,3600x2600,4096x2048,4096x4096,3584x3584,2048x2048,2048x8192,4200x2560,4224x2048,4160x1800,4224x3584,4160x4096,4200x3300,4608x3584,4500x3500,4400x1024,4500x1536,4700x1200,4600x1900,4400x2000
  RAND=4578x3509,3085x2202,4196x4393,3015x4006,2522x2249,2054x3074,2148x3431,3803x2967,3642x2720,4508x4142,3655x2173,3804x1408,4676x3727,3154x3388,2448x1024,4130x1851,3264x2935,4346x3680,2748x1537,4492x1414,3375x2835,3629x1046,3216x1440,2075x3811
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $REG $P" BENCH_ARGS2="--quantized --shapes $RAND $P" BENCH_ARGS3="--quantized --shapes $SUITE $F" ;;
groups)
  G="--formats int4-g32,int4-g32-sym,int4-g64-float,int4-g32-float"
  REG=2048x2048,2048x4096,2048x8192,2048x4097,2560x3072,3072x2560,4096x2048,4096x4096,4224x3584,4500x1536,2400x4096,3000x1500,4096x1024,6144x4096,6336x2048,8192x2048,8192x1024,8448x2048,5300x2092,1900x4096
  RAND=4917x1790,5562x2417,7164x2616,6688x1206,8021x3153,6218x2457,2133x3673,6138x2586,3971x1145,8254x2246,3512x3520,6717x1121,8003x3352,5296x3780,7811x3971,4107x1337
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $REG $G" BENCH_ARGS2="--quantized --shapes $RAND $G" \
    BENCH_ARGS3="--quantized --shapes $SUITE --formats int4-g32,int4-g64-float,int4-g32-float" ;;
g64)
  G="--formats int4-g64-float,int4-g64,int4-g32-float"
  REG=2048x2048,2560x3072,3072x2560,4096x2048,4096x4096,2400x4096,4224x3584,6144x4096,6218x2457,8192x2048,8192x1024,14336x4096,4096x14336,8192x8192,28672x8192,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100,2048x8192
  RAND=4395x10780,9523x2684,6091x4877,11536x2990,9313x9974,6829x13498,6973x15772,2894x12341,4926x12642,6201x11715,6012x3849,1300x8416,11449x5394,4672x10995,4315x1232,8138x15765
  export BENCH_ARGS="--quantized --shapes $REG $G" BENCH_ARGS2="--quantized --shapes $RAND --formats int4-g64-float,int4-g64" ;;
past-b)
  REG=8450x1024,9000x1024,10560x1024,12672x1024,12688x1024,7000x1024,7600x1024,6750x2560,8450x2560,12672x2560,6750x3000,9500x3000,7600x3584,9500x3584,10560x3584,6750x4096,9500x4096,12672x4096,9500x1536,8192x2048,9500x2049
  RAND=11714x1024,8226x3474,9447x3525,10660x2389,11377x1024,9788x2690,9569x2050,7969x2831,8815x1024,8378x2056,9470x2099,8157x3632,12518x1024,10513x2293,7622x3828,7393x2752,11375x1024,7827x3775
  export BENCH_ARGS="--quantized --shapes $REG --formats int4-g128,int4-g128-float,int4-g64-float,int4-g32-float,int4-g128-sym" \
    BENCH_ARGS2="--quantized --shapes $RAND --formats int4-g128,int4-g128-float,int4-g64,int4-g32-float,int4-g128-bf16" ;;
past-b-final)
  REF=9500x2049,8378x2056,9569x2050,9470x2099,9500x2176,9500x2177,9447x3525,9500x3584,10560x3584,9500x4096,7000x1024,8192x1024
  RAND=10819x1024,11379x3274,8631x3320,6502x2207,7677x1024,8392x3963,9327x3133,8883x3776,7010x1024,6735x3218,11396x2402,7433x3416,10045x1024,11093x2567,9245x3583,6925x3907
  export BENCH_ARGS="--quantized --shapes $REF --formats int4-g128-float,int4-g64-float,int4-g32-float,int4-g64,int4-g128-bf16" \
    BENCH_ARGS2="--quantized --shapes $RAND --formats int4-g128,int4-g128-float,int4-g64-float,int4-g32-float,int4-g128-sym-bf16" ;;
long-rows)
  REG=2008x8704,1024x16384,1536x11008,1800x5000,1000x14336,640x28672,1200x8192,1900x16384,2047x8192,2048x11008,2632x6272,2944x6144,2048x16384,3200x6272,1000x4100,2047x16400,512x16384
  RAND=3073x4968,2238x8835,1044x28271,1354x11244,1970x14123,1432x8250,879x23902,1484x9797,1679x6684,1319x23041,1566x12758,648x15419,957x14516,969x13706,2544x7804,2359x6641
  TG=1066x6400,7596x8832,2632x6272,9535x1408,4154x4096,3269x1280,20930x1152,3396x12416,12777x2176,2920x1792,23848x1408,3070x1152,28338x1536,4859x3584,4229x10496,11472x3072,6599x3072,2944x6144,1346x9728,4177x7808,2008x8704,7085x1024,2046x1152,19069x2944,1657x3328,6096x1536,13312x4352,5325x2176,3178x2560,11747x3712,3737x1664,1835x9472,2496x1664,8437x7936,20015x4864,29959x1920,2221x5376,2242x8064,2450x2816,12813x5760
  export BENCH_ARGS="--quantized --shapes $REG --formats int4-g128,int4-g128-float,int4-g32-float,int4-g32,int4-g64-float,int4-g128-sym-bf16" \
    BENCH_ARGS2="--quantized --shapes $RAND --formats int4-g128,int4-g128-float,int4-g32,int4-g64-float" \
    BENCH_ARGS3="--quantized --shapes $TG --formats int4-g128-float,int4-g64-float" ;;
holes)
  H="--formats int4-g128,int4-g128-float,int4-g32,int4-g64-float,int4-g128-sym"
  SMALL=16x1024,100x1536,255x2048,512x3072,600x1024,1000x2048,1024x4096,1444x1280,1536x3072,2047x1000,2047x4096,811x2049,16x16384,100x65536,255x8704,400x28672,511x20000,300x6144,3x28672,512x8192,768x8192,1024x6144,1536x5000,512x14336
  LARGE=2048x16512,2300x20000,2600x14336,3000x12000,3500x10000,3976x14336,2600x28672,3500x8000,4000x6000,2048x8192,2112x7168,2100x5000,3000x5600,3500x4600,2048x6144,12838x2049,14000x2100,14784x2560,16896x4096,21120x2560,14784x1024,20000x3000,65536x16400,1048576x1280
  export BENCH_ARGS="--quantized --shapes $SMALL $H" BENCH_ARGS2="--quantized --shapes $LARGE $H" \
    BENCH_ARGS3="--quantized --random 40 --seed 3501 --max-mb 16 --formats int4-g128,int4-g128-float,int4-g32,int4-g64-float" ;;
holes-final)
  B=2048x8192,2304x7000,2600x6400,2632x6272,2944x6144,3200x6272,1536x5000,1024x6144,4000x6000,3800x4416
  export BENCH_ARGS="--quantized --shapes $B --formats int4-g32,int4-g32-float,int4-g128-float,int4-g64-float" \
    BENCH_ARGS2="--quantized --random 40 --seed 3403 --k-multiple 128 --formats int4-g128-float,int4-g64-float" \
    BENCH_ARGS3="--quantized --random 40 --seed 3502 --max-mb 64 --formats int4-g128,int4-g128-sym-bf16,int4-g32-float,int4-g64" ;;
short-rows)
  S=16x256,100x128,300x200,200x640,512x64,512x80,512x255,1500x96,1500x384,2000x80,2048x64,3000x128,3000x640,4000x80,4500x256,4500x896,6000x200,6719x129,8000x200,8000x512,8000x768,8448x1000,6000x1000,2077x1023,9462x384,9462x640,12672x384,12672x896,14000x384,14000x640,16896x384,16896x640
  L=20000x1700,32768x1152,65536x1280,131072x1536,262144x1280,280000x1536,400000x1280,300000x2048,1048576x1152,14336x4096,16384x3000,20000x2500,18000x3584,12838x2560,21000x2200
  R=34x905,34x138,919x630,1265x106,23x126,32x69,6451x269,905x338,22x514,11726x105,39x92,8156x482,2590x222,920x80,3033x741,8187x743,45x100,399x103,2827x107,83x289,34x578,4222x112,820x123,1467x150,44x198,3273x323,1136x85,1228x244,242x108,3581x232,761x610,4181x227,92x135,5097x213,49x112,129x201,2095x134,76x412,317x92,4146x848,37310x1370,88121x1833,107914x1989,43586x1114,120538x1952,105833x1736,234029x1253,343166x1949,100475x1365,154797x1439
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128,int4-g32,int4-g128-float,int4-g64-float" \
    BENCH_ARGS2="--quantized --shapes $L --formats int4-g128-bf16,int4-g64,int4-g32-sym,int4-g128-float" \
    BENCH_ARGS3="--quantized --shapes $R --formats int4-g128,int4-g32-float,int4-g128-sym-bf16,int4-g64" ;;
short-rows-final)
  S=32x69,39x92,45x100,399x103,2827x107,1265x106,1136x85,820x123,23x126,317x92,242x108,49x112,4222x112
  R=57x104,1605x469,2311x132,464x344,1267x145,1504x735,19x116,6928x421,360x93,4200x609,132x684,924x829,302x164,16097x142,1423x310,27x274,119x217,12403x422,192x179,391x103,26x98,4050x578,708x87,775x645,219x118,5419x233,511x324,131x896,289x168,322x172,6679x984,12940x238,3988x946,112x197,74x156,35x69,135x197,539x646,21x277,1779x84
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128,int4-g32-float,int4-g128-sym-bf16,int4-g64" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g128,int4-g128-float" \
    BENCH_ARGS3="--quantized --shapes $SUITE --formats int4-g32" ;;
rounds-warps)
  S=64x96,512x96,3000x96,6719x96,16384x96,100000x96,512x112,9462x128,33000x128,1048576x128,512x200,3000x200,6719x200,9462x200,16384x200,50000x200,200000x200,512x255,6719x255,16384x255,33000x256,3000x300,9462x300,16384x300,30000x300,512x384,3000x384,6719x384,9462x384,16896x384,20000x384,3000x512,9462x512,16896x512,20000x512,6719x640,9462x640,512x80,6000x80,16384x80
  R=140463x142,53x93,273x442,32115x75,27x261,50x506,86464x425,206290x79,2749x172,120x215,20x108,201986x102,28x167,2612x95,513x221,44x88,2621x174,16x132,25x403,129639x367,2924x139,39x137,17705x306,18x110,69366x90,465x154,9659x85,1649x353,3568x356,2616x85,5314x157,175x70,23x482,52x454,113225x139,104x301,350x468,55x82,83x292,4667x467
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128,int4-g32,int4-g128-float,int4-g64-float" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g128-sym-bf16,int4-g32-float,int4-g64,int4-g128-bf16" ;;
rounds-float)
  S=12000x200,12688x200,16384x200,16384x255,25000x129,33000x256,50000x200,50000x255,67584x256,67600x200
  R=17877x205,38050x221,15244x203,16874x241,52283x151,35214x178,59696x162,41293x189,28019x140,53038x202,17799x255,20784x171,37327x197,34764x181,16343x234,25016x186,42645x230,13621x174,34085x168,13073x239,34486x156,37384x183,36241x196,21018x157
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128-float,int4-g64-float,int4-g32-float,int4-g128-float-fp16" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g128-float,int4-g64-float" ;;
float-34)
  S=7600x3584,7600x4096,6500x3200,6500x3100,6800x3500,8000x3900,8400x4096,8448x4096,8449x4096,6337x3584,6336x3584,7000x3073,7000x3072,7600x4097
  R=8298x3275,6598x3896,6486x3735,7492x3195,6934x3792,7505x3265,7853x3627,6400x3132,8444x3086,7927x3782,6508x3466,8363x3403,8118x3571,6341x3980,8028x3808,7630x4004
  FL="--formats int4-g128-float,int4-g64-float,int4-g32-float,int4-g128-float-fp16"
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $S $FL" BENCH_ARGS2="--quantized --shapes $R $FL" \
    BENCH_ARGS3="--quantized --shapes $SUITE --formats int4-g128-float" ;;
wave-2)
  S=4000x6000,4100x7000,3900x8192,4150x5200,4096x6144,4200x8192,4000x7392,4224x8192,4225x8192,3808x6000,3792x6000,4100x4097,4100x8193,4000x7393,6500x2560,7600x3000,8000x2304,6500x2177,7000x2176,8448x3072,6337x2560
  R=4142x5248,3915x5482,4054x5711,3855x6198,4022x5161,3987x5175,4114x5046,3906x5571,4121x6057,4043x5982,4205x5176,3841x6058,4008x6009,4092x8015,4124x4426,4166x5397,8293x2475,6416x2265,7620x2345,7187x2237,8154x2521,8362x2466,6845x2536,7317x2369
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128,int4-g32,int4-g128-float,int4-g64-float,int4-g128-sym-bf16,int4-g64" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g128,int4-g128-float,int4-g32,int4-g64-float" \
    BENCH_ARGS3="--quantized --shapes $SUITE --formats int4-g128,int4-g32" ;;
int-long)
  S=7600x5000,8192x7000,7000x6000,6500x4500,7000x5500,8000x6500,6000x5000,5825x4097,5808x5000,8448x7168,8449x5000,7600x7169,6144x5120,8192x4097,6337x2560,6416x2265,6337x3584
  R=6148x5709,7193x7036,7636x4503,5822x6605,7100x4463,5858x4425,7778x4688,6149x5842,8085x6883,7174x4944,7121x5401,6052x5901,6898x5178,6477x4740,7673x5812,6197x4660
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128,int4-g32,int4-g64,int4-g32-sym,int4-g128-bf16,int4-g128-float" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g128,int4-g32,int4-g128-bf16,int4-g32-sym" \
    BENCH_ARGS3="--quantized --shapes $SUITE" ;;
int-long-final)
  S=5822x6605,6052x5901,6148x5709,6149x5842,7000x6000,7193x7036,7673x5812,7937x5633,7920x5633,6353x6145,6336x6145,6149x5632,6149x6144
  R=6674x5897,5820x6263,6374x6546,7411x6352,7989x4555,6085x5005,8230x6313,7402x4240,6038x6549,7194x5839,6979x4889,7862x4240,7302x6779,6679x5396,6696x5504,7498x6544
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128,int4-g32,int4-g64,int4-g32-sym,int4-g128-bf16" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g128,int4-g32,int4-g128-bf16,int4-g64" \
    BENCH_ARGS3="--quantized --shapes $SUITE" ;;
g32-8192)
  S=6600x8192,7000x8192,7392x8192,7800x8192,8192x8192,8448x8192,8449x8192,6337x8192,6336x8192,7600x7600,8000x7800,8192x8193
  R=6782x7365,7355x8114,6499x7658,7221x7226,6468x7410,8061x7221,8299x8032,6813x7421,6947x8112,6364x7906,7529x7748,8275x7967
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g32,int4-g32-sym,int4-g64,int4-g32-float" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g32,int4-g32-sym" \
    BENCH_ARGS3="--quantized --shapes $SUITE" ;;
split-few|split-few-8w)
  S=16x4096,128x2433,128x2432,300x4096,512x3072,768x11008,1000x4100,1000x2560,1024x8192,1056x4992,1057x4992,1057x4993,1200x3000,1584x5120,1585x5120,640x14336,300x28672,1000x25165,1000x25166,100x16384,3x28672,2000x4100,1536x4096
  R=48x6697,583x4743,178x2223,174x26699,647x12903,504x18504,1541x21563,747x5216,32x7685,432x7848,876x9081,332x5502,154x2905,1440x9228,351x15195,292x10879,543x2478,98x2730,21x4093,223x8092,895x4077,51x6037,1014x25968,269x23141
  [ "$SET" = split-few ] || S=$S,1024x4100,1022x4097,768x6144,720x6144,704x6144,512x8704
  SUITE=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
  export BENCH_ARGS="--quantized --shapes $S --formats int4-g128,int4-g32,int4-g128-float,int4-g64" \
    BENCH_ARGS2="--quantized --shapes $R --formats int4-g128,int4-g128-float,int4-g32,int4-g32-sym" \
    BENCH_ARGS3="--quantized --shapes $SUITE" ;;
*) echo "SET: final, first, to4096, past-one-an-sm, band, widen, prefetch, unroll, groups, g64, past-b, past-b-final, long-rows, holes, holes-final, short-rows, short-rows-final, rounds-warps, rounds-float, float-34, wave-2, int-long, int-long-final, g32-8192, split-few or split-few-8w" >&2; exit 2 ;;
esac
PREFIX="" BENCH_FROM_THIS=1 exec bash "$(dirname "$0")/bench_vs_previous.sh" "$@"
