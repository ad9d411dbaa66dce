"""GPU time of LLM inference: a prefill chunk, a decode step, and the serving metrics built on them.

No torch. One phase of a batch on a tensor-parallel group of ``tp`` GPUs costs

    t = max(compute, memory) + dequantization + L * t_layer + communication

- compute: FLOPs per GPU / (F * eta_f). Linear layers 2 FLOPs per active weight per token (MoE: the
  k routed experts a token uses; the LM head once per sequence in a prefill, engines compute the
  last position's logits only); attention by its causal count (cost.spec_attention_flops), 4 * H * d * (query, key) pairs,
  the pairs a causal FlashAttention-class kernel computes (it skips tiles above the diagonal):
  T(T+1)/2 for a fresh prompt of T tokens, not the reference text's T^2 (its 4*T^2*D*L is kept
  beside as ``text_attention_flops``, labelled "the text's count").
- memory: bytes each GPU reads / (BW * eta_m): its share of the weights once per step (MoE: only
  the experts the step's tokens touch, E * (1 - (1 - k/E)^N) of E for N tokens routed uniformly,
  cost.memory.decode_weight_bytes; the embedding table is looked up, not read), and the KV cache
  of every sequence (cost.kv_bytes: windows capped, MLA latent replicated).
- dequantization: weight-only int8/int4 kernels unpack every weight they read on the ALUs, which
  bytes alone do not show (gpt-fast's int8 reaches 1069 of 1397 GB/s); charged per weight element
  at a fitted rate per fp32 FLOP/s of the GPU, plus a start-up cost per layer of those kernels.
  fp8 on a GPU with fp8 tensor cores runs natively.
- L * t_layer: a fixed cost per layer and forward (kernel launches, host work between them), which
  dominates small models at batch 1; it depends on the engine (a table by engine family). A request
  also pays ``request_overhead_s`` once before its first token.
- communication: 2 all-reduces per layer (after attention and after the MLP) of the activations:
  small messages inside a node by the engines' one-/two-stage kernels (a latency, no log2(n)
  steps: decode at batch 1 pays about the same per all-reduce at 2 and 8 GPUs), larger ones and
  any across nodes by NCCL's ring (latency + steps + 2(n-1)/n * bytes / link bandwidth);
  pipeline stages add a hand-off each and, for a batch of micro-batches, the bubble (p-1)/(m+p-1).

The free constants (eta_f, eta_m, t_layer, all-reduce latency, link efficiency, dequantization
rates) are fitted on part of a table of published measurements (``multihead gpu-time --fit``,
reports/gpu-time/) and read from catalog/gpu_time_fit.json.
"""
from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from multihead.catalog import read_json
from multihead.cost.counts import formulas
from multihead.cost.counts.memory import decode_weight_bytes, kv_bytes, weight_bytes
from multihead.cost.spec.model import ModelSpec
from multihead.cost.counts.params import non_embedding_params, param_counts
from multihead.cost.spec.quantization import PER_CHANNEL, Quantization
from multihead.cost.spec.units import SIXTEEN_BIT, dtype_bytes
from multihead.cost.time.device import DeviceSpec, gpu_from_entry, interconnect_catalog  # noqa: F401  (re-exported)
from multihead.cost.time import kernel_efficiency

CATALOG = Path(__file__).parents[1] / "catalog"
KERNEL_CLASS = "causal FlashAttention-class kernel (masked tiles skipped: T(T+1)/2 query-key pairs)"


# -- inputs ------------------------------------------------------------------------------------------
# The GPU is the one device record (cost/time/device.py, built by cost.catalog_gpu): bandwidth_bytes_per_s,
# matmul_flops (peak_flops(dtype)), alu_flops, link, link_bandwidth, gpus_per_node, inter_node_bandwidth,
# mamf_share. ``Gpu`` and ``make_gpu`` are its old names here, kept for one release (docs/layout.md).
Gpu = DeviceSpec
make_gpu = gpu_from_entry


ENGINES = ("vllm", "sglang", "tensorrt-llm", "gpt-fast")


@dataclass(frozen=True)
class Constants:
    """The fitted constants (catalog/gpu_time_fit.json); see docs/gpu-time.md for each one's role.

    Fixed costs differ by engine (how much of a step is captured in one CUDA graph, how much host
    work sits between steps) and the all-reduce latency by link (NCCL over NVLink, RCCL over
    Infinity Fabric): those two are tables keyed by engine family and by link name.
    """
    flops_efficiency: float = 0.6
    flops_efficiency_fp8: float = 0.0   # of fp8 matmuls' (2x) peak; 0: the same as flops_efficiency
    flops_efficiency_rocm: float = 0.0  # factor on eta_f of ROCm engines on AMD GPUs (cost/time/rocm.py); 0: none
    bandwidth_efficiency: float = 0.8
    layer_overhead_s: dict = field(default_factory=lambda: {e: 10e-6 for e in ENGINES})
    prefill_layer_overhead_s: dict = field(default_factory=dict)   # eager prefill per engine family; {}: as decode
    sequence_overhead_s: dict = field(default_factory=dict)        # host work per sequence and step; {}: none
    request_overhead_s: float = 1e-3    # once per request, before its first token (admission, setup)
    allreduce_latency_s: dict = field(default_factory=lambda: {"default": 10e-6})
    allreduce_step_s: float = 5e-6      # per log2(n) step of the all-reduce
    link_efficiency: float = field(default_factory=lambda: interconnect_catalog()["link_efficiency"]["value"])
    dequant: dict = field(default_factory=lambda: {"int8": 0.5, "int4": 0.3})   # weights per fp32 FLOP
    dequant_layer_s: float = 0.0        # per layer of weight-only quantized matmuls (their kernels' start-up)
    arrival_waves: float = 0.0          # share of a fixed-concurrency loop arriving in waves (cost/time/arrival_waves.py)
    moe_efficiency: dict = field(default_factory=dict)   # routed experts' kernels per engine (kernel_efficiency.py); {}: 1
    mla_efficiency: dict = field(default_factory=dict)   # MLA attention kernels per engine; {}: 1
    source: str = "defaults (no fit file)"

    def layer_overhead(self, engine: str) -> float:
        """Per dense layer of ``engine``: a version family's key ("vllm@v1"), else the engine's newest family
        for a bare engine name ("vllm" -> "vllm@v1"), else the engine's own entry (an older fit file)."""
        keys = [engine]
        if "@" not in engine:
            from multihead.cost.time import engine_costs
            if engine in engine_costs.ENGINE_NAMES:
                keys.insert(0, engine_costs.cost_key(engine, engine_costs.version_family(engine)))
        for key in (*keys, engine.split("@")[0]):
            if key in self.layer_overhead_s:
                return self.layer_overhead_s[key]
        raise ValueError(f"engine: expected one of {sorted(self.layer_overhead_s)}, got {engine!r}")

    def allreduce_latency(self, link: str, engine: str = "") -> float:
        """The fitted latency of this engine's all-reduce over this link ("engine/link"), else of the
        link, else the mean of the fitted ones (a link without measurements)."""
        table = self.allreduce_latency_s
        for key in (f"{engine}/{link}", link):
            if key in table:
                return table[key]
        known = [v for k, v in table.items() if k != "default"] or [table.get("default", 10e-6)]
        return sum(known) / len(known)


@dataclass(frozen=True)
class Setup:
    """A model on ``tp`` x ``pp`` GPUs: its weights (16-bit dtype, optional quantization), KV dtype, engine."""
    spec: ModelSpec
    gpu: DeviceSpec
    constants: Constants
    tp: int = 1
    pp: int = 1
    weights: str = "bf16"                   # the unquantized weights' dtype
    quantization: Quantization | None = None
    kv: str = "bf16"
    act_bytes: int = 2                      # activations travel in bf16/fp16
    engine: str = "vllm"                    # engine family of the fixed costs (ENGINES)
    engine_version: str | None = None       # its version (None: the newest family; engine_costs.version_family)
    engine_date: str | None = None          # 'YYYY-MM' of a measurement without a version
    expert_parallel_size: int = 1           # MoE experts split over this many GPUs (vLLM/SGLang flag names)
    data_parallel_size: int = 1
    enable_dp_attention: bool = False
    enforce_eager: bool = False             # no CUDA graphs: decode pays the eager launch cost too
    batching: str = "continuous"            # "continuous" (in-flight) or "static": serving_point's default mode
    # (prefill, decode) factors on every phase's time, fitted to one point measured on this deployment
    # (cost/time/measured_point.py); None: the model as fitted on published measurements
    measured_scale: tuple[float, float] | None = None

    @functools.cached_property      # (computed once per setup: a fit evaluates it thousands of times)
    def cost_key(self) -> str:
        """The key of this engine family's fixed costs in Constants ("vllm@v1", "sglang", ...)."""
        from multihead.cost.time import engine_costs
        if self.engine not in engine_costs.ENGINE_NAMES:
            return self.engine
        return engine_costs.cost_key(self.engine, engine_costs.version_family(self.engine, self.engine_version,
                                                                              self.engine_date))


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
    attention_s: float = 0.0    # a decode step's attention kernel, after the GEMMs (cost/time/decode_attention.py)

    def __post_init__(self):
        self.bound = "compute" if self.compute_s >= self.memory_s else "memory"
        self.total_s = (max(self.compute_s, self.memory_s) + self.attention_s + self.dequant_s + self.overhead_s
                        + self.comm_s)


# -- precision ---------------------------------------------------------------------------------------
# Weight-only formats of the measurement table (gpt-fast quantizes every Linear, the LM head too).
WEIGHT_ONLY = {
    "int8": Quantization("int8 weight-only", 8, PER_CHANNEL, 2.0, lm_head=True,
                         source="gpt-fast quantize.py --mode int8: per-channel bf16 scales"),
    "int4-g32": Quantization("int4 weight-only", 4, 32, 2.0, 16, lm_head=True,
                             source="gpt-fast quantize.py --mode int4 --groupsize 32: bf16 scale and zero per 32"),
    "int4-g64": Quantization("int4 weight-only", 4, 64, 2.0, 16, lm_head=True,
                             source="torchao int4_weight_only(group_size=64) (tinygemm): bf16 scale and zero per 64"),
}
NATIVE_W8A8 = ("compressed-tensors",)       # int8 weights with int8 activations: no weight unpacking


def table_precision(weights: str) -> tuple[str, Quantization | None]:
    """(16-bit dtype, quantization) of a measurement row's ``weights``: bf16/fp16, fp8 (vLLM's
    per-tensor fp8), int8 / int4-g32 (gpt-fast's weight-only formats)."""
    from multihead.cost.spec.quantization import from_flag
    if weights in SIXTEEN_BIT:
        return weights, None
    if weights == "fp8":
        return "bf16", from_flag("fp8")
    if weights in WEIGHT_ONLY:
        return "bf16", WEIGHT_ONLY[weights]
    from multihead.cost.spec.quantization import FLAG_DEFAULTS
    if weights in FLAG_DEFAULTS:            # the engines' --quantization formats (awq, gptq, mxfp4, ...)
        return "bf16", from_flag(weights)
    raise ValueError(f"weights: expected one of {', '.join([*SIXTEEN_BIT, 'fp8', *WEIGHT_ONLY, *FLAG_DEFAULTS])}, "
                     f"got {weights!r}")


def native_fp8(setup: Setup) -> bool:
    q = setup.quantization
    return q is not None and q.fmt == "float" and q.bits == 8 and "fp8" in setup.gpu.matmul_flops


def matmul_dtype(setup: Setup) -> str:
    """fp8 weights on a GPU with fp8 tensor cores run fp8 matmuls; everything else runs in 16 bits."""
    return "fp8" if native_fp8(setup) else "fp16"


def dequant_kind(setup: Setup) -> str | None:
    """The rate class of unpacking the weights before a 16-bit matmul (weight-only kernels): "int8"
    for 8-bit formats (fp8 on a GPU without fp8 tensor cores too), "int4" for 4-bit ones (GPTQ/AWQ,
    nf4, mxfp4); None when the matmul consumes the weights as stored."""
    q = setup.quantization
    if q is None or native_fp8(setup) or q.method in NATIVE_W8A8:
        return None
    from multihead.cost.time import fp4_weights     # MXFP4: "fp4" without FP4 tensor cores, None with them
    if fp4_weights.FP4_KIND and fp4_weights.is_mxfp4(q):
        return fp4_weights.dequant_kind(q, setup.gpu.name)
    return "int8" if q.bits >= 8 else "int4"


def weights_read(setup: Setup, tokens: float) -> tuple[float, float]:
    """(bytes, quantized weight elements) one GPU reads in a forward over ``tokens`` tokens: its
    tensor-parallel share of every layer and the LM head; MoE: only the experts the tokens touch;
    the embedding table is looked up row by row, so it is left out (unless tied to the LM head)."""
    s = setup.spec
    w = weight_bytes(s, setup.weights, setup.quantization, gpus=setup.tp)
    read, _ = decode_weight_bytes(s, w, batch=max(1, round(tokens)))
    # idle experts are quantized weights when there is a quantization (every target includes them)
    quantized = w.quantized_params - (w.total - read) / w.bytes_per_quantized if w.quantization else 0.0
    c = param_counts(s)
    if c is not None and not s.tie_word_embeddings:
        read -= c.embedding / setup.tp * dtype_bytes(setup.weights)
    return read, quantized


# -- communication -----------------------------------------------------------------------------------
def link_bandwidth(setup: Setup) -> float:
    """One-direction B/s of the slowest link the tensor-parallel group crosses."""
    if setup.tp * setup.pp > setup.gpu.gpus_per_node and setup.tp > setup.gpu.gpus_per_node:
        return setup.gpu.inter_node_bandwidth
    return setup.gpu.link_bandwidth


# Serving engines all-reduce small messages inside a node with their own kernels, not NCCL's ring: vLLM's
# custom all-reduce (csrc/custom_all_reduce.cuh: one stage, every GPU reading its peers' buffers, below
# 512 KiB at <= 4 GPUs and 256 KiB at 8; two stages, reduce-scatter + all-gather, up to 8 MiB),
# TensorRT-LLM's custom all-reduce plugin, and PyTorch's intra-node comm that gpt-fast's TP command
# enables (ENABLE_INTRA_NODE_COMM=1). Larger messages, and any across nodes, go through NCCL's ring.
ALLREDUCE_ALGORITHM = "smooth"          # "smooth": the cheapest algorithm at each size (cost/time/comm_time.py);
                                        # "custom": session 4's size thresholds; "ring": NCCL only
ONE_STAGE_MAX_BYTES = {4: 512 * 1024, 8: 256 * 1024}
CUSTOM_MAX_BYTES = 8 * 1024 * 1024


def allreduce_seconds(nbytes: float, n: int, bandwidth: float, c: Constants, link: str = "default",
                      engine: str = "", inter_node: bool = False) -> float:
    """One all-reduce of ``nbytes`` over n GPUs.

    NCCL's ring: latency + step * log2(n) (the steps of its tree / recursive-doubling start-up) +
    2(n-1)/n * bytes / (link * efficiency), the ring's traffic per GPU. An engine's one-stage kernel
    (small messages in a node): latency + (n-1) * bytes / link, each GPU pulling every peer's buffer
    in one step; two-stage: latency + one step + the ring's traffic.
    """
    if n <= 1:
        return 0.0
    if ALLREDUCE_ALGORITHM == "smooth":
        from multihead.cost.time import comm_time
        return comm_time.allreduce_seconds(nbytes, n, bandwidth, c, link, engine, inter_node)
    wire = bandwidth * c.link_efficiency
    latency = c.allreduce_latency(link, engine)
    if ALLREDUCE_ALGORITHM == "custom" and not inter_node and nbytes <= CUSTOM_MAX_BYTES:
        if nbytes <= ONE_STAGE_MAX_BYTES[4 if n <= 4 else 8]:
            return latency + (n - 1) * nbytes / wire
        return latency + c.allreduce_step_s + 2.0 * (n - 1) / n * nbytes / wire
    return latency + c.allreduce_step_s * math.log2(n) + 2.0 * (n - 1) / n * nbytes / wire


def handoff_seconds(nbytes: float, bandwidth: float, c: Constants, link: str = "default") -> float:
    """A pipeline stage passing ``nbytes`` of activations to the next: one latency + size / link."""
    return c.allreduce_latency(link) + nbytes / (bandwidth * c.link_efficiency)


def pipeline_bubble_fraction(stages: int, microbatches: int) -> float:
    """Idle share of a pipeline of p stages fed m micro-batches (GPipe): (p-1) / (m+p-1)."""
    return (stages - 1) / (microbatches + stages - 1)


def tp_comm_seconds(setup: Setup, tokens: float) -> float:
    """2 all-reduces per layer of ``tokens`` activation rows of D, over the tensor-parallel group
    (with DP attention: cost/moe_time.dp_attention_comm_seconds)."""
    nbytes = tokens * setup.spec.hidden_size * setup.act_bytes
    bandwidth = link_bandwidth(setup)
    if MOE_TERMS and setup.enable_dp_attention and setup.data_parallel_size > 1:
        from multihead.cost.time import moe_time
        return moe_time.dp_attention_comm_seconds(setup, tokens, bandwidth)
    return 2 * setup.spec.num_layers * allreduce_seconds(nbytes, setup.tp, bandwidth, setup.constants, setup.gpu.link,
                                                      setup.engine, inter_node=bandwidth != setup.gpu.link_bandwidth)


# -- attention counts --------------------------------------------------------------------------------
def prefill_attention_flops(spec: ModelSpec, tokens: int, batch: int = 1) -> float:
    """A T-token prompt's attention FLOPs over all layers by the causal count the kernel class computes
    (windows and chunks capped; MLA decompressed): cost.spec_attention_flops(causal=True)."""
    return float(formulas.spec_attention_flops(spec, tokens, batch, causal=True))


def text_attention_flops(spec: ModelSpec, tokens: int) -> float:
    """The reference text's count, 4 * T^2 * D * L (D = H*d, every pair, no causal halving): "the text's count"."""
    return float(formulas.model_attention_flops(tokens, spec.num_heads * spec.head_dim, spec.num_layers))


# -- rates: the one place a GPU's figures become FLOP/s and B/s ---------------------------------------
def linear_flops_per_s(setup: Setup) -> float:
    """Sustained FLOP/s of one GPU's linear layers: datasheet peak of the matmul dtype * the measured
    matmul ceiling (mamf_share) * the fitted efficiency (fp8 matmuls: their own, when fitted)."""
    c, g, mm = setup.constants, setup.gpu, matmul_dtype(setup)
    eta = c.flops_efficiency_fp8 if mm == "fp8" and c.flops_efficiency_fp8 else c.flops_efficiency
    from multihead.cost.time.rocm import flops_factor     # ROCm engines on AMD GPUs: their own factor
    return g.peak_flops(mm) * (g.mamf_share if USE_MAMF else 1.0) * eta * flops_factor(c, g.name)


def attention_flops_per_s(setup: Setup) -> float:
    """Sustained FLOP/s of one GPU's attention core (16-bit): peak * mamf_share * fitted efficiency.
    The planner times the reference text's 4*T^2*D*L at this same rate ("the text's count")."""
    g = setup.gpu
    from multihead.cost.time.rocm import flops_factor
    return (g.peak_flops("fp16") * (g.mamf_share if USE_MAMF else 1.0) * setup.constants.flops_efficiency
            * flops_factor(setup.constants, g.name))


def read_seconds(setup: Setup, nbytes: float) -> float:
    """Seconds one GPU takes to stream ``nbytes``: bytes / (bandwidth * fitted efficiency)."""
    return nbytes / (setup.gpu.bandwidth_bytes_per_s * setup.constants.bandwidth_efficiency)


# -- phases ------------------------------------------------------------------------------------------
MOE_TERMS = True        # expert-parallel imbalance, grouped-GEMM padding, DP-attention all-to-all (cost/time/moe_time.py)
ENGINE_COSTS = True     # fixed costs by kernels per layer, engine family and phase (cost/time/engine_costs.py); False: L * t_layer


def _phase(setup: Setup, *, tokens: float, sequences: float, attn_flops: float, kv: float,
           phase: str = "decode") -> Phase:
    """One forward of ``tokens`` tokens of ``sequences`` sequences through the whole model on one TP
    group (all pipeline stages in turn): the terms of the module docstring, per GPU."""
    s, g, c, n = setup.spec, setup.gpu, setup.constants, setup.tp
    layers, _ = non_embedding_params(s, active=True)
    lm_head = s.vocab_size * s.hidden_size if s.vocab_size else 0
    linear = 2.0 * (tokens * layers + sequences * lm_head) / n
    attention = attn_flops / n
    compute = linear / linear_flops_per_s(setup)
    attention_compute = attention / attention_flops_per_s(setup)
    weights, quantized = weights_read(setup, tokens)
    imbalance_bytes = padding_flops = 0.0
    if MOE_TERMS and s.moe is not None:     # expert-parallel imbalance; grouped-GEMM padding (cost/time/moe_time.py)
        from multihead.cost.time import moe_time
        imbalance_bytes = moe_time.imbalance_extra_bytes(setup, tokens)
        weights += imbalance_bytes
        if phase == "prefill":
            padding_flops = moe_time.padding_extra_flops(setup, tokens)
            compute += padding_flops / linear_flops_per_s(setup)
    weight_s, kv_s = read_seconds(setup, weights), read_seconds(setup, kv)
    if any(kernel_efficiency.applies(setup)):   # MoE experts' and MLA's kernels at their engine's efficiency
        from multihead.cost.time import moe_time
        extra_compute, extra_read, scale = kernel_efficiency.extra_seconds(
            setup, phase, routed_flops=moe_time.routed_flops_per_gpu(setup, tokens) + padding_flops,
            routed_bytes=moe_time.routed_expert_bytes(setup, tokens) + imbalance_bytes)
        compute, weight_s = compute + extra_compute, weight_s + extra_read
        attention_compute, kv_s = attention_compute * scale, kv_s * scale
    attention_s = 0.0
    if phase == "decode":       # the attention kernel runs after the GEMMs (cost/time/decode_attention.py)
        from multihead.cost.time import decode_attention
        compute, memory, attention_s = decode_attention.split_step(
            linear_s=compute, attention_compute_s=attention_compute, weight_s=weight_s, kv_s=kv_s)
    else:
        compute, memory = compute + attention_compute, weight_s + kv_s
    kind = dequant_kind(setup)
    rate = c.dequant.get(kind, c.dequant.get("int4")) if kind else None    # (a fit without "fp4": int4's rate)
    dequant = quantized / (rate * g.alu_flops) + s.num_layers * c.dequant_layer_s if kind else 0.0
    comm = tp_comm_seconds(setup, tokens)
    if setup.pp > 1:
        comm += (setup.pp - 1) * handoff_seconds(tokens * s.hidden_size * setup.act_bytes, g.link_bandwidth, c, g.link)
    if ENGINE_COSTS:     # fixed costs; host work per sequence, hidden under the GPU where the engine overlaps them
        from multihead.cost.time.engine_costs import fixed_and_host_s
        overhead = fixed_and_host_s(setup, phase, sequences, max(compute, memory) + attention_s + dequant + comm)
    else:
        overhead = s.num_layers * c.layer_overhead(setup.engine)
    out = Phase(compute_s=compute, memory_s=memory, dequant_s=dequant, overhead_s=overhead, comm_s=comm,
                flops=linear + attention, bytes=weights + kv, attention_s=attention_s)
    if setup.measured_scale is not None:      # the deployment's own factor (measured_point.py): the total, not the terms
        out.total_s *= setup.measured_scale[0 if phase == "prefill" else 1]
    return out


def prefill(setup: Setup, tokens: int, *, batch: int = 1) -> Phase:
    """A prefill of ``batch`` prompts of ``tokens`` tokens: reads the weights (all experts once many
    tokens are routed), writes the prompts' KV, attention by the causal count, logits of the last
    position only. With pipeline stages: one prompt through all of them (see pipelined_prefill_seconds)."""
    kv = kv_bytes(setup.spec, tokens, setup.kv, batch=batch, gpus=setup.tp)
    return _phase(setup, tokens=batch * tokens, sequences=batch,
                  attn_flops=prefill_attention_flops(setup.spec, tokens, batch), kv=kv, phase="prefill")


def pipelined_prefill_seconds(setup: Setup, tokens: int, batch: int) -> float:
    """``batch`` prompts through p pipeline stages as ``batch`` micro-batches: (m + p - 1) stage
    slots of one prompt's stage time each (the bubble is pipeline_bubble_fraction of that)."""
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
    attn = formulas.decode_attention_flops(setup.spec, context + 1, group)
    kv = kv_bytes(setup.spec, context + 1, setup.kv, batch=group, gpus=setup.tp)
    return _phase(setup, tokens=group, sequences=group, attn_flops=attn, kv=kv)


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
                  mode: str | None = None) -> ServingPoint:
    """Steady state of ``concurrency`` requests.

    "serving" (continuous batching, vLLM/SGLang/TensorRT-LLM in-flight): each request's prompt is
    prefilled once and interrupts the others' decoding, so over one request's ``output_len`` steps
    the c - 1 others' prefills are interleaved: TPOT = step(c) + (c-1) * prefill / output_len, less the
    prefills that were queued ahead of the request, which delay its first token instead
    (_serving_ttft_tpot, prefill_queue).
    "static" (one batch started together, offline benchmarks): one batched prefill, then decode.
    Decode steps are timed at the mean context input_len + output_len / 2.
    """
    if mode is None:        # the setup's batching (a user's --batching)
        mode = "static" if setup.batching == "static" else "serving"
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
    elif PREFILL_BATCHING and c > 1:      # waiting prompts prefilled together up to the engine's token budget
        ttft, tpot = _batched_ttft_tpot(setup, c, input_len, one, step.total_s, fixed, steps, output_len)
        latency = ttft + steps * tpot
    else:
        ttft, tpot = _serving_ttft_tpot(c, one, step.total_s, fixed, steps, output_len)
        share = setup.constants.arrival_waves if ARRIVAL_WAVES else 0.0
        if share > 0 and c > 1:           # the benchmark's requests arriving together (cost/time/arrival_waves.py)
            from multihead.cost.time import arrival_waves
            waves = arrival_waves.wave_ttft_tpot(setup, c, input_len, one, step.total_s, fixed, output_len)
            ttft, tpot = arrival_waves.blend(share, (ttft, tpot), waves)
        latency = ttft + steps * tpot
    return ServingPoint(concurrency=c, ttft_s=ttft, tpot_s=tpot, request_latency_s=latency,
                        output_tokens_per_s=c * output_len / latency, decode_step_s=step.total_s,
                        prefill_s=one, decode_bound=step.bound)


PREFILL_QUEUE = "mva"      # "mva": prompts queue for the prefills ahead of them; "residual": half of one, at most
ARRIVAL_WAVES = True       # a fixed-concurrency loop partly arrives in waves (Constants.arrival_waves share; session 13);
                           # it blends with the one-at-a-time queue only (not with PREFILL_BATCHING's batched queue)
PREFILL_BATCHING = False   # True: a step prefills the waiting prompts together up to the engine's token budget
                           # (cost/time/prefill_batching.py); False: one prompt at a time (prefill_queue)


def _batched_ttft_tpot(setup: Setup, c: int, input_len: int, one: float, step: float, fixed: float, steps: int,
                       output_len: int) -> tuple[float, float]:
    """TTFT and TPOT of c > 1 requests in continuous batching when a prefill step holds up to k prompts
    (prefill_batching.prompts_per_step): the queue of batched prefills (prefill_batching.batched_prefill_queue)
    delays the first token; the other c - 1 prompts' prefill work, T(b)/b each, interrupts the decoding except
    what the request spent waiting for it. Where the decode tokens share the step with the prefill (vLLM V1,
    TensorRT-LLM: mixed steps) a batch of b prompts costs the decoding requests only T(b) - step, their own step
    being in it; SGLang pauses decode for its prefill batches and costs the whole T(b)."""
    from multihead.cost.time import prefill_batching as pb
    batch_s = pb.batch_seconds(setup, input_len, one)
    k = pb.prompts_per_step(setup, input_len, c)
    _, mixed, _ = pb.token_budget(setup)

    def interrupt(per_prompt: float, b: float) -> float:     # per prompt of a batch of b
        return pb.interruption(per_prompt * b, step, mixed) / b

    s1 = interrupt(one, 1.0)
    think = fixed + steps * (step + (c - 1) * s1 / max(output_len, 1))
    q = pb.batched_prefill_queue(c, batch_s, k, think)
    tpot = step + max(0.0, (c - 1) * interrupt(q["per_prompt_s"], q["batch"]) - q["wait_s"]) / max(output_len, 1)
    return fixed + q["ttft_s"] + 0.5 * (1 - q["busy"]) * step, tpot


def _serving_ttft_tpot(c: int, one: float, step: float, fixed: float, steps: int, output_len: int) -> tuple[float, float]:
    """TTFT and TPOT of c requests in continuous batching with prefill priority (a waiting prompt is
    prefilled before the next decode step). Over a request's life the other c - 1 prompts are each
    prefilled once: those queued ahead of it when it arrives delay its first token (prefill_queue), the
    rest interrupt its decoding (TPOT). A request arriving while no prefill runs waits half a decode step."""
    tpot_all = step + (c - 1) * one / max(output_len, 1)       # every other prefill during the decode
    if c == 1:
        return fixed + one, tpot_all
    if PREFILL_QUEUE == "residual":
        rho = min(1.0, c * one / (one + steps * tpot_all))
        return fixed + one + 0.5 * (rho * one + (1 - rho) * step), tpot_all
    wait, busy = prefill_queue(c, one, fixed + steps * tpot_all)
    tpot = step + max(0.0, (c - 1) * one - wait) / max(output_len, 1)
    return fixed + one + wait + 0.5 * (1 - busy) * step, tpot


def prefill_queue(c: int, prefill_s: float, think_s: float) -> tuple[float, float]:
    """(mean wait, prefill-busy share) an arriving prompt finds: c requests in a closed loop, each
    spending ``think_s`` outside the prefill queue (decoding, and the client's turn-around) and
    ``prefill_s`` in it, one prompt prefilled at a time.

    Exact mean value analysis of the closed network (Reiser and Lavenberg, J. ACM 27(2), 1980; Lazowska
    et al., Quantitative System Performance, 1984, ch. 6): by the arrival theorem an arriving request
    sees the queue of the network with c - 1 requests, Q(c-1); it waits for those prompts, the one being
    prefilled half done on average (fixed prefill times): wait = prefill_s * (Q - U / 2), U = its busy share.
    """
    queue = throughput = 0.0
    for n in range(1, c):
        residence = prefill_s * (1.0 + queue)
        throughput = n / (residence + think_s)
        queue = throughput * residence
    busy = min(1.0, throughput * prefill_s)
    return max(0.0, prefill_s * (queue - 0.5 * busy)), busy


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


USE_MAMF = True     # compute against each GPU's measured matmul ceiling (False: every GPU at its datasheet peak)


def load_constants(path: Path | None = None) -> Constants:
    """The fitted constants; the defaults (labelled so) when no fit file exists."""
    path = Path(path) if path else FIT_FILE
    if not path.is_file():
        return Constants()
    data = read_json(path)
    fitted = {k: dict(v) if isinstance(v, dict) else v for k, v in data["constants"].items()}   # own tables
    return Constants(**fitted, source=f"{path.name} ({data.get('command', 'fitted')})")


def serving_time_keys(setup: Setup, input_len: int, output_len: int, max_concurrency: float) -> dict:
    """The time keys of the plan's ``serving`` object: at the memory account's max_concurrency
    (floored, at least 1) and at one request, and the curve between them.

    ttft_s / tpot_s / output_tokens_per_s: at max concurrency; decode_tokens_per_s: batch 1 at the
    prompt's length; curve: one point per concurrency 1, 2, 4, ... max.
    """
    for name, v in (("input_len", input_len), ("output_len", output_len)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    top = max(1, int(max_concurrency))
    curve = serving_curve(setup, input_len, output_len, top)
    at, one = curve[-1], curve[0]
    from multihead.cost.time.timing_intervals import add_intervals    # *_low / *_high: 80% intervals by family
    return add_intervals({"input_len": input_len, "output_len": output_len, "concurrency": top,
            "ttft_s": at.ttft_s, "tpot_s": at.tpot_s, "itl_s": at.tpot_s,
            "output_tokens_per_s": at.output_tokens_per_s, "request_latency_s": at.request_latency_s,
            "ttft_s_one_request": one.ttft_s, "tpot_s_one_request": one.tpot_s,
            "decode_tokens_per_s": decode_tokens_per_s(setup, input_len), "decode_bound": at.decode_bound,
            "prefill_s": one.prefill_s, "attention_kernel": KERNEL_CLASS, "engine": setup.engine,
            "time_constants": setup.constants.source,
            "curve": [{"concurrency": p.concurrency, "ttft_s": p.ttft_s, "tpot_s": p.tpot_s,
                       "output_tokens_per_s": p.output_tokens_per_s} for p in curve]}, setup)
