"""``multihead demo``: the attention core at a glance (softmax numbers, exactness, tiled memory)."""
from __future__ import annotations

from multihead import jsonout
from multihead.cli import _args as A

# The memory measurement runs causal tiled attention at T tokens: T^2 d FLOPs, ~10 s at this bound
# on a 2-core CPU; beyond it the demo would run for minutes (the memory story is already told).
MAX_DEMO_TOKENS = 65_536


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "demo", help="a short tour of the attention core: softmax, exactness vs SDPA, tiled memory",
        description="Print softmax's worked numbers (including (1000, 999, 998), where a naive exp "
                    "overflows), the error of every attention backend against torch SDPA and a float64 "
                    "reference on a causal GQA case, and the tiled backend's measured peak extra memory "
                    "at --tokens tokens next to the T x T score matrix it avoids.")
    p.add_argument("--tokens", type=A.int_range(1, MAX_DEMO_TOKENS), default=8192, metavar="T",
                   help=f"sequence length for the memory measurement, 1 to {MAX_DEMO_TOKENS:,} (default 8192)")
    p.add_argument("--seed", type=A.SEED, default=0, help="random seed, 0 to 2^32-1 (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.set_defaults(func=run)


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)


def run(args) -> int:
    from multihead.demo import run_demo
    result = run_demo(tokens=args.tokens, seed=args.seed, progress=not args.json)
    if args.json:
        print(jsonout.dumps(result))
        return 0
    from rich.console import Console
    from rich.table import Table
    console = Console()
    t = Table(title="softmax")
    t.add_column("input")
    t.add_column("output", justify="right")
    for name, values in result["softmax"].items():
        t.add_row(name, ", ".join("nan (overflow)" if x is None else f"{x:.3f}" for x in values))
    console.print(t)

    a = result["attention"]
    s = a["shape"]
    t = Table(title=f"attention, causal GQA {s['H']}/{s['H_kv']}, Tq={s['Tq']} after {s['Tk'] - s['Tq']} "
                    f"cached (Tk={s['Tk']}), d={s['d']}, fp32")
    t.add_column("backend")
    t.add_column("max |err| vs SDPA", justify="right")
    t.add_column("max |err| vs float64", justify="right")
    for row in a["backends"]:
        t.add_row(row["backend"], f"{row['max_abs_err_vs_sdpa']:.2e}", f"{row['max_abs_err_vs_fp64']:.2e}")
    t.add_row("(torch SDPA itself)", "", f"{a['sdpa_fp32_err_vs_fp64']:.2e}")
    console.print(t)

    m = result["memory"]
    t = Table(title=f"memory at T={m['tokens']:,} (one head, d={m['head_dim']}, fp32)")
    t.add_column("quantity")
    t.add_column("bytes", justify="right")
    t.add_row("T x T score matrix (what 'reference' would hold)", _bytes(m["score_matrix_bytes"]))
    t.add_row("tiled: measured peak extra allocation", _bytes(m["tiled_peak_extra_bytes"]))
    t.add_row("  of which the output itself (T x d)", _bytes(m["output_bytes"]))
    t.add_row("ratio score matrix / tiled peak", ratio_text(m["score_matrix_bytes"], m["tiled_peak_extra_bytes"]))
    console.print(t)
    return 0


def ratio_text(scores: float, tiled: float) -> str:
    """score matrix / tiled peak with the digits it needs; below 1 (a small T, where tiled's fixed
    block buffers outweigh the T x T matrix) it says how many times MORE tiled holds."""
    if tiled <= 0:
        return "tiled allocated nothing measurable"
    r = scores / tiled
    if r >= 10:
        return f"{r:,.0f}x"
    if r >= 1:
        return f"{r:.1f}x"
    return f"{r:.2g}x (tiled holds {1 / r:.1f}x more)"
