"""Rendering a ``Plan``: rich tables for people, the derivation (--explain), JSON, and a memory plot.

Units for people: bytes in GB (1e9, as GPU datasheets count), FLOPs in TFLOP (1e12), times in
s or ms. JSON keeps raw numbers (bytes, FLOPs, seconds).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from multihead import jsonout
from multihead.cost.spec.units import fmt_bytes, fmt_count, fmt_flops, fmt_passes as _passes, fmt_seconds
from multihead.planner.accounts import max_tokens_that_fit
from multihead.planner.plan import Plan

if TYPE_CHECKING:       # rich is imported by the table functions only: --json never loads it
    from rich.console import Console
    from rich.table import Table


# -- JSON -------------------------------------------------------------------------------------------
def to_json(p: Plan) -> str:
    """One JSON object: every field of the plan (bytes, FLOPs, seconds as plain numbers)."""
    return jsonout.dumps(p.to_dict(), indent=2)


# -- tables -----------------------------------------------------------------------------------------
def render(p: Plan, console: Console | None = None, explain: bool = False) -> None:
    """Print the plan as tables: summary, parameters, memory, time (one pass vs chunks), decision, fallbacks."""
    con = console or _console()
    _summary(p, con)
    con.print(_parameters_table(p))
    con.print(_memory_table(p))
    con.print(_time_table(p))
    style = "green" if p.decision_fits else "red"
    con.print(f"\n[bold {style}]Decision: {_verdict(p)}[/bold {style}] - {p.reason}.", highlight=False)
    con.print(f"What chunking loses: {p.chunking_loses}")
    _fallbacks(p, con)
    for section in p.sections.values():
        if hasattr(section, "render"):
            section.render(con)
    if p.warnings:
        con.print("[bold yellow]Warnings[/bold yellow]")
        for w in p.warnings:
            con.print(f"  - {w}", markup=False)
    if explain:
        render_explain(p, con)


def _summary(p: Plan, con: Console) -> None:
    """Three lines: the model (with MoE / MLA / windows / quantization said), the workload and GPU, the answer."""
    from rich.markup import escape
    features = "".join(f"; {f}" for f in p.model_features)
    con.print(f"[bold]{escape(p.model)}[/bold] " + escape(
        f"({p.attention_kind}: L={p.num_hidden_layers}, H={p.num_attention_heads}, H_kv={p.num_kv_heads}, d_k={p.head_dim}, D={p.hidden_size}"
        f"{features}; weights {p.weights_dtype}, KV {p.kv_dtype}) - {p.model_source}"), highlight=False)
    con.print(f"Workload: T={p.tokens:,} tokens, batch {p.batch}, {_passes(p.passes)}.  "
              f"GPU: {p.device} x{p.tensor_parallel_size} ({fmt_bytes(p.gpu_memory_bytes)}, usable {fmt_bytes(p.usable_memory_bytes)}; "
              f"{p.effective_tflops:,.4g} TFLOP/s and {p.effective_bandwidth_tbps:,.4g} TB/s effective) - {p.device_source}")
    if p.decided_by == "engine":
        a = p.accounts.engine.account
        why = (f"the engine's account: requests of up to {a.max_model_len_fit:,} tokens fit, "
               f"{a.max_concurrency:.2f}x of {p.tokens:,}" if a.fits else
               f"the engine's account: requests of up to {a.max_model_len_fit:,} tokens fit")
    else:
        why = f"{fmt_bytes(p.total_memory_bytes)} for one pass vs {fmt_bytes(p.usable_memory_bytes)} usable"
    con.print(f"[bold]Answer: {_verdict(p)}[/bold] ({why}; details below)")


def _table(title: str, *columns: str) -> Table:
    from rich.table import Table
    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="right" if 0 < i < len(columns) - 1 else "left")
    return t


def _parameters_table(p: Plan) -> Table:
    t = _table("Parameters", "quantity", "value", "formula")
    mla = p.attention_kind == "MLA"
    t.add_row("attention, per layer", fmt_count(p.attention_params_per_layer),
              "q + kv_a + kv_b + o (MLA)" if mla else "2*D*H*d_k + 2*D*H_kv*d_k")
    t.add_row("attention, all layers", fmt_count(p.attention_params), "L * per layer")
    parts = p.params_by_part
    if parts and parts["n_moe_layers"]:
        t.add_row("routed experts, all layers", fmt_count(parts["n_moe_layers"] * parts["num_experts"] * parts["expert"]),
                  f"{parts['n_moe_layers']} layers * {parts['num_experts']} experts * 3*D*I_e")
    if p.params_architecture is not None:
        t.add_row("model, from the architecture", fmt_count(p.params_architecture),
                  "embedding + LM head + L*(attention + MLP or experts + norms)")
    if p.params_active is not None and p.params_active != p.params_architecture:
        t.add_row("model, active per token", fmt_count(p.params_active), "k of E routed experts per MoE layer")
    if p.params_published is not None:
        t.add_row("model, published", fmt_count(p.params_published), "model card")
    t.add_row("model, used", fmt_count(p.params), "stated" if p.params_architecture is None or
              p.params != p.params_architecture else "architecture")
    return t


def _memory_table(p: Plan) -> Table:
    c = p.chunked
    t = _table(f"Memory per GPU (one pass vs {c['chunks']} chunks)", "quantity", "one pass",
               f"{c['chunks']} chunks of {c['chunk_tokens']:,}", "formula")
    t.add_row("KV cache per token" + (" (all GPUs)" if p.tensor_parallel_size > 1 else ""), fmt_bytes(p.kv_cache_bytes_per_token), "",
              "(kv_lora_rank + rope) * L * bytes" if p.attention_kind == "MLA" else "2 * L * H_kv * d_k * bytes")
    t.add_row("KV cache", fmt_bytes(p.kv_cache_bytes), fmt_bytes(c["kv_cache_bytes"]), "per token * T * B (window-capped)")
    quant = p.quantization
    t.add_row("weights", fmt_bytes(p.weights_bytes), fmt_bytes(p.weights_bytes),
              f"16-bit parts + quantized * {quant['bytes_per_weight']:.4g} B" if quant else "params * bytes")
    t.add_row("workspace (activations)", fmt_bytes(p.workspace_bytes), fmt_bytes(c["workspace_bytes"]),
              "one layer's peak: max(MLP, attention) + logits")
    t.add_row("[bold]total[/bold]", f"[bold]{fmt_bytes(p.total_memory_bytes)}[/bold]",
              f"[bold]{fmt_bytes(c['total_memory_bytes'])}[/bold]", f"vs usable {fmt_bytes(p.usable_memory_bytes)}")
    if p.decided_by == "engine":      # decision.engine_decides: the engine's account decides
        longest = p.accounts.engine.account.max_model_len_fit
        t.add_row("fits? (one unchunked forward)", _yes(p.total_memory_bytes <= p.usable_memory_bytes),
                  _yes(c["fits"]), "the reference text's account")
        t.add_row("fits? (the engine's account: decides)", _yes(p.fits), "",
                  f"{p.accounts.engine.request.engine}'s account (serving section): requests of up to {longest:,} tokens")
    else:
        t.add_row("fits?", _yes(p.fits), _yes(c["fits"]), "")
    t.add_row("score matrix, one layer, materialized", fmt_bytes(p.score_matrix_bytes_per_layer), "",
              "B * H * T^2 * bytes (never stored when tiled)")
    t.add_row("tiled attention state, one layer", fmt_bytes(p.tiled_attention_bytes_per_layer), "",
              "B * H * T * (d_k + 2) * 4")
    return t


def _time_table(p: Plan) -> Table:
    c = p.chunked
    t = _table("Compute and time", "quantity", "one pass", f"{c['chunks']} chunks", "formula")
    t.add_row("attention FLOPs (the text's count)", fmt_flops(p.attention_flops), fmt_flops(c["attention_flops"]),
              "4 * T^2 * (H*d_k) * L * B")
    t.add_row("attention FLOPs, causal", fmt_flops(p.attention_flops_causal), fmt_flops(c["attention_flops_causal"]),
              "kept pairs T(T+1)/2: about half")
    basis = "causal count (--causal-skip)" if p.causal_skip else "the text's count"
    gpu = p.compute.prefill_terms is not None       # one time model: the GPU-time model (else the CPU profile)
    rows = [(f"attention prefill, per pass ({basis})", p.attention_prefill_seconds, c["attention_prefill_seconds"],
             "FLOPs / effective FLOP/s" + (" (the GPU-time model's rate)" if gpu else "")),
            ("attention prefill, per pass (causal kernel)", p.attention_prefill_seconds_causal, None,
             "causal FLOPs / effective FLOP/s (FlashAttention-class: masked tiles skipped)"
             + ("; the GPU-time model's attention term" if gpu else "")),
            (f"attention prefill, {_passes(p.passes)} ({basis})", p.attention_prefill_seconds_all_passes,
             c["attention_prefill_seconds_all_passes"], ""),
            ("linear layers, per pass", p.linear_prefill_seconds, p.linear_prefill_seconds,
             "the GPU-time model's linear term (2 FLOPs per active weight per token)" if gpu
             else "2 * N_non_embedding * T * B FLOPs"),
            (f"prefill, {_passes(p.passes)}", p.prefill_seconds_all_passes, c["prefill_seconds_all_passes"],
             "GPU-time model: max(linear + causal attention, memory) + fixed costs + TP all-reduces, * passes"
             if gpu else "(attention + linear) * passes"),
            ("decode: KV read per token", p.decode_kv_read_seconds, c["decode_kv_read_seconds"],
             "KV bytes / (bandwidth x fitted efficiency)" if gpu else "KV bytes / bandwidth"),
            ("decode: weight read per token", p.decode_weight_read_seconds, p.decode_weight_read_seconds,
             "active weight bytes / bandwidth" if p.decode_experts_read else "weight bytes / bandwidth"),
            ("decode per token", p.decode_seconds_per_token, c["decode_seconds_per_token"],
             "GPU-time model: max(compute, memory) + fixed costs + TP all-reduces" if p.decode_terms
             else "(KV + weights) / bandwidth + the profile's terms")]
    for name, one, chunked, formula in rows:
        t.add_row(name, fmt_seconds(one), fmt_seconds(chunked) if chunked is not None else "", formula)
    t.add_row("tokens/s", f"{p.tokens_per_second:,.1f} (KV only {p.tokens_per_second_kv_only:,.0f})",
              f"{c['tokens_per_second']:,.1f}", "B / decode per token")
    return t


def _fallbacks(p: Plan, con: Console) -> None:
    if not p.fallbacks:
        return
    from rich.table import Table
    needed = any(f.needed for f in p.fallbacks if f.name != "reuse_kv_across_passes")
    t = Table(title="Fallbacks" + ("" if needed else " (not needed: the plan fits with headroom; for reference)"),
              title_justify="left")
    for col in ("fallback", "what", "effect"):
        t.add_column(col)
    for f in p.fallbacks:
        t.add_row(f.name, f.action, f.text)
    con.print(t)
    for f in p.fallbacks:
        for note in f.notes:
            con.print(f"  {f.name}: {note}", markup=False, highlight=False)


def render_explain(p: Plan, console: Console | None = None) -> None:
    """Every formula with the numbers substituted, one line each."""
    con = console or _console()
    con.print("[bold]How each number was derived[/bold]")
    for i, line in enumerate(p.explain, 1):
        con.print(f"{i:>2}. {line}", markup=False, highlight=False)


def _verdict(p: Plan) -> str:
    verdict = {"single_pass": "ONE FULL PASS", "chunked": f"CHUNKED into {p.chunks} pieces",
               "does_not_fit": "DOES NOT FIT"}[p.decision]
    # a requested split (--chunks) is evaluated, not chosen: say when it does not fit
    return verdict if p.decision_fits or p.decision == "does_not_fit" else f"{verdict}, WHICH DOES NOT FIT"


def _console() -> Console:
    """Rich's console; piped output gets 120 columns instead of rich's default 80."""
    from rich.console import Console
    con = Console()
    return con if con.is_terminal else Console(width=120)


def _yes(flag: bool) -> str:
    return "[green]yes[/green]" if flag else "[red]no[/red]"


# -- the plot ---------------------------------------------------------------------------------------
def plot_memory(p: Plan, path: str | Path) -> Path:
    """Write memory_figure(p) to ``path`` (format from the extension)."""
    from multihead.figures import save
    return Path(save(memory_figure(p), path))


def memory_figure(p: Plan):
    """Memory per GPU versus context length at H_kv = H, the model's H_kv and 1, with the GPU's memory.

    Each curve is marked where it stops fitting (the longest single pass that fits).
    """
    from multihead.figures import plt

    top = max(4 * p.tokens, 8192)
    grid = sorted({int(round(1024 * (top / 1024) ** (i / 80))) for i in range(81)} | {p.tokens})
    fig, ax = plt.subplots(figsize=(8, 5))
    for kv, style in sorted({(p.num_attention_heads, "-"), (p.num_kv_heads, "--"), (1, ":")}, reverse=True):
        label = "MHA" if kv == p.num_attention_heads else ("MQA" if kv == 1 else f"GQA-{kv}")
        label += f" (H_kv={kv}{', this model' if kv == p.num_kv_heads else ''})"
        ys = [p.accounts.memory(t, kv_heads=kv).total_bytes / 1e9 for t in grid]
        (line,) = ax.plot(grid, ys, style, label=label)
        limit = max_tokens_that_fit(p.accounts, kv)
        if 0 < limit < grid[-1]:
            y = p.accounts.memory(limit, kv_heads=kv).total_bytes / 1e9
            ax.plot([limit], [y], "o", color=line.get_color())
            ax.annotate(f"{limit:,}", (limit, y), textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.axhline(p.gpu_memory_bytes / 1e9, color="black", lw=1, label=f"GPU memory {p.gpu_memory_bytes / 1e9:,.0f} GB")
    ax.axhline(p.usable_memory_bytes / 1e9, color="gray", lw=1, ls="-.",
               label=f"usable {p.usable_memory_bytes / 1e9:,.0f} GB")
    ax.axvline(p.tokens, color="gray", lw=0.8, ls=":", label=f"this plan: T = {p.tokens:,}")
    ax.set_ylim(0, 2.5 * p.gpu_memory_bytes / 1e9)
    ax.set_xscale("log")
    ax.set_xlabel("context length T (tokens)")
    ax.set_ylabel("memory per GPU (GB): weights + KV cache + workspace")
    ax.set_title(f"{p.model} on {p.device}: one pass, batch {p.batch}")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    return fig
