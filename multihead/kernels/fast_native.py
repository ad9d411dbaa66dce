"""Build and call the fused C kernels, with pure-torch fallbacks: fast_decode.c (the decode
kernel) and softmax_block.c (fast_prefill's online-softmax step).

The kernel is compiled on first use with the system C compiler (cc -O3 -mavx2 -mfma -mf16c
-fopenmp) into a shared library cached under $MULTIHEAD_CACHE or ~/.cache/multihead, keyed by
a hash of the source and flags, and called through ctypes (no torch headers, so it builds in
about a second). Where it cannot be used - no compiler, a CPU without AVX2/FMA/F16C, not Linux
x86-64, or MULTIHEAD_NATIVE=0 - ``library()`` returns None and both kernels use their torch paths.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import torch
from torch import Tensor

from multihead.paths import cache_dir

SOURCES = [Path(__file__).with_name(name) for name in ("fast_decode.c", "softmax_block.c")]
HEADER = Path(__file__).with_name("simd_math.h")      # included by both; part of the build's hash
FLAGS = ["-O3", "-mavx2", "-mfma", "-mf16c", "-fopenmp", "-shared", "-fPIC", "-std=c99"]
DTYPE_CODES = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2}
MAX_ROWS, MAX_DIM = 64, 512         # the C kernel's compile-time limits (MAXR, MAXD)

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_tried = False
why_unavailable: str | None = None   # set when library() returns None


def _cpu_supported() -> bool:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return {"avx2", "fma", "f16c"} <= set(flags)


def _cache_dir() -> Path:
    return cache_dir("native")


def _build() -> ctypes.CDLL:
    src = b"".join(path.read_bytes() for path in SOURCES + [HEADER])
    tag = hashlib.sha256(src + " ".join(FLAGS).encode()).hexdigest()[:16]
    out = _cache_dir() / f"fast_decode_{tag}.so"
    if not out.exists():
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not cc:
            raise OSError("no C compiler (cc or gcc) on PATH")
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:     # build, then rename: atomic
            tmp_so = Path(tmp) / out.name
            try:
                subprocess.run([cc, *FLAGS, *map(str, SOURCES), "-o", str(tmp_so), "-lm"], check=True,
                               capture_output=True, text=True, timeout=120)
            except subprocess.CalledProcessError:
                # A compiler without OpenMP: the pragma is ignored and the kernel runs on one thread.
                subprocess.run([cc, *[f for f in FLAGS if f != "-fopenmp"], *map(str, SOURCES), "-o", str(tmp_so), "-lm"],
                               check=True, capture_output=True, text=True, timeout=120)
            os.replace(tmp_so, out)
    lib = ctypes.CDLL(str(out))
    f = lib.mh_decode
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    f.argtypes = [ptr, ptr, ptr, ctypes.c_int, i64, i64, i64, i64, ctypes.c_int, i64, i64, i64,
                  i64, i64, i64, i64, i64, i64, i64, ptr, ptr, ctypes.c_int]
    f.restype = ctypes.c_int
    g = lib.mh_softmax_block
    g.argtypes = [ptr, i64, i64, i64, ptr, ptr, ptr, ptr]
    g.restype = None
    return lib


def library() -> ctypes.CDLL | None:
    """The compiled kernel, building it once per process (and once per machine, cached)."""
    global _lib, _tried, why_unavailable
    if os.environ.get("MULTIHEAD_NATIVE", "1") == "0":
        why_unavailable = "disabled by MULTIHEAD_NATIVE=0"
        return None
    with _lock:
        if not _tried:
            _tried = True
            if not _cpu_supported():
                why_unavailable = "needs Linux x86-64 with AVX2, FMA and F16C"
            else:
                try:
                    _lib = _build()
                except (OSError, subprocess.SubprocessError) as err:
                    detail = getattr(err, "stderr", "") or ""
                    why_unavailable = f"build failed: {err} {detail}".strip()
        return _lib


def supported(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> bool:
    """Whether the C kernel handles this call (else fast_decode's torch path does)."""
    B, H, Tq, d = q.shape
    H_kv = k.shape[1]
    return (mask is None and q.device.type == "cpu" and k.dtype in DTYPE_CODES and v.dtype == k.dtype
            and k.stride(-1) == 1 and v.stride(-1) == 1 and d % 8 == 0 and v.shape[-1] % 8 == 0
            and d <= MAX_DIM and (H // H_kv) * Tq <= MAX_ROWS and library() is not None)


def decode(qs: Tensor, k: Tensor, v: Tensor, Tq: int, causal: bool, nsplit: int,
           out: Tensor, lse: Tensor) -> None:
    """Decode attention in the C kernel, written into ``out`` and ``lse``.

    qs   [B*H_kv, R, d] fp32 contiguous, scaled queries: the R = G*Tq rows of a KV head's group,
         ordered (g, t); row (g, t) sees keys j <= Tk - Tq + t if causal, else all Tk
    k, v [B, H_kv, Tk, d], [B, H_kv, Tk, d_v], fp32/bf16/fp16, last dim contiguous (any other strides)
    out  [B*H_kv*R, d_v] fp32 contiguous, lse [B*H_kv*R] fp32 contiguous (natural log; -inf and
         zeros for a row that sees no key). The keys are cut into ``nsplit`` ranges that run in
         parallel and are merged by log-sum-exp in C.
    """
    B, H_kv, Tk, d = k.shape
    NH, R, dv = qs.shape[0], qs.shape[1], v.shape[-1]
    rc = library().mh_decode(qs.data_ptr(), k.data_ptr(), v.data_ptr(), DTYPE_CODES[k.dtype],
                             NH, H_kv, R, Tq, int(causal), d, dv, Tk, k.stride(0), k.stride(1), k.stride(2),
                             v.stride(0), v.stride(1), v.stride(2), nsplit, out.data_ptr(), lse.data_ptr(),
                             torch.get_num_threads())
    if rc != 0:
        raise RuntimeError(f"fast_decode C kernel rejected the call (R={R}, Tq={Tq}, d={d}, d_v={dv}; code {rc})")


def softmax_block(s: Tensor, visible: Tensor | None, m: Tensor, l: Tensor, alpha: Tensor) -> None:
    """One online-softmax step on a score block, in place (see softmax_block.c).

    s        [rows, c] fp32, last dim contiguous: base-2 scores, overwritten by P = 2^(s - m')
    visible  [rows] int32 leading columns each row may see (causal), or None for all c
    m, l     [rows] fp32 contiguous: running max and sum, updated to m' and alpha * l + rowsum P
    alpha    [rows] fp32 contiguous: set to 2^(m - m'), the factor for the running P V sum
    """
    rows, c = s.shape
    library().mh_softmax_block(s.data_ptr(), rows, c, s.stride(0),
                               None if visible is None else visible.data_ptr(),
                               m.data_ptr(), l.data_ptr(), alpha.data_ptr())
