"""Ways out when a plan does not fit (or barely does), each with its effect in numbers, and the warnings.

Every option is the same ``Accounts`` asked again with one knob turned: fewer KV heads, a smaller KV
dtype, tiled attention, interpolated positions, more GPUs, quantized weights, a reused KV cache.
"""
from __future__ import annotations

from multihead.catalog import read_json
from multihead.cost.spec.positions import coverage, extension_needed
from multihead.cost.spec.quantization import WEIGHTS_DTYPE_QUANT, from_flag
from multihead.cost.spec.units import dtype_bytes, fmt_bytes, fmt_int, fmt_seconds
from multihead.planner.accounts import MemoryAccount, Accounts
from multihead.planner.plan import Fallback

KV_DTYPES = ("fp8", "int8", "int4")
ENGINE_KV = {"fp8": "fp8"}          # vLLM's --kv-cache-dtype for a KV dtype (int8/int4: none)


def one_pass_fits(st: Accounts, T: int, m: MemoryAccount, spec=None, **flags) -> bool | None:
    """Whether one pass fits with a knob turned, by the account that decides the plan (decision.py):
    the engine's (vLLM's flags in ``flags``, the model in ``spec``) for a GPU plan, else the plan's own
    ``m``. None: the engine has no such setting (an int8/int4 KV cache)."""
    from multihead.planner.decision import engine_decides
    if not engine_decides(st, T):
        return m.fits
    if any(v is None for v in flags.values()):
        return None
    from multihead.planner.serving import engine_fits
    return engine_fits(st.engine, spec or st.spec, **flags)


def fewer_kv_heads(st: Accounts, T: int, quality_report) -> Fallback | None:
    """Every divisor of H below H_kv is a valid grouping: the next one down, the first that fits, MQA."""
    s = st.spec
    H, Hkv = s.num_heads, s.num_kv_heads
    options = [d for d in range(Hkv - 1, 0, -1) if H % d == 0] if s.mla is None else []
    if not options:
        return None
    known: dict = {}

    def fits(d: int, m: MemoryAccount):         # each option's account once (it was asked twice)
        if d not in known:
            known[d] = one_pass_fits(st, T, m, s.with_overrides(num_kv_heads=d))
        return known[d]
    fitting = next((d for d in options if fits(d, st.memory(T, kv_heads=d))), None)
    rows = []
    now = st.memory(T).kv_cache_bytes
    for d in sorted({options[0], 1, *([fitting] if fitting else [])}, reverse=True):
        m = st.memory(T, kv_heads=d)
        # the ratio of the same per-GPU figures: under TP a KV head count below the GPU count is
        # replicated on each GPU, so MQA on 4 GPUs keeps as much per GPU as H_kv = 4 (not d / H_kv)
        rows.append({"kv_heads": d, "kind": "MQA" if d == 1 else f"GQA-{d}", "kv_cache_bytes": m.kv_cache_bytes,
                     "kv_fraction_of_now": m.kv_cache_bytes / now if now else d / Hkv, "total_memory_bytes": m.total_bytes,
                     "fits": fits(d, m),
                     "decode_kv_read_seconds": st.decode_seconds(T, m.kv_cache_bytes, 0.0)})
    best = next((r for r in rows if r["fits"]), rows[-1])
    notes = ["Converting MHA/GQA checkpoints: mean-pool each group's K and V projections, then uptrain ~5% of the "
             "original steps (Ainslie et al. 2023: T5-XXL quality MHA 47.2, GQA-8 47.1, MQA 46.6)."]
    notes += gqa_quality_lines(quality_report, s.name)
    text = "; ".join(f"H_kv {r['kv_heads']} ({r['kind']}): KV {fmt_bytes(r['kv_cache_bytes'])} "
                     f"({r['kv_fraction_of_now']:.3g}x), total {fmt_bytes(r['total_memory_bytes'])}, "
                     f"{'fits' if r['fits'] else 'does not fit'}" for r in rows)
    target = f"H_kv {Hkv} -> {best['kv_heads']}" if best["fits"] else "even H_kv = 1 does not fit"
    return Fallback("fewer_kv_heads", f"share K/V across more query heads ({target})",
                    {"options": rows, "current_kv_heads": Hkv}, best["fits"], text, notes)


def kv_quantization(st: Accounts, T: int) -> Fallback | None:
    now = dtype_bytes(st.precision.kv)
    rows = []
    for q in KV_DTYPES:
        if dtype_bytes(q) < now:
            m = st.memory(T, kv_dtype=q)
            rows.append({"kv_dtype": q, "kv_cache_bytes": m.kv_cache_bytes, "total_memory_bytes": m.total_bytes,
                         "fits": one_pass_fits(st, T, m, kv_cache_dtype=ENGINE_KV.get(q)), "decode_kv_read_seconds": st.decode_seconds(T, m.kv_cache_bytes, 0.0, q)})
    if not rows:
        return None
    text = "; ".join(f"{r['kv_dtype']}: KV {fmt_bytes(r['kv_cache_bytes'])}, decode KV read "
                     f"{fmt_seconds(r['decode_kv_read_seconds'])}, total {fmt_bytes(r['total_memory_bytes'])}, "
                     f"{_fits_word(r['fits'])}" for r in rows)
    return Fallback("kv_quantization", f"store the KV cache in fewer bits (now {st.precision.kv})", {"options": rows},
                    any(r["fits"] for r in rows), text,
                    ["Per-group scales add a few percent not counted here; int4 KV costs measurable quality, "
                     "fp8/int8 usually little."])


def tiled_attention(st: Accounts, T: int, single: MemoryAccount, fits: bool) -> Fallback:
    score, tiled = st.score_bytes(T), st.tiled_bytes(T)
    assumed = st.attention == "tiled"
    return Fallback(
        "tiled_attention", "compute softmax(QK^T)V block by block (FlashAttention-style) instead of storing [B,H,T,T]",
        {"score_matrix_bytes_per_layer": score, "tiled_bytes_per_layer": tiled, "ratio": score / tiled,
         "already_assumed": assumed}, assumed and fits,
        f"materialized score matrix {fmt_bytes(score)} per layer vs tiled state {fmt_bytes(tiled)} "
        f"({score / tiled:,.0f}x less){' - already assumed by this plan' if assumed else ''}; "
        f"FLOPs unchanged (O(T^2)), memory O(T*d_k)")


def position_interpolation(st: Accounts, T: int) -> Fallback | None:
    c = coverage(st.spec)
    if c.covered is None or T <= c.covered:
        return None
    if c.learned:
        return Fallback("position_interpolation", "not available: learned absolute positions",
                        {"factor_needed": T / c.covered, "max_position_embeddings": c.covered}, False,
                        f"the model has {c.covered} learned positions and none beyond; chunk to <= {c.covered} tokens")
    ext = extension_needed(st.spec, T)
    rs = st.spec.rope_scaling
    now = f" (the config already has rope_scaling {rs.rope_type} x{rs.factor:g})" if rs and rs.factor else ""
    data = {"factor_needed": T / ext.base, "factor": ext.factor, "base_tokens": ext.base, "covered_tokens": c.covered,
            "max_position_embeddings": st.spec.max_position_embeddings, "rope_scaling": rs.raw if rs else None,
            "rope_type": ext.rope_type, "config_snippet": ext.snippet or None}
    if not ext.overrides:
        return Fallback("position_interpolation", f"not available: {ext.note}", data, False,
                        f"T = {fmt_int(T)} is past the {fmt_int(c.covered)} positions covered ({c.how}): {ext.note}")
    # the model's own scaling type, grown (cost.spec.positions.extension_needed): the launch commands carry it too
    return Fallback(
        "position_interpolation", f"scale RoPE positions by {ext.factor:g} over {fmt_int(ext.base)} ({ext.rope_type})",
        data, None,
        f"T = {fmt_int(T)} is past the {fmt_int(c.covered)} positions covered ({c.how}): set {ext.snippet} in "
        f"config.json ({ext.rope_type} x{ext.factor:g} over {fmt_int(ext.base)}; vLLM: --hf-overrides, SGLang: "
        f"--json-model-override-args, with the same object and --max-model-len {T}), ideally with a short "
        f"fine-tune{now}; or chunk to <= {fmt_int(c.covered)} tokens ({-(-T // c.covered)} chunks)")


def _fits_word(fits: bool | None) -> str:
    return "no such vLLM --kv-cache-dtype" if fits is None else "fits" if fits else "does not fit"


def more_gpus(st: Accounts, T: int, causal_skip: bool) -> Fallback:
    """The fewest GPUs that fit without changing precision: from the one search (planner/search.py)
    for a GPU plan, else the fewest head-compatible GPUs the plan's own account fits."""
    from multihead.planner.decision import engine_decides
    if engine_decides(st, T):
        return _more_gpus_searched(st, T, causal_skip)
    s = st.spec
    H, Hkv = s.num_heads, s.num_kv_heads
    for n in range(2, min(H, 1024) + 1):
        if H % n or (s.mla is None and Hkv % n and n % Hkv):
            continue
        m = st.memory(T, gpus=n)
        if m.fits:
            wide = st.with_gpus(n)
            att = wide.attention_seconds(wide.attention_flops(T, causal=causal_skip), T, causal=causal_skip)
            pre = wide.prefill(T, causal_skip=causal_skip)[0]
            return Fallback("more_gpus", f"tensor parallelism over {n} GPUs",
                            {"gpus": n, "memory_per_gpu_bytes": m.total_bytes, "kv_cache_per_gpu_bytes": m.kv_cache_bytes,
                             "attention_prefill_seconds": att, "prefill_seconds": pre}, True,
                            f"{n} GPUs (H={H}, H_kv={Hkv} divide): {fmt_bytes(m.total_bytes)} per GPU, "
                            f"prefill ~{fmt_seconds(pre)} per pass before communication")
    return Fallback("more_gpus", "tensor parallelism", {"gpus": None}, False,
                    f"no head-compatible GPU count up to H = {H} fits")


def _more_gpus_searched(st: Accounts, T: int, causal_skip: bool) -> Fallback:
    e = st.engine
    same = [(c, a) for c, a in (e.found or []) if c.kv_cache_dtype == e.request.kv_cache_dtype
            and c.quantization == e.request.quantization]
    if not same:
        return Fallback("more_gpus", "tensor / pipeline parallelism", {"gpus": None}, False,
                        "no TP up to one node (x PP up to 4) fits one request without changing precision "
                        "(the one search, planner/search.py)")
    c, a = same[0]
    n, pp = c.tensor_parallel_size, c.pipeline_parallel_size
    wide = st.with_gpus(n)
    m = wide.memory(T)
    pre = wide.prefill(T, causal_skip=causal_skip)[0]
    where = f"TP {n}" + (f" x PP {pp}" if pp > 1 else "")
    return Fallback("more_gpus", f"tensor parallelism over {n * pp} GPUs ({where})",
                    {"gpus": n * pp, "tensor_parallel_size": n, "pipeline_parallel_size": pp,
                     "memory_per_gpu_bytes": m.total_bytes, "kv_cache_per_gpu_bytes": m.kv_cache_bytes,
                     "max_concurrency": a.max_concurrency, "prefill_seconds": pre}, True,
                    f"{n * pp} GPUs ({where}; the cheapest setting of the one search that keeps the precision): "
                    f"{a.max_concurrency:.2f} requests of {fmt_int(T)} tokens, {a.kv_cache_gib:.2f} GiB KV per GPU, "
                    f"prefill ~{fmt_seconds(pre)} (GPU-time model, all-reduces included)")


def weight_quantization(st: Accounts, T: int) -> Fallback | None:
    now = st.weights().total
    rows = []
    for name in ("fp8", "int8", "int4"):
        flag = WEIGHTS_DTYPE_QUANT[name]
        m = st.memory(T, quantization=from_flag(flag))
        if m.weights_bytes < now:
            rows.append({"weights_dtype": name, "weights_bytes": m.weights_bytes, "total_memory_bytes": m.total_bytes,
                         "fits": one_pass_fits(st, T, m, quantization=flag)})
    if not rows:
        return None
    return Fallback("weight_quantization", "store the weights in fewer bits (layers only; embeddings stay 16-bit)",
                    {"options": rows}, any(r["fits"] for r in rows),
                    "; ".join(f"{r['weights_dtype']}: weights {fmt_bytes(r['weights_bytes'])}, total "
                              f"{fmt_bytes(r['total_memory_bytes'])}, {'fits' if r['fits'] else 'does not fit'}"
                              for r in rows))


def reuse_kv(fits: bool, passes: int, prefill: float) -> Fallback | None:
    if passes <= 1:
        return None
    saved = prefill * (passes - 1)
    return Fallback("reuse_kv_across_passes", "prefix caching: keep the document's KV cache between passes",
                    {"prefill_seconds_saved": saved, "prefill_seconds_all_passes": prefill}, fits,
                    f"if the {passes} passes share the document as a prefix (instructions after it), prefill once: "
                    f"{fmt_seconds(prefill)} instead of {fmt_seconds(prefill * passes)} (saves {fmt_seconds(saved)})")


def fallbacks(st: Accounts, T: int, passes: int, single: MemoryAccount, prefill: float, quality_report,
              causal_skip: bool) -> list[Fallback]:
    from multihead.planner.decision import engine_decides
    if engine_decides(st, T):       # the engine's account decides: tight when one request does not fit
        fits = st.engine.account.fits
        tight = heavy = not fits
    else:
        fits = single.fits
        tight = not fits or single.total_bytes > 0.9 * st.usable
        heavy = not fits and single.weights_bytes > 0.5 * st.usable
    out = [fewer_kv_heads(st, T, quality_report), kv_quantization(st, T), tiled_attention(st, T, single, fits),
           position_interpolation(st, T), more_gpus(st, T, causal_skip) if tight else None,
           weight_quantization(st, T) if heavy else None,
           reuse_kv(fits, passes, prefill)]
    out = [f for f in out if f is not None]
    risky = tight or not positions_ok(st, T)
    for f in out:
        f.needed = (risky or f.name == "reuse_kv_across_passes"
                    or (f.name == "tiled_attention" and st.attention == "materialized"))
    return out


def positions_ok(st: Accounts, T: int) -> bool:
    c = coverage(st.spec)
    return c.covered is None or T <= c.covered


def gqa_quality_lines(path, model_name: str) -> list[str]:
    """Lines from a measured GQA-conversion summary (written by ``multihead heads``), if one exists.
    Read defensively (anything else is ignored): {"model": name, "gqa_quality": [{"kv_heads": n,
    "method": str, "perplexity": x, "baseline_perplexity": y}, ...]}, or a list of such objects."""
    if path is None:
        return []
    try:
        data = read_json(path)      # shared (read-only): parsed once per version of the file
    except (OSError, ValueError):
        return []
    lines = []
    for entry in data if isinstance(data, list) else [data]:
        if not isinstance(entry, dict) or not isinstance(entry.get("gqa_quality"), list):
            continue
        measured_on = str(entry.get("model", "unknown model"))
        same = measured_on.lower() == model_name.lower()
        for row in entry["gqa_quality"]:
            try:
                ppl, base, n = float(row["perplexity"]), float(row["baseline_perplexity"]), int(row["kv_heads"])
            except (KeyError, TypeError, ValueError):
                continue
            lines.append(f"measured{'' if same else f' on {measured_on} (not this model)'}: H_kv -> {n} "
                         f"({row.get('method', '?')}): perplexity {ppl:.4g} vs {base:.4g} ({ppl / base - 1:+.1%})")
    return lines
