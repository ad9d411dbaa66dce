"""A plan as a tree: inputs -> parameters, memory, compute -> outcome -> fallbacks, sections, explanation.

``plan(...)`` fills each part from ``Accounts`` (accounts.py) in turn; the explanation (explain.py)
and the tables (render.py) are written afterwards from these same numbers, so a formula's value
exists once. ``Plan.to_dict()`` is the JSON of ``multihead plan --json``: the parts' fields side by
side (the flat keys the CLI has always printed) plus one object per section (``serving``, ...).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from multihead import jsonout
from multihead.cost.counts.memory import kv_bytes_per_token, kv_layer_groups
from multihead.cost.counts.params import attention_params_per_layer, non_embedding_params, param_counts, total_params
from multihead.planner.accounts import MemoryAccount, Accounts
from multihead.planner.names import RENAMED, with_aliases


@dataclass
class Inputs:
    """The workload, model and device as resolved (bytes per GPU, figures effective)."""
    model: str
    model_source: str
    model_type: str
    model_features: list[str]
    attention_kind: str
    hidden_size: int                   # D (HF names; the old keys are aliases: planner/names.py)
    num_hidden_layers: int             # L
    num_attention_heads: int           # H
    num_kv_heads: int                  # H_kv
    head_dim: int
    tokens: int
    batch: int
    passes: int
    tensor_parallel_size: int          # GPUs of the tensor-parallel group (the old key: gpus)
    device: str
    device_kind: str
    device_source: str
    gpu_memory_bytes: float
    usable_memory_bytes: float
    effective_tflops: float
    effective_bandwidth_tbps: float
    weights_dtype: str
    kv_dtype: str
    activation_dtype: str
    quantization: dict | None
    attention_mode: str
    causal_skip: bool


@dataclass
class Parameters:
    params: float                      # the count that sizes the weights (stated or architecture)
    params_architecture: int | None
    params_published: int | None
    params_active: float | None        # per token (MoE: k routed experts), embedding and LM head included
    attention_params_per_layer: int
    attention_params: int
    non_embedding_params: float        # active: what a token multiplies through (linear FLOPs)
    params_by_part: dict | None


@dataclass
class Memory:
    """Bytes per GPU of one pass over T tokens."""
    kv_cache_bytes_per_token: float    # all layers and GPUs, windows still growing
    kv_cache_bytes: float
    kv_cache_bytes_no_window: float
    kv_layer_groups: list[dict]
    weights_bytes: float
    weights_quantized_bytes: float
    workspace_bytes: float
    score_matrix_bytes_per_layer: float
    tiled_attention_bytes_per_layer: float
    total_memory_bytes: float


@dataclass
class Compute:
    attention_flops: float
    attention_flops_causal: float
    linear_flops: float
    attention_prefill_seconds: float
    attention_prefill_seconds_causal: float
    attention_prefill_seconds_all_passes: float
    linear_prefill_seconds: float
    prefill_seconds: float
    prefill_seconds_all_passes: float
    decode_weight_read_bytes: float
    decode_experts_read: float         # routed experts per MoE layer one step reads (0: dense)
    decode_kv_read_seconds: float
    decode_weight_read_seconds: float
    decode_seconds_per_token: float    # GPU: cost/timing's decode step (fixed costs and TP all-reduces counted)
    tokens_per_second: float           # batch / decode_seconds_per_token
    tokens_per_second_kv_only: float
    decode_terms: dict | None = None   # the GPU-time model's terms of that step (None: a measured CPU profile)
    prefill_terms: dict | None = None  # the GPU-time model's terms of the one-pass prefill (None: a CPU profile)


@dataclass
class Outcome:
    chunked: dict
    fits: bool
    decision: str                      # "single_pass", "chunked" or "does_not_fit"
    chunks: int
    decision_fits: bool
    reason: str
    chunking_loses: str
    positions: dict
    decided_by: str = "plan"           # "engine": the engine's account (serving section); "plan": its own


@dataclass
class Fallback:
    """One way out, with what it does in numbers. ``fits``: whether the single pass then fits."""
    name: str
    action: str
    effect: dict
    fits: bool | None
    text: str
    notes: list[str] = field(default_factory=list)
    needed: bool = True     # False: the plan fits with headroom; listed for reference


_PARTS = ("inputs", "parameters", "memory", "compute", "outcome")


@dataclass
class Plan:
    inputs: Inputs
    parameters: Parameters
    memory: Memory
    compute: Compute
    outcome: Outcome
    warnings: list[str]
    fallbacks: list[Fallback]
    explain: list[str] = field(default_factory=list)
    sections: dict = field(default_factory=dict)     # name -> object with to_dict() (planner/sections.py)
    accounts: Accounts | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str):
        """The JSON's flat names (p.kv_cache_bytes, p.decision) resolve to the part that holds them."""
        if name.startswith("_") or name in _PARTS:
            raise AttributeError(name)
        name = RENAMED.get(name, name)          # an old key (one release): planner/names.py
        for part in _PARTS:
            obj = self.__dict__.get(part)
            if obj is not None and name in obj.__dataclass_fields__:
                return getattr(obj, name)
        raise AttributeError(f"Plan has no field {name!r}")

    def to_dict(self) -> dict:
        out: dict = {}
        for part in _PARTS:
            out.update(plain(getattr(self, part)))
        out.update(warnings=list(self.warnings), fallbacks=[plain(f) for f in self.fallbacks],
                   explain=list(self.explain))
        for name, section in self.sections.items():
            out[name] = section.to_dict() if hasattr(section, "to_dict") else section
        return with_aliases(out)

    def to_json(self, **kw) -> str:
        return jsonout.dumps(self.to_dict(), **kw)


def plain(value):
    """``dataclasses.asdict`` for the plan's JSON-shaped values, without its deep copy of every leaf:
    new dicts, lists and tuples all the way down (the caller owns them), the same leaves (numbers,
    strings, None, which are immutable). A plan's JSON was 14% of a page's /api/plan in asdict."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    return value


# -- the parts, one function each ---------------------------------------------------------------------
def build_inputs(st: Accounts, tokens: int, passes: int, causal_skip: bool) -> Inputs:
    s, d, p = st.spec, st.device, st.precision
    q = p.quantization
    flops_per_s, bytes_per_s = st.effective_rates()
    return Inputs(
        model=s.name, model_source=s.source, model_type=s.model_type, model_features=s.features(),
        attention_kind=s.attention_kind, hidden_size=s.hidden_size, num_hidden_layers=s.num_layers,
        num_attention_heads=s.num_heads, num_kv_heads=s.num_kv_heads, head_dim=s.head_dim, tokens=tokens,
        batch=st.batch, passes=passes, tensor_parallel_size=st.gpus,
        device=d.name, device_kind=d.kind, device_source=d.source, gpu_memory_bytes=d.memory_bytes,
        usable_memory_bytes=st.usable, effective_tflops=flops_per_s / 1e12,
        effective_bandwidth_tbps=bytes_per_s / 1e12, weights_dtype=p.weights_label, kv_dtype=p.kv,
        activation_dtype=p.activation, quantization=_quant_dict(q, s.hidden_size) if q else None,
        attention_mode=st.attention, causal_skip=causal_skip)


def _quant_dict(q, in_features: int) -> dict:
    return {**asdict(q), "bytes_per_weight": q.bytes_per_weight(in_features), "label": q.describe()}


def build_parameters(st: Accounts) -> Parameters:
    s = st.spec
    counts = param_counts(s)
    per = attention_params_per_layer(s)
    return Parameters(
        params=total_params(s), params_architecture=counts.total if counts else None,
        params_published=s.params_published, params_active=counts.active if counts and s.params is None else None,
        attention_params_per_layer=per, attention_params=s.num_layers * per,
        non_embedding_params=non_embedding_params(s)[0],
        params_by_part={**asdict(counts), "total": counts.total, "active": counts.active} if counts else None)


def build_memory(st: Accounts, single: MemoryAccount, tokens: int) -> Memory:
    s, p = st.spec, st.precision
    w = st.weights()
    per_token = kv_bytes_per_token(s, p.kv)
    groups = [{"kind": g.kind.value, "layers": g.layers, "window": g.window, "elements_per_token": g.elements_per_token,
               "latent": g.latent} for g in kv_layer_groups(s, gpus=st.gpus)]
    return Memory(
        kv_cache_bytes_per_token=per_token, kv_cache_bytes=single.kv_cache_bytes,
        kv_cache_bytes_no_window=per_token * tokens * st.batch, kv_layer_groups=groups,
        weights_bytes=single.weights_bytes, weights_quantized_bytes=w.quantized_params * w.bytes_per_quantized,
        workspace_bytes=single.workspace_bytes, score_matrix_bytes_per_layer=st.score_bytes(tokens, 1),
        tiled_attention_bytes_per_layer=st.tiled_bytes(tokens, 1), total_memory_bytes=single.total_bytes)


def build_compute(st: Accounts, single: MemoryAccount, tokens: int, passes: int, causal_skip: bool) -> Compute:
    full, causal = st.attention_flops(tokens, causal=False), st.attention_flops(tokens, causal=True)
    att_full = st.attention_seconds(full, tokens)
    att_causal = st.attention_seconds(causal, tokens, causal=True)
    att = att_causal if causal_skip else att_full
    lin_flops = st.linear_flops(tokens)
    prefill, prefill_terms = st.prefill(tokens, causal_skip=causal_skip)
    # a GPU: the time model's linear term (its compute less its causal attention); a profile: its own
    lin = prefill_terms["compute_s"] - att_causal if prefill_terms else st.linear_seconds(lin_flops)
    read_bytes, experts = st.decode_weight_bytes()
    kv_read = st.decode_seconds(tokens, single.kv_cache_bytes, 0.0)
    step, terms = st.decode_step(tokens)
    return Compute(
        attention_flops=full, attention_flops_causal=causal, linear_flops=lin_flops, attention_prefill_seconds=att,
        attention_prefill_seconds_causal=att_causal, attention_prefill_seconds_all_passes=att * passes,
        linear_prefill_seconds=lin, prefill_seconds=prefill, prefill_seconds_all_passes=prefill * passes,
        decode_weight_read_bytes=read_bytes, decode_experts_read=experts, decode_kv_read_seconds=kv_read,
        decode_weight_read_seconds=st.read_seconds(read_bytes), decode_seconds_per_token=step,
        tokens_per_second=st.batch / step, tokens_per_second_kv_only=st.batch / kv_read, decode_terms=terms,
        prefill_terms=prefill_terms)


# The measured GQA-conversion summary committed with the repository (written by `multihead heads
# report`), found beside the package rather than in the working folder, so a plan's notes do not
# depend on where it is run; an installed copy without the repository simply has none.
QUALITY_REPORT = Path(__file__).resolve().parents[2] / "reports" / "heads" / "summary.json"
