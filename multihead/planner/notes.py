"""The plan's warnings: what the numbers assume or where they stop being safe, one line each."""
from __future__ import annotations

from multihead.cost.counts.formulas import expected_distinct_experts
from multihead.cost.spec.model import LayerKind
from multihead.cost.counts.params import mlp_width
from multihead.cost.spec.positions import coverage, extension_needed
from multihead.cost.spec.units import fmt_bytes, fmt_int
from multihead.planner.accounts import MemoryAccount, Accounts


def build_warnings(st: Accounts, T: int, single: MemoryAccount, decision: str, chunking_loses: str) -> list[str]:
    s = st.spec
    out = [f"{s.name}: {n}" for n in s.notes] + list(st.precision.notes)
    if single.fits and single.total_bytes > 0.9 * st.usable:
        out.append(f"memory: the single pass uses {single.total_bytes / st.usable:.0%} of usable memory; little headroom")
    score = st.score_bytes(T, 1)
    if score > st.usable and st.attention == "materialized":
        out.append(f"attention: a materialized score matrix needs {fmt_bytes(score)} per layer, more than the GPU; "
                   f"use tiled attention")
    out += _positions(st, T)
    if st.gpus > 1:
        h = s.num_kv_heads
        out.append(f"tensor parallelism over {st.gpus} GPUs: the decode step counts 2 all-reduces per layer (docs/gpu-time.md); the prefill rows of the compute table do not (the serving TTFT does)"
                   + (f"; {st.gpus // h}x KV replication (H_kv = {h} < {st.gpus} GPUs)" if st.gpus > h and not s.mla
                      else "; MLA's latent KV is replicated on every GPU" if s.mla else ""))
    for g in s.layer_groups():
        if g.window is not None:
            what = "attend to the last" if g.kind is LayerKind.SLIDING else "attend within chunks of"
            out.append(f"{g.kind.value.replace('_', ' ')}: {g.layers} of {s.num_layers} layers {what} "
                       f"{fmt_int(g.window)} tokens only; their KV cache is capped there")
    out += _moe_mla(st)
    width, assumed = mlp_width(s)
    if assumed and not s.moe:
        out.append(f"workspace: intermediate_size unknown; assumed I = {width} "
                   + ("(LLaMA's rule: 2/3*4D rounded up to a multiple of 256)" if s.mlp.value == "gated" else "(4D)"))
    if decision == "chunked":
        out.append("chunking: " + chunking_loses.split(": ", 1)[-1].split(", and")[0])
    return out


def _positions(st: Accounts, T: int) -> list[str]:
    c = coverage(st.spec)
    if c.covered is None:
        return [f"positions: the training length (max_position_embeddings) is unknown; give --max-position to "
                f"check T = {fmt_int(T)} against it"]
    if T <= c.covered:
        return []
    if c.learned:
        return [f"positions: T = {fmt_int(T)} exceeds {c.how} (learned positions: impossible beyond the table)"]
    ext = extension_needed(st.spec, T)
    return [f"positions: T = {fmt_int(T)} exceeds {c.how} (RoPE angles leave the trained range: attention drifts, "
            f"summaries repeat; interpolate positions by {ext.factor:g}x over {fmt_int(ext.base)} with "
            f"{ext.snippet}, or chunk to <= {fmt_int(c.covered)})"]


def _moe_mla(st: Accounts) -> list[str]:
    s, out = st.spec, []
    if s.moe:
        m = s.moe
        read = expected_distinct_experts(m.num_experts, m.experts_per_token, st.batch)
        out.append(f"MoE: memory holds all {m.num_experts} experts of {m.moe_layers} layers ({m.layout}); a token "
                   f"uses {m.experts_per_token}; a decode step at batch {st.batch} reads {read:.3g} experts per layer "
                   f"(E*(1-(1-k/E)^B), uniform routing)")
    if s.mla:
        out.append(f"MLA: the KV cache holds the {s.mla.latent_dim}-number latent per token and layer; prefill "
                   f"attention FLOPs use the naive form (K, V decompressed: 2*(qk+v) per pair and head), decode the "
                   f"absorbed one (2*(latent + kv_lora_rank))")
    return out
