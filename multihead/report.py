"""Rendering a ``Plan``: rich tables for people, the derivation (--explain), JSON, and a memory plot.

Units for people: bytes in GB (1e9, as GPU datasheets count), FLOPs in TFLOP (1e12), times in
s or ms. JSON keeps raw numbers (bytes, FLOPs, seconds).
"""
from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from multihead.planner import Plan, _passes, longest_fitting_context, memory_curve


# -- human units ------------------------------------------------------------------------------------
def fmt_bytes(x: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:,.2f} {unit}" if unit != "TB" else f"{x / scale:,.2f} TB ({x / 1e9:,.0f} GB)"
    return f"{x:,.0f} B"


def fmt_flops(x: float) -> str:
    return f"{x / 1e12:,.0f} TFLOP ({x:.2e})" if x >= 1e12 else f"{x / 1e9:,.2f} GFLOP ({x:.2e})"


def fmt_seconds(x: float) -> str:
    if x >= 1:
        return f"{x:,.1f} s"
    if x >= 1e-3:
        return f"{x * 1e3:,.2f} ms"
    return f"{x * 1e6:,.1f} us"


def fmt_count(x: float) -> str:
    return f"{x / 1e9:,.2f} B ({x:,.0f})" if x >= 1e9 else f"{x / 1e6:,.2f} M ({x:,.0f})"


# -- JSON -------------------------------------------------------------------------------------------
def to_json(p: Plan) -> str:
    """One JSON object: every field of the plan (bytes, FLOPs, seconds as plain numbers)."""
    return json.dumps(p.to_dict(), indent=2)


# -- tables -----------------------------------------------------------------------------------------
def render(p: Plan, console: Console | None = None, explain: bool = False) -> None:
    """Print the plan as tables: inputs, parameters, memory, time (one pass vs chunks), decision."""
    con = console or _console()
    c = p.chunked
    con.print(f"[bold]{p.model}[/bold] ({p.attention_kind}: L={p.n_layers}, H={p.n_heads}, H_kv={p.n_kv_heads}, "
              f"d_k={p.head_dim}, D={p.d_model}; weights {p.weights_dtype}, KV {p.kv_dtype}) - {p.model_source}")
    con.print(f"Workload: T={p.tokens:,} tokens, batch {p.batch}, {_passes(p.passes)}.  "
              f"GPU: {p.device} x{p.gpus} ({fmt_bytes(p.gpu_memory_bytes)}, usable {fmt_bytes(p.usable_memory_bytes)}; "
              f"{p.effective_tflops:,.4g} TFLOP/s and {p.effective_bandwidth_tbps:,.4g} TB/s effective) - {p.device_source}")
    con.print(f"[bold]Answer: {_verdict(p)}[/bold] ({fmt_bytes(p.total_memory_bytes)} for one pass vs "
              f"{fmt_bytes(p.usable_memory_bytes)} usable; details below)")

    t = Table(title="Parameters", title_justify="left")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("formula")
    t.add_row("attention, per layer", fmt_count(p.attention_params_per_layer), "2*D*H*d_k + 2*D*H_kv*d_k")
    t.add_row("attention, all layers", fmt_count(p.attention_params), "L * per layer")
    if p.params_architecture is not None:
        t.add_row("model, from the architecture", fmt_count(p.params_architecture),
                  "embedding + LM head + L*(attention + MLP + norms)")
    if p.params_published is not None:
        t.add_row("model, published", fmt_count(p.params_published), "model card")
    t.add_row("model, used", fmt_count(p.params), "stated" if p.params_architecture is None or
              p.params != p.params_architecture else "architecture")
    con.print(t)

    t = Table(title=f"Memory per GPU (one pass vs {c['chunks']} chunks)", title_justify="left")
    t.add_column("quantity")
    t.add_column("one pass", justify="right")
    t.add_column(f"{c['chunks']} chunks of {c['chunk_tokens']:,}", justify="right")
    t.add_column("formula")
    t.add_row("KV cache per token" + (" (all GPUs)" if p.gpus > 1 else ""), fmt_bytes(p.kv_cache_bytes_per_token), "",
              "2 * L * H_kv * d_k * bytes")
    t.add_row("KV cache", fmt_bytes(p.kv_cache_bytes), fmt_bytes(c["kv_cache_bytes"]), "per token * T * B (window-capped)")
    t.add_row("weights", fmt_bytes(p.weights_bytes), fmt_bytes(p.weights_bytes), "params * bytes")
    t.add_row("workspace (activations)", fmt_bytes(p.workspace_bytes), fmt_bytes(c["workspace_bytes"]),
              "one layer's peak: max(MLP, attention) + logits")
    t.add_row("[bold]total[/bold]", f"[bold]{fmt_bytes(p.total_memory_bytes)}[/bold]",
              f"[bold]{fmt_bytes(c['total_memory_bytes'])}[/bold]", f"vs usable {fmt_bytes(p.usable_memory_bytes)}")
    t.add_row("fits?", _yes(p.fits), _yes(c["fits"]), "")
    t.add_row("score matrix, one layer, materialized", fmt_bytes(p.score_matrix_bytes_per_layer), "",
              "B * H * T^2 * bytes (never stored when tiled)")
    t.add_row("tiled attention state, one layer", fmt_bytes(p.tiled_attention_bytes_per_layer), "",
              "B * H * T * (d_k + 2) * 4")
    con.print(t)

    t = Table(title="Compute and time", title_justify="left")
    t.add_column("quantity")
    t.add_column("one pass", justify="right")
    t.add_column(f"{c['chunks']} chunks", justify="right")
    t.add_column("formula")
    t.add_row("attention FLOPs (the text's count)", fmt_flops(p.attention_flops), fmt_flops(c["attention_flops"]),
              "4 * T^2 * (H*d_k) * L * B")
    t.add_row("attention FLOPs, causal", fmt_flops(p.attention_flops_causal), fmt_flops(c["attention_flops_causal"]),
              "kept pairs T(T+1)/2: about half")
    basis = "causal count (--causal-skip)" if p.causal_skip else "full count"
    t.add_row(f"attention prefill, per pass ({basis})", fmt_seconds(p.attention_prefill_seconds),
              fmt_seconds(c["attention_prefill_seconds"]), "FLOPs / effective FLOP/s")
    t.add_row(f"attention prefill, {_passes(p.passes)}", fmt_seconds(p.attention_prefill_seconds_all_passes),
              fmt_seconds(c["attention_prefill_seconds_all_passes"]), "")
    t.add_row("linear layers, per pass", fmt_seconds(p.linear_prefill_seconds), fmt_seconds(p.linear_prefill_seconds),
              "2 * N_non_embedding * T * B FLOPs")
    t.add_row(f"prefill, {_passes(p.passes)}", fmt_seconds(p.prefill_seconds_all_passes),
              fmt_seconds(c["prefill_seconds_all_passes"]), "(attention + linear) * passes")
    t.add_row("decode: KV read per token", fmt_seconds(p.decode_kv_read_seconds),
              fmt_seconds(c["decode_kv_read_seconds"]), "KV bytes / bandwidth")
    t.add_row("decode: weight read per token", fmt_seconds(p.decode_weight_read_seconds),
              fmt_seconds(p.decode_weight_read_seconds), "weight bytes / bandwidth")
    t.add_row("decode per token", fmt_seconds(p.decode_seconds_per_token), fmt_seconds(c["decode_seconds_per_token"]),
              "(KV + weights) / bandwidth")
    t.add_row("tokens/s", f"{p.tokens_per_second:,.1f} (KV only {p.tokens_per_second_kv_only:,.0f})",
              f"{c['tokens_per_second']:,.1f}", "B / decode per token")
    con.print(t)

    style = "green" if p.decision_fits else "red"
    con.print(f"\n[bold {style}]Decision: {_verdict(p)}[/bold {style}] - {p.reason}.")
    con.print(f"What chunking loses: {p.chunking_loses}")

    if p.fallbacks:
        needed = any(f.needed for f in p.fallbacks if f.name != "reuse_kv_across_passes")
        t = Table(title="Fallbacks" + ("" if needed else " (not needed: the plan fits with headroom; for reference)"),
                  title_justify="left")
        t.add_column("fallback")
        t.add_column("what")
        t.add_column("effect")
        for f in p.fallbacks:
            t.add_row(f.name, f.action, f.text)
        con.print(t)
        for f in p.fallbacks:
            for note in f.notes:
                con.print(f"  {f.name}: {note}", markup=False, highlight=False)
    if p.warnings:
        con.print("[bold yellow]Warnings[/bold yellow]")
        for w in p.warnings:
            con.print(f"  - {w}", markup=False)
    if explain:
        render_explain(p, con)


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
    con = Console()
    return con if con.is_terminal else Console(width=120)


def _yes(flag: bool) -> str:
    return "[green]yes[/green]" if flag else "[red]no[/red]"


# -- the plot ---------------------------------------------------------------------------------------
def plot_memory(p: Plan, path: str | Path) -> Path:
    """Memory per GPU versus context length at H_kv = H, the model's H_kv and 1, with the GPU's memory.

    Each curve is marked where it stops fitting (the longest single pass that fits).
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    top = max(4 * p.tokens, 8192)
    grid = sorted({int(round(1024 * (top / 1024) ** (i / 80))) for i in range(81)} | {p.tokens})
    fig, ax = plt.subplots(figsize=(8, 5))
    for kv, style in sorted({(p.n_heads, "-"), (p.n_kv_heads, "--"), (1, ":")}, reverse=True):
        label = "MHA" if kv == p.n_heads else ("MQA" if kv == 1 else f"GQA-{kv}")
        label += f" (H_kv={kv}{', this model' if kv == p.n_kv_heads else ''})"
        ys = [b / 1e9 for b in memory_curve(p, grid, kv_heads=kv)]
        (line,) = ax.plot(grid, ys, style, label=label)
        limit = longest_fitting_context(p, kv_heads=kv)
        if 0 < limit < grid[-1]:
            y = memory_curve(p, [limit], kv_heads=kv)[0] / 1e9
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
    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
