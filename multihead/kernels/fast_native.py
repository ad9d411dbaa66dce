"""Build and call the fused C kernels, with pure-torch fallbacks: fast_decode.c (the decode
kernel) and softmax_block.c (fast_prefill's online-softmax step).

The kernel is compiled on first use with the system C compiler (cc -O3 -mavx2 -mfma -mf16c
-pthread) into a shared library cached in multihead.paths.cache_dir("native"), keyed by a hash
of the source and flags, and called through ctypes (no torch headers, so it builds in about a
second). The cached file is checked against the sha256 recorded when it was built before it is
loaded; a truncated or altered file is deleted and rebuilt (never mapped: a truncated ELF file
can kill the process with SIGBUS). Builds happen in a private folder renamed into place. Where it cannot be used - no compiler, a CPU without AVX2/FMA/F16C, not Linux
x86-64, or MULTIHEAD_NATIVE=0 - ``library()`` returns None and both kernels use their torch paths.

The inner loops are chosen by the CPU, once per process, when the library is loaded (``CPU_PATHS``,
best first where the CPU has them): ``avx512bf16`` (512-bit loops, bf16 decode scores by VDPBF16PS),
``avx512`` (512-bit loops, 16-bit inputs widened to fp32 in registers), ``avx2`` (8-lane loops with
FMA and F16C: every x86-64 CPU of the last decade). ``torch`` is no C kernel at all (the torch-op
paths). Every variant is compiled into the one library with its own target attribute, so it builds
on any x86-64 machine; only a variant the CPU runs is ever selected. The environment variable
``MULTIHEAD_CPU_PATH`` (one of those names) overrides the choice, so that one machine runs the tests
and benchmarks of every path it supports; a name it does not know, or a path this CPU cannot run, is
an error naming the variable. ``use_cpu_path`` switches it inside a process (tests).
AMX (Sapphire Rapids' tile units) is not a path: no machine this was built on had it.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import shutil
import struct
import subprocess
import tempfile
import threading
from pathlib import Path

import torch
from torch import Tensor

from multihead.paths import atomic_build, cache_dir

SOURCES = [Path(__file__).with_name(name) for name in ("fast_decode.c", "softmax_block.c", "mh_pool.c")]
HEADERS = [Path(__file__).with_name(name) for name in ("simd_math.h", "mh_pool.h", "decode_512.h")]   # part of the hash
# -pthread, not -fopenmp: the kernels run on mh_pool.c's threads, which survive fork() (libgomp's do not).
FLAGS = ["-O3", "-mavx2", "-mfma", "-mf16c", "-pthread", "-shared", "-fPIC", "-std=c11"]
DTYPE_CODES = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2}
MAX_ROWS, MAX_DIM = 64, 512         # the C kernel's compile-time limits (MAXR, MAXD)

# The C kernels' inner-loop variants, in fast_decode.c's ISA_* order, with the /proc/cpuinfo flags
# each needs; "torch" (no C kernel) is the fallback everywhere.
CPU_PATHS = ("avx2", "avx512", "avx512bf16")
_PATH_FLAGS = {"avx2": {"avx2", "fma", "f16c"},
               "avx512": {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq"},
               "avx512bf16": {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16"}}
PATH_ENV = "MULTIHEAD_CPU_PATH"
_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_tried = False
why_unavailable: str | None = None   # set when library() returns None


def _serial_after_fork() -> None:
    """In a fork()ed child, put torch on one intra-op thread.

    torch's OpenMP runtime (libgomp) cannot run a parallel region in a child forked after the
    parent ran one: the child waits forever for worker threads that exist only in the parent.
    With one thread torch never enters a parallel region, so the child runs (single-threaded)
    instead of hanging; raising the count again in the child brings the hang back. (The C
    kernels' own pool, mh_pool.c, starts fresh threads in a child and needs nothing.)
    """
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_serial_after_fork)


def _cpu_flags() -> set[str]:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return set()
    try:
        with open("/proc/cpuinfo") as f:
            return set(next(line for line in f if line.startswith("flags")).split())
    except (OSError, StopIteration):
        return set()


def _cpu_supported() -> bool:
    return _PATH_FLAGS["avx2"] <= _cpu_flags()


def cpu_paths() -> list[str]:
    """The C kernel variants this CPU runs (by /proc/cpuinfo), in CPU_PATHS order; [] where none."""
    flags = _cpu_flags()
    return [name for name in CPU_PATHS if _PATH_FLAGS[name] <= flags]


def requested_path() -> str | None:
    """MULTIHEAD_CPU_PATH, checked: None when unset or empty. A name that is not a path, or a
    path this CPU cannot run, raises ValueError naming the variable."""
    name = os.environ.get(PATH_ENV, "").strip().lower()
    if not name:
        return None
    if name not in (*CPU_PATHS, "torch"):
        raise ValueError(f"{PATH_ENV}={os.environ[PATH_ENV]!r}: not one of {', '.join((*CPU_PATHS, 'torch'))}")
    if name != "torch" and name not in cpu_paths():
        missing = sorted(_PATH_FLAGS[name] - _cpu_flags()) or ["Linux x86-64"]
        raise ValueError(f"{PATH_ENV}={name}: this CPU cannot run it (no {', '.join(missing)})")
    return name


def _cache_dir() -> Path:
    return cache_dir("native")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load_cached(so: Path) -> ctypes.CDLL | None:
    """The cached library if it is the file we built, else None (and the bad file is removed).

    The sidecar ``<so>.sha256`` holds the digest written at build time. It is checked BEFORE
    dlopen: mapping a truncated ELF file can kill the process with SIGBUS, and a file of garbage
    would otherwise fail to load on every run. A file without a sidecar (an older cache), with a
    wrong digest, or one dlopen refuses is deleted so that it is rebuilt.
    """
    sidecar = so.with_name(so.name + ".sha256")
    try:
        ok = so.is_file() and sidecar.read_text().strip() == _digest(so)
    except OSError:
        ok = False
    if ok:
        try:
            return ctypes.CDLL(str(so))
        except OSError:
            pass
    for path in (so, sidecar):
        with contextlib.suppress(OSError):
            path.unlink()
    return None


def _compile(out: Path) -> None:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise OSError("no C compiler (cc or gcc) on PATH")
    subprocess.run([cc, *FLAGS, *map(str, SOURCES), "-o", str(out), "-lm"], check=True,
                   capture_output=True, text=True, timeout=120)


def _build() -> ctypes.CDLL:
    src = b"".join(path.read_bytes() for path in SOURCES + HEADERS)
    tag = hashlib.sha256(src + " ".join(FLAGS).encode()).hexdigest()[:16]
    out = _cache_dir() / f"fast_decode_{tag}.so"
    lib = _load_cached(out)
    if lib is None:
        try:
            with atomic_build(out) as tmp_so:           # private folder, renamed into place
                _compile(tmp_so)
                # Loaded from the private copy before the rename: the mapping follows the file's
                # inode, so a concurrent build replacing `out` cannot pull it from under us.
                lib = ctypes.CDLL(str(tmp_so))
                tmp_so.with_name(tmp_so.name + ".sha256").write_text(_digest(tmp_so))
                os.replace(tmp_so.with_name(tmp_so.name + ".sha256"), out.with_name(out.name + ".sha256"))
        except PermissionError:
            # A read-only cache: build in a temporary folder for this process only.
            with tempfile.TemporaryDirectory() as tmp:
                _compile(Path(tmp) / out.name)
                lib = ctypes.CDLL(str(Path(tmp) / out.name))
    return _declare(lib)


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    f = lib.mh_decode
    ptr = ctypes.c_void_p
    f.argtypes = [ctypes.c_char_p, ctypes.c_int64]
    f.restype = ctypes.c_int
    g = lib.mh_softmax_block
    g.argtypes = [ptr, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ptr, ptr, ptr, ptr]
    g.restype = None
    h = lib.mh_set_isa
    h.argtypes = [ctypes.c_int]
    h.restype = ctypes.c_int
    lib.mh_get_isa.argtypes, lib.mh_get_isa.restype = [], ctypes.c_int
    lib.mh_set_bf16_pairs.argtypes, lib.mh_set_bf16_pairs.restype = [ctypes.c_int], ctypes.c_int
    return lib


def library() -> ctypes.CDLL | None:
    """The compiled kernel, building it once per process (and once per machine, cached)."""
    global _lib, _tried, why_unavailable
    if os.environ.get("MULTIHEAD_NATIVE", "1") == "0":
        why_unavailable = "disabled by MULTIHEAD_NATIVE=0"
        return None
    with _lock:
        if not _tried:
            requested = requested_path()           # raises before anything is marked as tried
            _tried = True
            if requested == "torch":
                why_unavailable = f"disabled by {PATH_ENV}=torch"
            elif not _cpu_supported():
                why_unavailable = "needs Linux x86-64 with AVX2, FMA and F16C"
            else:
                try:
                    _lib = _build()
                    best = _lib.mh_set_isa(-1 if requested is None else CPU_PATHS.index(requested))
                    if best < 0:                   # cpuinfo and the compiler's cpuid disagree
                        _lib.mh_set_isa(0)
                except (OSError, subprocess.SubprocessError) as err:
                    detail = getattr(err, "stderr", "") or ""
                    why_unavailable = f"build failed: {err} {detail}".strip()
        return _lib


def available() -> bool:
    """Whether the C kernels can be used (library() builds them on first call). torch.compile
    reads this once while tracing, as a constant, instead of tracing the build and its lock."""
    return library() is not None


# What torch.compiler.assume_constant_result(available) does (torch 2.13's
# torch/_dynamo/decorators.py sets this one attribute), without importing torch._dynamo: that
# import took 1.1 s of the 2.3 s that `import multihead.kernels` cost every process, and most
# processes never compile. tests/test_reliability.py's fullgraph torch.compile test holds it.
available._dynamo_marked_constant = True  # type: ignore[attr-defined]


def supported(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> bool:
    """Whether the C kernel handles this call (else fast_decode's torch path does)."""
    B, H, Tq, d = q.shape
    H_kv = k.shape[1]
    return (mask is None and q.device.type == "cpu" and k.dtype in DTYPE_CODES and v.dtype == k.dtype
            and q.dtype == k.dtype and k.stride(-1) == 1 and v.stride(-1) == 1 and d % 8 == 0 and v.shape[-1] % 8 == 0
            and d <= MAX_DIM and (H // H_kv) * Tq <= MAX_ROWS and available())


# mh_decode's arguments (fast_decode.c, enum A_*) packed as one array: 20 integers, the 5 data
# pointers (q, k, v, out, lse or 0) and the scale as a double. Packing takes 0.35 us; building a
# ctypes array took 3 us, and 8 separate ctypes arguments ~1 us of a 12 us call.
pack_decode = struct.Struct("=25qd").pack
DECODE_ARGS = 26


def run_decode(args: bytes, q: Tensor, v: Tensor) -> None:
    """mh_decode on packed arguments (``pack_decode``); q and v only name the call in an error."""
    # _lib directly: the caller's supported() or remembered plan loaded it.
    rc = (_lib or library()).mh_decode(args, DECODE_ARGS)
    if rc != 0:
        raise RuntimeError(f"fast_decode C kernel rejected the call (q {tuple(q.shape)}, "
                           f"v {tuple(v.shape)}; code {rc})")


def decode(shape: tuple, Tk: int, q: Tensor, k: Tensor, v: Tensor, scale: float, nsplit: int, nthreads: int,
           out: Tensor, lse: Tensor | None) -> None:
    """Decode attention in the C kernel, written into ``out`` and ``lse`` (None: not computed).

    shape (dtype code, B, H_kv, G, Tq, causal, d, d_v): H = H_kv * G query heads, head h reads KV
         head h // G; query t sees keys j <= Tk - Tq + t if causal, else all Tk.
    q    [B, H, Tq, d], k [B, H_kv, Tk, d], v [B, H_kv, Tk, d_v]: the dtype of the code, last dim
         contiguous, any other strides (a KV-cache view is read in place).
    out  [B, H, Tq, d_v] fp32 contiguous, lse [B, H, Tq] fp32 contiguous (natural log; -inf and
         zeros for a row that sees no key). q is scaled by ``scale`` in fp32 inside the kernel;
         the keys are cut into ``nsplit`` ranges that run on ``nthreads`` threads and are merged
         by log-sum-exp in C.
    """
    qs, ks, vs = q.stride(), k.stride(), v.stride()
    run_decode(pack_decode(*shape, Tk, qs[0], qs[1], qs[2], ks[0], ks[1], ks[2], vs[0], vs[1], vs[2],
                           nsplit, nthreads, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                           0 if lse is None else lse.data_ptr(), scale), q, v)


def cpu_path() -> str:
    """The path the kernels run on now: one of CPU_PATHS, or "torch" (no C kernel)."""
    lib = library()
    return "torch" if lib is None else CPU_PATHS[lib.mh_get_isa()]


def describe() -> dict:
    """What `multihead bench` and the tests name: the path in use, the ones this CPU has, the
    override, and torch's own SIMD level (ATen's kernels; MKL and oneDNN choose theirs)."""
    return {"cpu_path": cpu_path(), "cpu_paths": cpu_paths(), PATH_ENV: os.environ.get(PATH_ENV),
            "aten_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            **{name: os.environ[name] for name in ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS",
                                                   "ONEDNN_MAX_CPU_ISA") if name in os.environ}}


@contextlib.contextmanager
def use_cpu_path(name: str):
    """Run the C kernels on variant ``name`` (one of cpu_paths()) inside the block, then the
    previous one (tests run every path a CPU has against one oracle)."""
    lib = library()
    if lib is None or name not in cpu_paths():
        raise ValueError(f"cpu path {name!r}: this CPU runs {cpu_paths() or 'none'}")
    before = lib.mh_get_isa()
    if lib.mh_set_isa(CPU_PATHS.index(name)) < 0:
        raise ValueError(f"cpu path {name!r}: refused by the kernel's cpuid check")
    try:
        yield
    finally:
        lib.mh_set_isa(before)


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
