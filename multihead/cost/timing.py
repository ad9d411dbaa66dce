"""GPU time of LLM inference: a prefill chunk, a decode step, and the serving metrics built on them.

No torch. One phase of a batch on a tensor-parallel group of ``tp`` GPUs costs

    t = max(compute, memory) + dequantization + L * t_layer + communication

- compute: FLOPs per GPU / (F * eta_f). Linear layers 2 FLOPs per active weight per token (MoE: the
  k routed experts a token uses); attention by its causal count, 4 * H * d * (query, key) pairs,
  the pairs a causal FlashAttention-class kernel computes (it skips tiles above the diagonal):
  T(T+1)/2 for a fresh prompt of T tokens, not the reference text's T^2 (its 4*T^2*D*L is kept
  beside as ``text_attention_flops``, labelled "the text's count").
- memory: bytes each GPU reads / (BW * eta_m): its share of the weights once per step (MoE: only
  the experts the step's tokens touch, E * (1 - (1 - k/E)^N) of E for N tokens routed uniformly),
  and the KV cache of every sequence.
- dequantization: weight-only int8/int4 kernels unpack every weight they read on the ALUs, which
  bytes alone do not show (gpt-fast's int8 reaches 1069 of 1397 GB/s); charged per weight element
  at a fitted rate per fp32 FLOP/s of the GPU. fp8 on a GPU with fp8 tensor cores runs natively.
- L * t_layer: a fixed cost per layer and forward (kernel launches, host work between them), which
  dominates small models at batch 1; it depends on the engine (a table by engine family). A request
  also pays ``request_overhead_s`` once before its first token.
- communication: 2 all-reduces per layer (after attention and after the MLP) of the activations,
  each latency(n) + 2(n-1)/n * bytes / link bandwidth (the ring algorithm's traffic per GPU);
  pipeline stages add a hand-off each and, for a batch of micro-batches, the bubble (p-1)/(m+p-1).

The free constants (eta_f, eta_m, t_layer, all-reduce latency, link efficiency, dequantization
rates) are fitted on part of a table of published measurements (``multihead gpu-time --fit``,
reports/gpu-time/) and read from catalog/gpu_time_fit.json.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from multihead import accounting as acc

CATALOG = Path(__file__).parent / "catalog"
KERNEL_CLASS = "causal FlashAttention-class kernel (masked tiles skipped: T(T+1)/2 query-key pairs)"


# -- inputs ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    """The counts time depends on. Parameters per layer; for MoE ``mlp_params`` is ONE routed expert."""
    name: str
    layers: int                 # L
    hidden: int                 # D
    heads: int                  # H
    kv_heads: int               # H_kv
    head_dim: int               # d
    attn_params: int            # per layer: Q, K, V, O projections
    mlp_params: int             # per layer: the dense MLP, or one routed expert
    lm_head_params: int         # V * D: read and multiplied every step, tied or not
    experts: int = 0            # routed experts per layer (0: dense)
    experts_per_token: int = 0  # k
    shared_mlp_params: int = 0  # per layer: MoE experts every token goes through
    windows: tuple = ()         # per-layer sliding window (None: full attention); () = all full

    def distinct_experts(self, tokens: float) -> float:
        """Expected experts a layer touches for ``tokens`` tokens, each routed to k of E uniformly."""
        if not self.experts:
            return 1.0
        return self.experts * (1.0 - (1.0 - self.experts_per_token / self.experts) ** tokens)

    def active_params(self) -> float:
        """Weights one token multiplies through: L * (attention + shared + k experts) + LM head."""
        mlp = self.mlp_params * (self.experts_per_token if self.experts else 1)
        return self.layers * (self.attn_params + self.shared_mlp_params + mlp) + self.lm_head_params

    def params_read(self, tokens: float) -> float:
        """Weights a forward over ``tokens`` tokens reads: every expert any of them is routed to."""
        mlp = self.mlp_params * self.distinct_experts(tokens)
        return self.layers * (self.attn_params + self.shared_mlp_params + mlp) + self.lm_head_params

    def layer_window(self, i: int) -> int | None:
        return self.windows[i] if self.windows else None


@dataclass(frozen=True)
class Gpu:
    name: str
    bandwidth: float            # B/s, datasheet
    matmul_flops: dict          # dtype -> dense FLOP/s, datasheet
    alu_flops: float            # fp32 (non-tensor) FLOP/s: the dequantization rate scales with it
    link: str                   # intra-node link name (interconnect.json)
    link_bandwidth: float       # B/s, one direction
    gpus_per_node: int = 8
    inter_node_bandwidth: float = 50e9

    def flops(self, dtype: str) -> float:
        return self.matmul_flops.get(dtype) or self.matmul_flops.get("fp16") or self.matmul_flops["bf16"]


ENGINES = ("vllm", "tensorrt-llm", "gpt-fast")


@dataclass(frozen=True)
class Constants:
    """The fitted constants (catalog/gpu_time_fit.json); see docs/gpu-time.md for each one's role.

    Fixed costs differ by engine (how much of a step is captured in one CUDA graph, how much host
    work sits between steps) and the all-reduce latency by link (NCCL over NVLink, RCCL over
    Infinity Fabric): those two are tables keyed by engine family and by link name.
    """
    flops_efficiency: float = 0.6
    bandwidth_efficiency: float = 0.8
    layer_overhead_s: dict = field(default_factory=lambda: {e: 10e-6 for e in ENGINES})
    request_overhead_s: float = 1e-3    # once per request, before its first token (admission, setup)
    allreduce_latency_s: dict = field(default_factory=lambda: {"default": 10e-6})
    allreduce_step_s: float = 5e-6      # per log2(n) step of the all-reduce
    link_efficiency: float = 0.8
    dequant: dict = field(default_factory=lambda: {"int8": 0.5, "int4": 0.3})   # weights per fp32 FLOP
    source: str = "defaults (no fit file)"

    def layer_overhead(self, engine: str) -> float:
        if engine not in self.layer_overhead_s:
            raise ValueError(f"engine: expected one of {sorted(self.layer_overhead_s)}, got {engine!r}")
        return self.layer_overhead_s[engine]

    def allreduce_latency(self, link: str) -> float:
        """The link's fitted latency, or the mean of the fitted ones for a link without measurements."""
        table = self.allreduce_latency_s
        if link in table:
            return table[link]
        known = [v for k, v in table.items() if k != "default"] or [table.get("default", 10e-6)]
        return sum(known) / len(known)


@dataclass(frozen=True)
class Setup:
    """A model on ``tp`` x ``pp`` GPUs with its storage formats."""
    shape: Shape
    gpu: Gpu
    constants: Constants
    tp: int = 1
    pp: int = 1
    weights: str = "bf16"       # bf16/fp16/fp8/int8/int4 or int4-g<group>
    kv: str = "bf16"
    act_bytes: int = 2          # activations travel in bf16/fp16
    engine: str = "vllm"        # engine family of the fixed costs (ENGINES)


@dataclass
class Phase:
    """One phase's time and its terms, in seconds; ``bound`` names the larger of compute and memory."""
    compute_s: float
    memory_s: float
    dequant_s: float
    overhead_s: float
    comm_s: float
    flops: float                # per GPU
    bytes: float                # per GPU
    total_s: float = 0.0
    bound: str = ""

    def __post_init__(self):
        self.bound = "compute" if self.compute_s >= self.memory_s else "memory"
        self.total_s = max(self.compute_s, self.memory_s) + self.dequant_s + self.overhead_s + self.comm_s


# -- precision ---------------------------------------------------------------------------------------
def weight_bytes_per_element(dtype: str) -> float:
    """Bytes per weight: the dtype's size, plus a bf16 scale and zero per group for int4-g<group>."""
    base, _, group = dtype.partition("-g")
    size = acc.dtype_bytes(base)
    if base == "int4":
        size += 4.0 / (int(group) if group else 128)     # AWQ/GPTQ default group 128
    return size


def matmul_dtype(setup: Setup) -> str:
    """fp8 weights on a GPU with fp8 tensor cores run fp8 matmuls; everything else runs in 16 bits."""
    return "fp8" if setup.weights == "fp8" and "fp8" in setup.gpu.matmul_flops else "fp16"


def dequant_kind(setup: Setup) -> str | None:
    """The weight-only kernel's format, if the weights are unpacked before a 16-bit matmul."""
    base = setup.weights.partition("-g")[0]
    if base in ("int8", "int4"):
        return base
    if base == "fp8" and "fp8" not in setup.gpu.matmul_flops:
        return "int8"                                      # fp8 weight-only (e.g. Marlin on A100)
    return None


# -- communication -----------------------------------------------------------------------------------
def link_bandwidth(setup: Setup) -> float:
    """One-direction B/s of the slowest link the tensor-parallel group crosses."""
    if setup.tp * setup.pp > setup.gpu.gpus_per_node and setup.tp > setup.gpu.gpus_per_node:
        return setup.gpu.inter_node_bandwidth
    return setup.gpu.link_bandwidth


def allreduce_seconds(nbytes: float, n: int, bandwidth: float, c: Constants, link: str = "default") -> float:
    """One all-reduce of ``nbytes`` over n GPUs: latency(n) + 2(n-1)/n * bytes / (link * efficiency).

    The latency grows with the log2(n) steps of the tree / recursive-doubling algorithms NCCL uses
    for small messages; the size term is the ring algorithm's traffic per GPU.
    """
    if n <= 1:
        return 0.0
    latency = c.allreduce_latency(link) + c.allreduce_step_s * math.log2(n)
    return latency + 2.0 * (n - 1) / n * nbytes / (bandwidth * c.link_efficiency)


def handoff_seconds(nbytes: float, bandwidth: float, c: Constants, link: str = "default") -> float:
    """A pipeline stage passing ``nbytes`` of activations to the next: one latency + size / link."""
    return c.allreduce_latency(link) + nbytes / (bandwidth * c.link_efficiency)


def pipeline_bubble_fraction(stages: int, microbatches: int) -> float:
    """Idle share of a pipeline of p stages fed m micro-batches (GPipe): (p-1) / (m+p-1)."""
    return (stages - 1) / (microbatches + stages - 1)


def tp_comm_seconds(setup: Setup, tokens: float) -> float:
    """2 all-reduces per layer of ``tokens`` activation rows of D, over the tensor-parallel group."""
    nbytes = tokens * setup.shape.hidden * setup.act_bytes
    return 2 * setup.shape.layers * allreduce_seconds(nbytes, setup.tp, link_bandwidth(setup), setup.constants,
                                                      setup.gpu.link)


# -- attention counts --------------------------------------------------------------------------------
def causal_pairs(new: int, past: int, window: int | None = None) -> int:
    """(query, key) pairs of ``new`` queries after ``past`` cached tokens under a causal mask,
    each query seeing at most ``window`` keys: sum over i of min(past + i + 1, window)."""
    if window is None or window >= past + new:
        return acc.causal_pairs(new, past + new)
    full_from = max(0, window - past)            # queries from this index on see exactly `window` keys
    growing = min(new, full_from)
    return growing * past + growing * (growing + 1) // 2 + (new - growing) * window


def attention_flops(shape: Shape, new: int, past: int) -> float:
    """All layers' attention FLOPs for one sequence: 4 * H * d * causal pairs (the kernel class above)."""
    per_pair = 4 * shape.heads * shape.head_dim
    return sum(per_pair * causal_pairs(new, past, shape.layer_window(i)) for i in range(shape.layers))


def text_attention_flops(shape: Shape, tokens: int) -> float:
    """The reference text's count, 4 * T^2 * D * L (every pair, no causal halving): "the text's count"."""
    return float(acc.model_attention_flops(tokens, shape.heads * shape.head_dim, shape.layers))


def kv_bytes_per_gpu(setup: Setup, context: int) -> float:
    """KV one sequence holds on one GPU at ``context`` tokens (KV heads split over TP, replicated when
    H_kv < tp); sliding layers hold at most their window."""
    s = setup.shape
    heads = math.ceil(s.kv_heads / setup.tp)
    tokens = sum(min(context, s.layer_window(i) or context) for i in range(s.layers))
    return 2 * heads * s.head_dim * tokens * acc.dtype_bytes(setup.kv)


# -- phases ------------------------------------------------------------------------------------------
def _phase(setup: Setup, *, tokens: float, attn_flops: float, kv_bytes: float, passes: int = 1) -> Phase:
    """One forward of ``tokens`` tokens through the whole model on one TP group (all pipeline stages
    in turn): the terms of the module docstring, per GPU."""
    s, g, c, n = setup.shape, setup.gpu, setup.constants, setup.tp
    linear = 2.0 * tokens * s.active_params() / n
    attention = attn_flops / n
    compute = linear / (g.flops(matmul_dtype(setup)) * c.flops_efficiency) \
        + attention / (g.flops("fp16") * c.flops_efficiency)
    weights = s.params_read(tokens) / n
    nbytes = weights * weight_bytes_per_element(setup.weights) + kv_bytes
    memory = nbytes / (g.bandwidth * c.bandwidth_efficiency)
    kind = dequant_kind(setup)
    dequant = weights / (c.dequant[kind] * g.alu_flops) if kind else 0.0
    comm = tp_comm_seconds(setup, tokens)
    if setup.pp > 1:
        comm += (setup.pp - 1) * handoff_seconds(tokens * s.hidden * setup.act_bytes, g.link_bandwidth, c, g.link)
    return Phase(compute_s=compute, memory_s=memory, dequant_s=dequant,
                 overhead_s=s.layers * c.layer_overhead(setup.engine), comm_s=comm, flops=linear + attention, bytes=nbytes)


def prefill(setup: Setup, tokens: int, *, batch: int = 1, past: int = 0) -> Phase:
    """A prefill chunk: ``batch`` sequences of ``tokens`` new tokens after ``past`` cached ones.

    Reads the weights (all experts once the chunk routes many tokens), writes the chunk's KV and
    reads the cached part; attention by the causal count. With pipeline stages this is the time of
    one request through all of them (no overlap for a single chunk); see ``pipelined_prefill``.
    """
    kv = batch * (kv_bytes_per_gpu(setup, past + tokens))
    return _phase(setup, tokens=batch * tokens, attn_flops=batch * attention_flops(setup.shape, tokens, past),
                  kv_bytes=kv)


def pipelined_prefill_seconds(setup: Setup, tokens: int, batch: int) -> float:
    """``batch`` prompts through p pipeline stages as ``batch`` micro-batches: the single-prompt time
    stretched by the bubble, (m + p - 1) stage slots of one prompt's stage time each."""
    one = prefill(setup, tokens).total_s
    if setup.pp == 1:
        return batch * one
    return one / setup.pp * (batch + setup.pp - 1)


def decode_step(setup: Setup, batch: int, context: int) -> Phase:
    """One decode step of ``batch`` sequences, each with ``context`` cached tokens.

    With p pipeline stages the batch runs as p micro-batches in flight; this is the latency of one
    micro-batch of ceil(batch / p) sequences through all stages, so a token of every sequence comes
    out once per returned time.
    """
    group = math.ceil(batch / setup.pp)
    attn = group * attention_flops(setup.shape, 1, context)
    return _phase(setup, tokens=group, attn_flops=attn, kv_bytes=group * kv_bytes_per_gpu(setup, context + 1))


def decode_tokens_per_s(setup: Setup, context: int = 0) -> float:
    """Batch-1 decode speed at ``context`` cached tokens: 1 / decode step."""
    return 1.0 / decode_step(setup, 1, context).total_s


# -- serving metrics ---------------------------------------------------------------------------------
@dataclass
class ServingPoint:
    """Times at ``concurrency`` requests in flight, each of ``input_len`` prompt and ``output_len`` new tokens."""
    concurrency: int
    ttft_s: float               # time to first token
    tpot_s: float               # time per output token after the first (= mean ITL)
    request_latency_s: float    # TTFT + (output_len - 1) * TPOT
    output_tokens_per_s: float  # aggregate, all requests
    decode_step_s: float        # one decode step of the whole batch (no prefill interleaved)
    prefill_s: float            # one prompt's prefill
    decode_bound: str

    def to_dict(self) -> dict:
        return asdict(self)


def serving_point(setup: Setup, concurrency: int, input_len: int, output_len: int,
                  mode: str = "serving") -> ServingPoint:
    """Steady state of ``concurrency`` requests.

    "serving" (continuous batching, vLLM/SGLang/TensorRT-LLM in-flight): each request's prompt is
    prefilled once and interrupts the others' decoding, so over one request's ``output_len`` steps
    the c - 1 others' prefills are interleaved: TPOT = step(c) + (c-1) * prefill / output_len. A new
    request waits for the running step: on average half a prefill with probability rho (the share of
    time spent in prefills) and half a decode step otherwise.
    "static" (one batch started together, offline benchmarks): one batched prefill, then decode.
    Decode steps are timed at the mean context input_len + output_len / 2.
    """
    if mode not in ("serving", "static"):
        raise ValueError(f"mode: expected 'serving' or 'static', got {mode!r}")
    c, steps = concurrency, max(output_len - 1, 0)
    step = decode_step(setup, c, input_len + output_len // 2)
    one = prefill(setup, input_len).total_s
    fixed = setup.constants.request_overhead_s
    if mode == "static":
        ttft = pipelined_prefill_seconds(setup, input_len, c) if setup.pp > 1 else prefill(setup, input_len, batch=c).total_s
        tpot = step.total_s
        ttft += fixed
        latency = ttft + steps * tpot
    else:
        tpot = step.total_s + (c - 1) * one / max(output_len, 1)
        busy = one + steps * tpot
        rho = min(1.0, c * one / busy) if c > 1 else 0.0
        ttft = fixed + one + (0.5 * (rho * one + (1 - rho) * step.total_s) if c > 1 else 0.0)
        latency = ttft + steps * tpot
    return ServingPoint(concurrency=c, ttft_s=ttft, tpot_s=tpot, request_latency_s=latency,
                        output_tokens_per_s=c * output_len / latency, decode_step_s=step.total_s,
                        prefill_s=one, decode_bound=step.bound)


def concurrency_grid(max_concurrency: int) -> list[int]:
    """1, 2, 4, ... up to and including ``max_concurrency``."""
    grid, c = [], 1
    while c < max_concurrency:
        grid.append(c)
        c *= 2
    return grid + [max_concurrency]


def serving_curve(setup: Setup, input_len: int, output_len: int, max_concurrency: int) -> list[ServingPoint]:
    """Serving points from concurrency 1 up to ``max_concurrency`` (the memory account's limit)."""
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency: expected >= 1, got {max_concurrency}")
    return [serving_point(setup, c, input_len, output_len) for c in concurrency_grid(max_concurrency)]


# -- catalogs ----------------------------------------------------------------------------------------
FIT_FILE = CATALOG / "gpu_time_fit.json"


def interconnect_catalog() -> dict:
    return json.loads((CATALOG / "interconnect.json").read_text())


def load_constants(path: Path | None = None) -> Constants:
    """The fitted constants; the defaults (labelled so) when no fit file exists."""
    path = Path(path) if path else FIT_FILE
    if not path.is_file():
        return Constants()
    data = json.loads(path.read_text())
    return Constants(**data["constants"], source=f"{path.name} ({data.get('command', 'fitted')})")


def make_gpu(name: str, entry: dict, overrides: dict | None = None) -> Gpu:
    """A Gpu from a GPU catalog entry (memory/bandwidth/matmul TFLOP/s as in catalog/gpus.json) and
    its interconnect; ``overrides`` may replace bandwidth_tbps (a measured or capped GPU)."""
    e = {**entry, **(overrides or {})}
    links = interconnect_catalog()
    wiring = links["gpus"].get(e.get("base", name), {})
    link = wiring.get("intra_node", links["default_intra_node"])
    tflops = e["matmul_tflops"]
    return Gpu(name=name, bandwidth=e["bandwidth_tbps"] * 1e12,
               matmul_flops={k: v * 1e12 for k, v in tflops.items() if k != "fp32"},
               alu_flops=tflops.get("fp32", tflops.get("fp16", 0) / 16) * 1e12,
               link=link, link_bandwidth=links["links"][link]["bandwidth_gbps"] * 1e9,
               gpus_per_node=wiring.get("gpus_per_node", 8),
               inter_node_bandwidth=links["links"][links["inter_node"]]["bandwidth_gbps"] * 1e9)


def shape_from_spec(spec, *, experts: int = 0, experts_per_token: int = 0) -> Shape:
    """A Shape from a ModelSpec (its parameter counts by part). MoE: ``mlp_per_layer`` of the spec is
    one expert's MLP; the router (D * E weights per layer) is left out as negligible."""
    counts = spec.param_counts()
    if counts is None:
        raise ValueError(f"model: {spec.name} lacks intermediate_size or vocab_size; "
                         "GPU time needs the parameter count by part")
    return Shape(name=spec.name, layers=spec.num_layers, hidden=spec.hidden_size, heads=spec.num_heads,
                 kv_heads=spec.num_kv_heads, head_dim=spec.head_dim,
                 attn_params=counts.attention_per_layer, mlp_params=counts.mlp_per_layer,
                 lm_head_params=spec.vocab_size * spec.hidden_size, experts=experts,
                 experts_per_token=experts_per_token, windows=tuple(spec.layer_windows()))
