"""The fast prefill backend: blocked online softmax sized for GEMM throughput on a CPU.

Prefill (many queries) is bound by matmul throughput, so the work is cut into few, large,
GEMM-shaped pieces and the softmax's elementwise passes are done in place on a score block that
stays in the last-level cache:

- GQA groups are batched: the G query heads of a KV head and a block of BLOCK_Q queries form the
  R = G * BLOCK_Q rows of one matmul against that KV head's key block, so every score block is
  one bmm over a range of KV heads, [nh, R, d] x [nh, d, BLOCK_K], M = R large enough for MKL to
  run near its peak, and K/V are never repeated.
- Threads: the (KV-head range, query block) tiles are dealt to one Python worker per torch
  thread, each running single-threaded torch ops (torch ops release the GIL). A thread-parallel
  torch op per step would mean a fork/join per op, which on a shared machine is where the time
  went (see the comment in attention()).
- Causal: key blocks entirely above the diagonal are skipped; only blocks that straddle it are
  masked (about half the pairs are computed, as the causal FLOP count 2*B*H*T^2*d assumes). For
  MHA the diagonal block is cut into stairs of rows, each stopping at its own last key.
- Each worker reuses one workspace (score block, the tile's q and softmax state) for all its
  tiles, and writes acc / l straight into the output.
- Online softmax (running max m, sum l, unnormalized accumulator acc), updated in place:

      m' = max(m, rowmax S)    P = exp(S - m')    alpha = exp(m - m')   (computed in base 2)
      l' = alpha * l + rowsum P      acc' = alpha * acc + P V      out = acc / l, lse = m + log l

  S is overwritten by P, and acc is updated by one baddbmm_, so no score-sized temporary is
  allocated per block. In fp32 on an AVX2 CPU the step (causal mask of the diagonal block,
  rowmax, exp2, rowsum, alpha) is one fused pass per row in softmax_block.c, with the row in L1;
  in torch ops it is five passes over a block that lives in L3 (measured: 0.91x -> 1.0x SDPA's
  speed at T=4096, one thread). Elsewhere the same step runs in torch ops.
- bf16/fp16: K and V are upcast to fp32 once (each key block is reused by every query block, so
  converting per block would repeat the work T / BLOCK_Q times), queries per block. This CPU has
  no native bf16 matmul (~0.3 GFLOP/s), so fp32 GEMMs are the fast path for 16-bit inputs.

With autograd on, the call is handed to the differentiable tiled backend.
Extra memory: the fp32 copy of K/V for 16-bit inputs (2x their bytes), and per worker one score
block [nh, R, BLOCK_K] (8 MiB for MHA, 16 MiB for G = 4) and the tile's state [nh, R, d + d_v + 3]: linear in T.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import heapq
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator

import torch
from torch import Tensor

from multihead.kernels import fast_native, tiled
from multihead.kernels._common import compute_dtype, grouped_mask, last_level_cache_bytes, register_attention_op

# Queries per block (times G rows per KV head), keys per block and KV heads per tile, and the
# stairs the causal diagonal block is cut into (_key_blocks). Measured with two threads vs SDPA's
# flash kernel in one process (Intel Xeon, 2026-11-30, other processes paused), causal, d 128:
# - GQA 32/8, T=4096: 256x512 without stairs (the earlier default) 0.97x; with 4 stairs 0.97x;
#   512x1024 / 4 stairs 1.00-1.02x, 512x768 / 4 0.99x, 512x1024 / 8 0.97x, 1024x512 / 8 0.98x;
#   T=16384: 256x512 0.95x, 512x1024 / 4 0.995x. The score block is [2, 4*512, 1024] fp32 = 16 MiB.
# - MHA (G = 1) has a quarter of the rows per KV head, so its GEMMs are 4x shorter in M: it takes
#   twice the queries. 32/32, T=4096: 512x768 without stairs 0.93x, with 2 stairs 0.94x,
#   1024x768 / 4 0.96-0.97x, 1024x1024 / 4 0.98-0.99x, 1024x1536 / 4 0.99x, 1024x1024 / 8 0.96x;
#   T=16384: 512x768 0.95x, 1024x1024 / 4 0.985x; T=1024 / 2048 / 3000: 0.84 / 0.91 / 0.93x ->
#   0.90 / 0.97 / 0.98x; non-causal T=4096 0.91x -> 0.96x.
BLOCK_Q = 512
BLOCK_K = 1024
HEADS_PER_TILE = 2
MHA_BLOCK_Q = 1024
MHA_BLOCK_K = 1024
DIAG_STEPS = 4


def block_shape(G: int, workers: int = 2) -> tuple[int, int]:
    """(queries, keys) per block for G query heads per KV head, with ``workers`` threads.

    The sizes above were measured on a CPU with a 260 MiB last-level cache. Where the cache is
    smaller, the queries per block are halved until the score blocks of all workers
    ([HEADS_PER_TILE, G * queries, keys] fp32 each) take at most half of it: a score block is
    written, read and rewritten once per key block, and it must not go to memory in between."""
    bq, bk = (MHA_BLOCK_Q, MHA_BLOCK_K) if G == 1 else (BLOCK_Q, BLOCK_K)
    while bq > 128 and workers * HEADS_PER_TILE * G * bq * bk * 4 > last_level_cache_bytes() // 2:
        bq //= 2
    return bq, bk


LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
# Below this many (query, key) pairs a call runs in the caller's thread: workers cost ~0.1 ms.
PARALLEL_MIN_PAIRS = 1 << 22
# The busiest worker's share of a call's pairs, over an even share, at most (see _enough_tiles).
BALANCE = 1.15


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool, scale: float,
              block_q: int | None = None, block_k: int | None = None) -> tuple[Tensor, Tensor]:
    """See multihead.kernels for the shared kernel contract. Returns (out, lse).

    q [B, H, Tq, d], k [B, H_kv, Tk, d], v [B, H_kv, Tk, d_v] -> out [B, H, Tq, d_v] (compute
    dtype), lse [B, H, Tq].
    """
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, v, mask)):
        # Inference kernel (out= buffers, in-place updates): autograd takes the plain path.
        return tiled.attention(q, k, v, mask, is_causal=is_causal, scale=scale)
    if torch.compiler.is_compiling():       # one opaque op for torch.compile (registered below)
        return torch.ops.multihead.fast_prefill(q, k, v, mask, is_causal, scale)
    return _attention(q, k, v, mask, is_causal=is_causal, scale=scale, block_q=block_q, block_k=block_k)


def _attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool, scale: float,
               block_q: int | None = None, block_k: int | None = None) -> tuple[Tensor, Tensor]:
    """The kernel itself (no autograd)."""
    B, H, Tq, d = q.shape
    H_kv, Tk, d_v = k.shape[1], k.shape[2], v.shape[-1]
    ct = compute_dtype(q.dtype)
    threads = torch.get_num_threads()
    parallel = q.device.type == "cpu" and threads > 1 and B * H * Tq * Tk >= PARALLEL_MIN_PAIRS
    bq, bk = block_shape(H // H_kv, threads)
    nh = HEADS_PER_TILE if H_kv % HEADS_PER_TILE == 0 else 1
    if parallel:
        bq, nh = _enough_tiles(B, H_kv, Tq, Tk, is_causal, bq, nh, threads)
    bq, bk = block_q or bq, block_k or bk
    native = ct == torch.float32 and q.device.type == "cpu" and fast_native.available()
    p = _Problem(q, k if k.dtype == ct else k.to(ct), v if v.dtype == ct else v.to(ct),  # upcast once
                 grouped_mask(_base2_mask(mask, ct), B, H, H_kv, Tq, Tk), is_causal, scale, bq, bk, nh,
                 ct, native)
    out = torch.empty(B, H, Tq, d_v, dtype=ct, device=q.device)
    lse = torch.empty(B, H, Tq, dtype=ct, device=q.device)

    # Tiles of nh KV heads x one query block.
    tiles = [(b, h0, h0 + nh, q0, min(q0 + bq, Tq))
             for b in range(B) for q0 in range(0, Tq, bq) for h0 in range(0, H_kv, nh)]
    if q.device.type != "cpu":
        _run(p, tiles, out, lse)
    else:
        # One worker thread per torch thread, each running its tiles with single-threaded torch
        # ops: a thread-parallel op is a fork/join, and on a shared machine a join waits for a
        # descheduled thread (measured at load 4.5: 0.38x SDPA's speed, against 0.89x this way).
        # Small calls run in the caller, also single-threaded, for the same reason.
        workers = min(threads, len(tiles)) if parallel else 1
        with _serial_torch_here():
            if workers == 1:
                _run(p, tiles, out, lse)
            else:
                _run_parallel(p, tiles, out, lse, workers)
    return out, lse.to(torch.float64 if ct == torch.float64 else torch.float32)


def _enough_tiles(B: int, H_kv: int, Tq: int, Tk: int, causal: bool, bq: int, nh: int,
                  workers: int) -> tuple[int, int]:
    """(bq, nh) for which the workers finish within BALANCE of each other's share: first one KV
    head per tile, then halved query blocks (not below 128). At the default sizes one 512-query
    chunk of a windowed prefill with H_kv = 2 is a single tile, which left a core idle (measured:
    the window feature row 0.96 -> 1.29 s), and a causal 1024-query call splits 1:2."""
    while _makespan(B, H_kv, Tq, Tk, causal, bq, nh, workers) > BALANCE:
        if nh > 1:
            nh = 1
        elif bq > 128:
            bq //= 2
        else:
            break
    return bq, nh


def _makespan(B: int, H_kv: int, Tq: int, Tk: int, causal: bool, bq: int, nh: int, workers: int) -> float:
    """The busiest worker's pairs over an even share, tiles dealt costliest first (as
    _run_parallel does)."""
    per_block = [(min(q0 + bq, Tq) - q0) * _key_end(min(q0 + bq, Tq), Tq, Tk, causal)
                 for q0 in range(0, Tq, bq)]                  # pairs computed per query block
    loads = [0] * workers                                  # a min-heap: the least loaded first
    for c in sorted(per_block * (B * (H_kv // nh)), reverse=True):
        heapq.heapreplace(loads, loads[0] + c)
    return max(loads) * workers / max(1, B * (H_kv // nh) * sum(per_block))


def _key_end(q1: int, Tq: int, Tk: int, causal: bool) -> int:
    """Keys a block of queries ending at q1 computes: causal (bottom-right) stops at the last
    query's last visible key."""
    return max(0, min(Tk, q1 + Tk - Tq)) if causal else Tk


# One thread per core, each running single-threaded torch ops: torch's intra-op thread count is
# OpenMP's, and OpenMP keeps it per thread (the nthreads ICV), so it is set to 1 in the threads
# that run tiles and nowhere else. torch.set_num_threads would change it for the whole process
# (and was not safe with calls overlapping in two Python threads). Where torch has no libgomp
# (not Linux), the tiles run in the caller with torch's own thread count: correct, slower.
@functools.lru_cache(maxsize=None)
def _torch_lib(name: str) -> ctypes.CDLL | None:
    """One of torch's own shared libraries, already loaded with torch (never loads another copy),
    or None where this torch has no such file."""
    try:
        return ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", name),
                           mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    except OSError:
        return None


def _omp() -> ctypes.CDLL | None:
    """torch's own OpenMP runtime, or None."""
    return _torch_lib("libgomp.so.1")


# MKL (linked into libtorch_cpu) keeps its own thread count, set process-wide by
# torch.set_num_threads: with OpenMP at 1 in a worker, MKL's GEMMs still started a 2-thread team
# per worker (4 threads on 2 cores), and those team threads ended after the worker, holding MKL's
# allocator lock for a moment: a fork() then gave a child that hung in its first matmul (1 in
# ~300 forks under load, after _Exiting below). MKL_Set_Num_Threads_Local(1) makes the worker's
# GEMMs serial; it returns the thread's previous local value (0: follow the global one).
@functools.lru_cache(maxsize=None)
def _mkl_local():
    """MKL_Set_Num_Threads_Local of torch's MKL, or None (no libtorch_cpu here, or no MKL in it)."""
    fn = getattr(_torch_lib("libtorch_cpu.so"), "MKL_Set_Num_Threads_Local", None)
    if fn is not None:
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
    return fn


@contextlib.contextmanager
def _serial_torch_here() -> Iterator[None]:
    """torch ops of the calling thread on one OpenMP thread and serial MKL inside the block; other
    threads and the process's torch.get_num_threads() elsewhere are untouched."""
    omp, mkl = _omp(), _mkl_local()
    torch.get_num_threads()           # torch's lazy per-thread init first: it would reset the count
    before = omp.omp_get_max_threads() if omp is not None else None
    if omp is not None:
        omp.omp_set_num_threads(1)
    mkl_before = mkl(1) if mkl is not None else None
    try:
        yield
    finally:
        if mkl is not None:
            mkl(mkl_before)
        if omp is not None:
            omp.omp_set_num_threads(before)


def _run_parallel(p: "_Problem", tiles: list, out: Tensor, lse: Tensor, workers: int) -> None:
    """_run on ``workers`` threads. Tiles are handed out one at a time, costliest first (causal:
    the last query blocks see the most keys), so a worker that the machine descheduled for a
    while leaves the rest to the others instead of holding up the call at the end."""
    queue = iter(sorted(tiles, key=lambda t: -t[4]))
    lock = threading.Lock()

    def next_tile():
        with lock:
            return next(queue, None)

    # Grad and inference mode are thread-local: the workers take the caller's, or a call made
    # under torch.inference_mode() would write into its inference-mode `out` from outside it.
    inference, grad = torch.is_inference_mode_enabled(), torch.is_grad_enabled()

    def work(_):
        _Exiting.add(threading.get_native_id())
        with torch.inference_mode(inference), torch.set_grad_enabled(grad), _serial_torch_here():
            _run(p, iter(next_tile, None), out, lse)

    # A pool per call (not kept between calls): nothing of it survives into a fork()ed child.
    _Exiting.prune()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(work, range(workers)))


class _Exiting:
    """Native ids of the pool threads whose OS thread may still be ending.

    Python's join returns before a thread's C-level exit has run, and there MKL frees the thread's
    GEMM buffers under its allocator's lock. A fork() in that window copies the lock held: the
    child spins forever in its first matmul (mkl_serv_allocate; seen in 19 of 300 forks right
    after a call on this 2-core machine). So before any fork (os.register_at_fork) the parent waits
    until those threads are gone from /proc/self/task; it costs nothing when nobody forks. Where
    there is no /proc the wait is skipped (the race stays where it was)."""
    _ids: set[int] = set()
    _lock = threading.Lock()
    # An ended worker's exit takes microseconds. Workers of a call still running in another Python
    # thread make a fork wait this long and then go ahead: for a fork DURING a call (threads mid-
    # work), the race is not closed (as for any library forked while its threads run).
    WAIT_S = 2.0

    @classmethod
    def add(cls, tid: int) -> None:
        with cls._lock:
            cls._ids.add(tid)

    @classmethod
    def prune(cls) -> list[int]:
        """Forget the threads that are gone; returns those still listed."""
        with cls._lock:
            cls._ids = {t for t in cls._ids if os.path.exists(f"/proc/self/task/{t}")}
            return list(cls._ids)

    @classmethod
    def wait(cls) -> None:
        deadline = time.monotonic() + cls.WAIT_S
        while cls.prune() and time.monotonic() < deadline:
            time.sleep(1e-4)

    @classmethod
    def forget_in_child(cls) -> None:
        """In a forked child: none of the parent's threads exist, and the lock may have been copied
        while a worker of a concurrent call held it (in add)."""
        cls._lock, cls._ids = threading.Lock(), set()


os.register_at_fork(before=_Exiting.wait, after_in_child=_Exiting.forget_in_child)


def _base2_mask(mask: Tensor | None, ct: torch.dtype) -> Tensor | None:
    """A float mask in the scores' base-2 units (times log2 e), converted once per call.

    finfo.min (Hugging Face's padding value) times log2(e) overflows to -inf, which would drop
    keys that every other backend and SDPA still average over when a row has nothing else: the
    product is clamped to the lowest finite value instead. A true -inf stays -inf, NaN stays NaN.
    """
    if mask is None or mask.dtype == torch.bool:
        return mask
    lowest = torch.finfo(ct).min
    scaled = (mask * LOG2E).clamp_(min=lowest)          # NaN passes through clamp
    return scaled.masked_fill_(torch.isneginf(mask), float("-inf"))


@dataclass
class _Problem:
    """The inputs of one call, shared read-only by the worker threads."""
    q: Tensor                 # (B, H, Tq, d) in its own dtype
    k: Tensor                 # (B, H_kv, Tk, d) in the compute dtype
    v: Tensor                 # (B, H_kv, Tk, d_v) in the compute dtype
    mask5: Tensor | None      # (B, H_kv, G, Tq, Tk) view, or None; a float mask in base 2
    is_causal: bool
    scale: float
    bq: int
    bk: int
    nh: int                   # KV heads per tile
    ct: torch.dtype
    native: bool              # run the softmax step in softmax_block.c (fp32 on a CPU with AVX2)


def _run(p: _Problem, tiles, out: Tensor, lse: Tensor) -> None:
    """Compute the (b, kv-head range, query range) tiles that ``tiles`` yields into ``out`` and ``lse``."""
    (H, Tq, d), (H_kv, Tk, d_v) = p.q.shape[1:], p.v.shape[1:]
    # One workspace per worker, reused by all its tiles: a fresh 0.5 MiB tensor per tile is fresh
    # pages from the OS each time (page faults, zeroing): 11% of a 4k MHA call, measured.
    w = _Workspace(p.nh * (H // H_kv) * min(p.bq, Tq), max(1, min(p.bk, Tk)), d, d_v, p.ct, p.q.device)
    for tile in tiles:
        _tile(p, w, *tile, out, lse)


def _tile(p: _Problem, w: "_Workspace", b: int, h0: int, h1: int, q0: int, q1: int,
          out: Tensor, lse: Tensor) -> None:
    """Queries q0:q1 of query heads h0*G:h1*G (KV heads h0:h1) of batch row b."""
    G, d, d_v = p.q.shape[1] // p.k.shape[1], p.q.shape[-1], p.v.shape[-1]
    nh, n = h1 - h0, q1 - q0
    R = G * n
    # Scores in base 2: s2 = s * log2(e), so exp(s - m) = exp2(s2 - m2), and ATen's exp2 is
    # ~1.5x faster than its exp here (0.76 vs 1.2 ns/element); log2(e) rides on the scale.
    # Rows in (query, head of the group) order, so the rows from query t0 on are one range.
    qb = w.view("q", nh, R, d)                                            # (nh, R, d), rows (t, g)
    qb.view(nh, n, G, d).copy_(p.q[b, h0 * G:h1 * G, q0:q1].view(nh, G, n, d).transpose(1, 2))
    qb.mul_(p.scale * LOG2E)
    st = _State(qb, w.view("m", nh, R, 1).fill_(torch.finfo(p.ct).min), w.view("l", nh, R, 1).zero_(),
                w.view("alpha", nh, R, 1), w.view("acc", nh, R, d_v))
    blocks = _key_blocks(p, q0, q1)
    if not blocks:
        st.acc.zero_()
    for t0, k0, k1 in blocks:
        _block(p, w, st.rows(t0 * G), b, h0, h1, q0 + t0, q1, k0, k1)
    # out = acc / l straight into the output's rows; empty rows (l = 0) stay 0.
    l = st.l
    torch.div(st.acc.view(nh, n, G, d_v).transpose(1, 2), torch.where(l > 0, l, 1.0).view(nh, n, G, 1).transpose(1, 2),
              out=out[b, h0 * G:h1 * G, q0:q1].view(nh, G, n, d_v))
    lse[b, h0 * G:h1 * G, q0:q1].view(nh, G, n).copy_(           # -inf where l = 0
        st.m.add_(torch.log2(l)).mul_(LN2).view(nh, n, G).transpose(1, 2))


def _key_blocks(p: _Problem, q0: int, q1: int) -> list[tuple[int, int, int]]:
    """(t0, k0, k1): rows t0: of the tile (queries q0 + t0 : q1) against keys k0:k1, in order.

    Causal: keys after the tile's last visible one are skipped, and the diagonal square is cut
    into DIAG_STEPS stairs: the queries of stair i stop at their own last key, so the masked-out
    pairs computed are DIAG_STEPS small triangles instead of one n x n/2 triangle (n/T of the
    call's pairs: 25% at n = 1024, T = 4096; 6% in four stairs)."""
    Tq, Tk = p.q.shape[2], p.k.shape[2]
    offset = Tk - Tq                                       # query i sees keys j <= i + offset
    k_end = _key_end(q1, Tq, Tk, p.is_causal)
    n = q1 - q0
    rise = (-(-n // DIAG_STEPS) + 15) // 16 * 16                   # rows per stair
    if not (p.is_causal and rise < n and q0 + offset + rise > 0):
        return [(0, k0, k1) for k0, k1 in _chunks(0, k_end, p.bk)]
    blocks, k0 = [], 0
    for t0 in range(0, n, rise):                           # rows t0: see keys < q0 + offset + t0 + rise
        k1 = min(k_end, q0 + offset + t0 + rise)
        blocks += [(t0, a, b) for a, b in _chunks(k0, k1, p.bk)]
        k0 = max(k0, k1)
    return blocks


def _chunks(a: int, b: int, size: int) -> list[tuple[int, int]]:
    """[a, b) cut into equal pieces of at most ``size`` (multiples of 16 but the last): no
    short GEMM at the end."""
    if b <= a:
        return []
    pieces = -(-(b - a) // size)
    per = -(-(b - a) // pieces)                            # ceil
    step = min(size, (per + 15) // 16 * 16)
    return [(k0, min(k0 + step, b)) for k0 in range(a, b, step)]


def _block(p: _Problem, w: "_Workspace", st: "_State", b: int, h0: int, h1: int, q0: int, q1: int,
           k0: int, k1: int) -> None:
    """One key block k0:k1 for queries q0:q1 (the rows of ``st``): scores, softmax step, P V."""
    nh, R = st.qb.shape[:2]
    G, n, c = R // (q1 - q0), q1 - q0, k1 - k0
    offset = p.k.shape[2] - p.q.shape[2]
    s = w.S[:nh * R * c].view(nh, R, c)
    torch.bmm(st.qb, p.k[b, h0:h1, k0:k1].transpose(1, 2), out=s)        # (nh, R, c)
    diagonal = p.is_causal and k1 - 1 > q0 + offset                       # the block crosses it
    mb = None if p.mask5 is None else p.mask5[b, h0:h1, :, q0:q1, k0:k1]  # (nh, G, n, c)
    if p.native:                           # the causal part goes to the C step as row lengths
        if mb is not None:
            _mask_block(s.view(nh, n, G, c).transpose(1, 2), mb, q0, q1, k0, k1, False, offset)
        # Row (h, t, g) sees columns j < q0 + t + offset + 1 - k0 of the block.
        visible = w.ramp(n, G, nh, q0 + offset + 1 - k0) if diagonal else None     # (nh * R,)
        if st.m.is_contiguous():
            fast_native.softmax_block(s.view(nh * R, c), visible, st.m, st.l, st.alpha)
        else:                              # rows of a sub-tile: contiguous per head
            for h in range(nh):
                fast_native.softmax_block(s[h], None if visible is None else visible[h * R:(h + 1) * R],
                                          st.m[h], st.l[h], st.alpha[h])
    else:
        if mb is not None or diagonal:
            _mask_block(s.view(nh, n, G, c).transpose(1, 2), mb, q0, q1, k0, k1, p.is_causal, offset)
        _softmax_step(s, st.m, st.l, st.alpha, torch.finfo(p.ct).min)
    vb = p.v[b, h0:h1, k0:k1]                                             # (nh, c, d_v)
    if k0 == 0:                                                           # acc = P V: no zeroing
        torch.bmm(s, vb, out=st.acc)
    else:
        st.acc.mul_(st.alpha).baddbmm_(s, vb)                             # (nh, R, d_v)


@dataclass
class _State:
    """A tile's query rows and online-softmax state."""
    qb: Tensor                # (nh, R, d) scaled queries, rows (t, g)
    m: Tensor                 # (nh, R, 1) running max (base 2)
    l: Tensor                 # (nh, R, 1) running sum
    alpha: Tensor             # (nh, R, 1) the last step's rescale factor
    acc: Tensor               # (nh, R, d_v) unnormalized P V

    def rows(self, r0: int) -> "_State":
        """Rows r0: (from query r0 / G on)."""
        if r0 == 0:
            return self
        return _State(*(x[:, r0:] for x in (self.qb, self.m, self.l, self.alpha, self.acc)))


class _Workspace:
    """One worker's buffers, sized for its largest tile: the score block S and the tile's q,
    running max / sum / factor and accumulator, handed out as views of the tile's shape."""

    def __init__(self, rows: int, bk: int, d: int, d_v: int, ct: torch.dtype, dev: torch.device):
        self.S = torch.empty(rows * bk, dtype=ct, device=dev)
        self._flat = {name: torch.empty(rows * width, dtype=ct, device=dev)
                      for name, width in (("q", d), ("acc", d_v), ("m", 1), ("l", 1), ("alpha", 1))}
        self._ramps: dict[tuple[int, int], Tensor] = {}

    def view(self, name: str, nh: int, R: int, width: int) -> Tensor:
        return self._flat[name][:nh * R * width].view(nh, R, width)

    def ramp(self, n: int, G: int, nh: int, start: int) -> Tensor:
        """int32 [nh * n * G]: start + t for row (h, t, g), on the CPU by name (C reads it; a
        default device's tensor was read as NULL)."""
        key = (n, G, nh)
        if key not in self._ramps:
            self._ramps[key] = torch.arange(n, dtype=torch.int32, device="cpu").repeat_interleave(G).repeat(nh)
        return self._ramps[key] + start


def _softmax_step(s: Tensor, m: Tensor, l: Tensor, alpha: Tensor, lowest: float) -> None:
    """softmax_block.c's step in torch ops, same contract: P = 2^(s - m') in place of the base-2
    scores s (nh, R, c); m, l (nh, R, 1) updated; alpha set to 2^(m - m')."""
    m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))           # (nh, R, 1)
    m_new.clamp_(min=lowest)               # fully masked rows: exp(-inf - lowest) = 0, not NaN
    s.sub_(m_new).exp2_()                                             # P, in place of S
    torch.exp2(m - m_new, out=alpha)                                  # 0 at the first block
    l.mul_(alpha).add_(s.sum(dim=-1, keepdim=True))
    m.copy_(m_new)


def _mask_block(s4: Tensor, mb: Tensor | None, q0: int, q1: int, k0: int, k1: int,
                is_causal: bool, offset: int) -> None:
    """Set masked scores of one block in place. s4: (nh, G, n, c) view of the scores; mb: the
    block of the user mask, broadcastable to it, or None."""
    neg = float("-inf")
    if mb is not None:
        if mb.dtype == torch.bool:
            s4.masked_fill_(~mb, neg)
        else:
            s4.add_(mb)                              # already in base 2 (_base2_mask)
    if is_causal and k1 - 1 > q0 + offset:
        # Keys up to q0 + offset are visible to every query of the block: only the columns after
        # that (at most n of them) need the triangle, not the whole block (9% of the time before).
        j0 = max(k0, q0 + offset + 1)
        qi = torch.arange(q0, q1, device=s4.device).view(-1, 1)            # (n, 1)
        kj = torch.arange(j0, k1, device=s4.device).view(1, -1)            # (1, k1 - j0)
        s4[..., j0 - k0:].masked_fill_(kj > qi + offset, neg)              # broadcast over H_kv, G


# torch.compile sees the kernel as one custom op (kernels/_common.register_attention_op);
# eager calls skip its dispatch cost.
register_attention_op("fast_prefill", _attention)
