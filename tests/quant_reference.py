"""Plain numpy references for quantized weights, written from the formats' descriptions
(docs/quantized.md, AutoGPTQ, AutoAWQ), independent of the library: a quantizer (round to
nearest, clamp, in fp32 from scales rounded to the storage type), the dequantization, our
packed layout, and packers and unpackers of GPTQ and AWQ checkpoints."""
from __future__ import annotations

import numpy as np

from pygemv._device import bfloat16_bits_to_float32, float32_to_bfloat16_bits

MODES = ("symmetric", "int", "float")
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)  # nibble i of an AWQ word holds column 8c + AWQ_ORDER[i]


def round_to(a, dtype: str) -> np.ndarray:
    """fp32 values rounded to fp16 or bf16 (nearest even), back as fp32."""
    a = np.asarray(a, dtype=np.float32)
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float32)
    return bfloat16_bits_to_float32(float32_to_bfloat16_bits(a)).reshape(a.shape)


def groups_of(k: int, group_size: int | None) -> int:
    return 1 if group_size is None else -(-k // group_size)


def quantize(W, bits: int, group_size: int | None, mode: str, dtype: str):
    """(codes uint8 [M, K], scales fp32 [M, G], zeros fp32 [M, G] or None) of W (fp32 values
    already in dtype), as gemv_quantize documents it."""
    W = np.asarray(W, dtype=np.float32)
    m, k = W.shape
    gs = k if group_size is None else group_size
    G = groups_of(k, group_size)
    maxq = np.float32(2**bits - 1)
    codes = np.zeros((m, k), np.uint8)
    S = np.zeros((m, G), np.float32)
    Z = np.zeros((m, G), np.float32)
    for g in range(G):
        blk = W[:, g * gs:(g + 1) * gs]
        lo, hi = blk.min(axis=1), blk.max(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            if mode == "symmetric":
                s = round_to(np.maximum(np.abs(lo), np.abs(hi)) / np.float32(2 ** (bits - 1) - 1), dtype)
                z = np.full(m, 2 ** (bits - 1), np.float32)
            elif mode == "int":
                lo, hi = np.minimum(lo, 0), np.maximum(hi, 0)
                s = round_to((hi - lo) / maxq, dtype)
                z = np.where(s == 0, 0, np.clip(np.rint(-lo / s), 0, maxq)).astype(np.float32)
            else:
                s = round_to((hi - lo) / maxq, dtype)
                z = round_to(lo, dtype)
            if mode == "float":
                q = np.rint((blk - z[:, None]) / s[:, None])
                q = np.where(s[:, None] == 0, 0, q)
            else:
                q = np.rint(blk / s[:, None]) + z[:, None]
                q = np.where(s[:, None] == 0, z[:, None], q)
        codes[:, g * gs:(g + 1) * gs] = np.clip(q, 0, maxq).astype(np.uint8)
        S[:, g], Z[:, g] = s, z
    return codes, S, (None if mode == "symmetric" else Z)


def dequantize(codes, S, Z, bits: int, group_size: int | None, mode: str) -> np.ndarray:
    """The exact fp32 values: (q - z) s, (q - 2^(bits-1)) s, or fma(q, s, z) (one rounding:
    computed in float64, where q s + z is exact, then rounded once)."""
    m, k = codes.shape
    gs = k if group_size is None else group_size
    g = np.arange(k) // gs
    q = codes.astype(np.float64)
    s = S[:, g].astype(np.float64)
    if mode == "symmetric":
        return ((q - 2 ** (bits - 1)) * s).astype(np.float32)
    z = Z[:, g].astype(np.float64)
    if mode == "int":
        return ((q - z) * s).astype(np.float32)
    return (q * s + z).astype(np.float32)


def pack_rows(codes, bits: int) -> np.ndarray:
    """Our packed layout: each row's codes in order, low bits first, in 32-bit words, the row
    padded with zero codes to whole 16-byte packs. Returns uint32 [M, words]."""
    m, k = codes.shape
    per = 32 // bits
    cols = -(-k // (128 // bits)) * (128 // bits)
    padded = np.zeros((m, cols), np.uint32)
    padded[:, :k] = codes
    words = np.zeros((m, cols // per), np.uint32)
    for j in range(per):
        words |= padded[:, j::per] << np.uint32(bits * j)
    return words


def unpack_rows(words, bits: int, k: int) -> np.ndarray:
    per = 32 // bits
    out = np.zeros((words.shape[0], words.shape[1] * per), np.uint8)
    for j in range(per):
        out[:, j::per] = (words >> np.uint32(bits * j)) & np.uint32(2**bits - 1)
    return out[:, :k]


# ---- GPTQ: qweight [K * bits / 32, M] packed along K; qzeros [G, M * bits / 32] along M ----

def gptq_pack(codes, zeros, bits: int, zero_offset: int = 1):
    """(qweight, qzeros) int32 of codes [M, K] and integer zeros [M, G], as AutoGPTQ stores
    them (v1: zero - 1 when zero_offset is 1)."""
    m, k = codes.shape
    per = 32 // bits
    q = codes.T.astype(np.uint32)  # [K, M]
    qweight = np.zeros((k // per, m), np.uint32)
    for j in range(per):
        qweight |= q[j::per] << np.uint32(bits * j)
    z = (zeros.T.astype(np.int64) - zero_offset).astype(np.uint32) & np.uint32(2**bits - 1)  # [G, M]
    qzeros = np.zeros((z.shape[0], m // per), np.uint32)
    for j in range(per):
        qzeros |= z[:, j::per] << np.uint32(bits * j)
    return qweight.view(np.int32), qzeros.view(np.int32)


def gptq_unpack(qweight, qzeros, bits: int, zero_offset: int = 1):
    """(codes [M, K] in qweight's row order, zeros [M, G]) of a GPTQ checkpoint."""
    per = 32 // bits
    w = qweight.view(np.uint32)
    k = w.shape[0] * per
    codes = np.zeros((k, w.shape[1]), np.uint8)
    for j in range(per):
        codes[j::per] = (w >> np.uint32(bits * j)) & np.uint32(2**bits - 1)
    z = qzeros.view(np.uint32)
    zeros = np.zeros((z.shape[0], z.shape[1] * per), np.int64)
    for j in range(per):
        zeros[:, j::per] = (z >> np.uint32(bits * j)) & np.uint32(2**bits - 1)
    return codes.T, (zeros + zero_offset).T


# ---- AWQ: qweight [K, M / 8], nibble i of word c holds column 8c + AWQ_ORDER[i] --------------

def awq_pack(codes, zeros):
    m, k = codes.shape
    def pack(a):  # a [rows, M] -> [rows, M / 8]
        out = np.zeros((a.shape[0], a.shape[1] // 8), np.uint32)
        for i, col in enumerate(AWQ_ORDER):
            out |= a[:, col::8].astype(np.uint32) << np.uint32(4 * i)
        return out.view(np.int32)
    return pack(codes.T), pack(zeros.T)


def awq_unpack(qweight, qzeros):
    def unpack(a):  # [rows, M / 8] -> [rows, M]: nibbles read in the order 0, 4, 1, 5, 2, 6, 3, 7
        a = a.view(np.uint32)
        out = np.zeros((a.shape[0], a.shape[1] * 8), np.int64)
        for i, col in enumerate(AWQ_ORDER):
            out[:, col::8] = (a >> np.uint32(4 * i)) & np.uint32(15)
        return out
    return unpack(qweight).T.astype(np.uint8), unpack(qzeros).T
