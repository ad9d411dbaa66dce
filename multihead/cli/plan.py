"""``multihead plan``: size a model on a GPU for T tokens and decide one pass or chunks."""
from __future__ import annotations

import argparse

DTYPES = ["fp32", "fp16", "bf16", "fp8", "int8", "int4"]

EXAMPLES = """examples:
  multihead plan example-13b-gqa8 --tokens 128000 --passes 3 --gpu-memory-gb 80 --effective-tflops 100 --bandwidth-tbps 2
  multihead plan --params 13e9 --layers 40 --heads 40 --kv-heads 8 --head-dim 128 --tokens 128000 \\
      --gpu-memory-gb 80 --effective-tflops 100 --bandwidth-tbps 2 --explain
  multihead plan Llama-3.1-8B --tokens 131072 --gpu H100-SXM --kv-dtype fp8 --json
  multihead plan path/to/config.json --tokens 32768 --device profile.json --plot memory.png
  multihead plan --list
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plan", help="parameters, compute and memory of a model on a GPU; one pass or chunks, and fallbacks",
        description="The three accounts (parameters, compute, memory) for T tokens of a model on a GPU, the "
                    "prefill and decode times, and the decision: one full pass or chunks, with fallbacks when it "
                    "does not fit. Attention FLOPs follow the reference text (4*T^2*D*L, no causal halving); "
                    "the causal count is reported beside them.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", help="catalog model name (see --list), a HuggingFace config.json path, "
                                            "or a model folder holding one")
    g = p.add_argument_group("model overrides (or a model from flags alone)")
    g.add_argument("--params", type=float, help="total parameters, e.g. 13e9 (overrides the architecture count)")
    g.add_argument("--layers", type=int, help="L, decoder layers")
    g.add_argument("--heads", type=int, help="H, query heads")
    g.add_argument("--kv-heads", type=int, help="H_kv, key/value heads (default: H, i.e. MHA)")
    g.add_argument("--head-dim", type=int, help="d_k (default: hidden / heads)")
    g.add_argument("--hidden", type=int, help="D = hidden_size (default without a model: heads * head_dim)")
    g.add_argument("--intermediate", type=int, help="MLP width I (intermediate_size)")
    g.add_argument("--vocab", type=int, help="vocabulary size")
    g.add_argument("--max-position", type=int, help="training length (max_position_embeddings)")
    w = p.add_argument_group("workload and precision")
    w.add_argument("--tokens", type=int, required=False, help="T, tokens of one input (required)")
    w.add_argument("--batch", type=int, default=1, help="B, sequences at once (default 1)")
    w.add_argument("--passes", type=int, default=1, help="passes over the same input (the text makes 3; default 1)")
    w.add_argument("--chunks", type=int, help="evaluate this split instead of choosing the fewest chunks that fit")
    w.add_argument("--weights-dtype", choices=DTYPES, help="weight storage (default: the config's torch_dtype, else fp16)")
    w.add_argument("--kv-dtype", choices=DTYPES, help="KV cache storage (default: the activation dtype)")
    w.add_argument("--attention", choices=["tiled", "materialized"], default="tiled",
                   help="tiled (FlashAttention-style, default) or a materialized [B,H,T,T] score matrix")
    w.add_argument("--causal-skip", action="store_true",
                   help="time attention by the causal FLOP count (kernels that skip masked blocks)")
    d = p.add_argument_group("GPU")
    d.add_argument("--gpu", "--device", dest="device", metavar="NAME_OR_PROFILE",
                   help="catalog GPU (see --list) or a measured profile JSON from `multihead calibrate`")
    d.add_argument("--gpu-memory-gb", type=float, help="GPU memory in GB (1e9 B)")
    d.add_argument("--effective-tflops", type=float, help="sustained matmul TFLOP/s (already effective)")
    d.add_argument("--bandwidth-tbps", type=float, help="sustained memory bandwidth in TB/s (already effective)")
    d.add_argument("--flops-efficiency", type=float,
                   help="fraction of a catalog GPU's peak FLOP/s reached (default 0.5, see devices.py)")
    d.add_argument("--bandwidth-efficiency", type=float,
                   help="fraction of a catalog GPU's bandwidth reached (default 0.8, see devices.py)")
    d.add_argument("--gpus", type=int, default=1, help="tensor-parallel GPUs (must divide H and fit H_kv)")
    d.add_argument("--memory-utilization", type=float, default=0.9,
                   help="fraction of GPU memory usable (default 0.9: CUDA context, fragmentation)")
    o = p.add_argument_group("output")
    o.add_argument("--explain", action="store_true", help="print every formula with the numbers substituted")
    o.add_argument("--json", action="store_true", help="print one JSON object")
    o.add_argument("--plot", metavar="FILE.png", help="write memory vs context length (H_kv = H, actual, 1)")
    o.add_argument("--html", metavar="FILE.html", type=_html_path,
                   help="write the planner page's view of this plan as one self-contained HTML file")
    o.add_argument("--list", action="store_true", help="list the catalog models and GPUs")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead import planner, report

    if args.list:
        return _list()
    if args.tokens is None:
        raise ValueError("tokens: expected --tokens T (a positive integer)")
    p = planner.plan(
        args.model, tokens=args.tokens, batch=args.batch, passes=args.passes, chunks=args.chunks,
        params=args.params, layers=args.layers, heads=args.heads, kv_heads=args.kv_heads, head_dim=args.head_dim,
        hidden=args.hidden, intermediate=args.intermediate, vocab=args.vocab, max_position=args.max_position,
        weights_dtype=args.weights_dtype, kv_dtype=args.kv_dtype, device=args.device,
        gpu_memory_gb=args.gpu_memory_gb, effective_tflops=args.effective_tflops, bandwidth_tbps=args.bandwidth_tbps,
        flops_efficiency=args.flops_efficiency, bandwidth_efficiency=args.bandwidth_efficiency, gpus=args.gpus,
        memory_utilization=args.memory_utilization, attention=args.attention, causal_skip=args.causal_skip)
    if args.plot:
        report.plot_memory(p, args.plot)
    if args.html:
        from multihead.web.report import write_report
        write_report(args.html, args)
    if args.json:
        print(report.to_json(p))
    else:
        report.render(p, explain=args.explain)
        if args.plot:
            print(f"plot written to {args.plot}")
        if args.html:
            print(f"report written to {args.html}")
    return 0


def _html_path(text: str):
    from multihead.cli import _args
    return _args.output_file(suffixes=(".html", ".htm"))(text)


def _list() -> int:
    from rich.console import Console
    from rich.table import Table

    from multihead.configs import catalog_model, model_catalog
    from multihead.devices import gpu_catalog

    t = Table(title="Models")
    for col in ("name", "D", "L", "H", "H_kv", "d_k", "max pos", "source"):
        t.add_column(col)
    for name in model_catalog():
        s = catalog_model(name)
        t.add_row(name, str(s.hidden_size), str(s.num_layers), str(s.num_heads), str(s.num_kv_heads),
                  str(s.head_dim), str(s.max_position_embeddings or "?"), s.source.split(" (")[0])
    t2 = Table(title="GPUs")
    for col in ("name", "memory GB", "TB/s", "fp16 TFLOP/s", "source"):
        t2.add_column(col)
    for name, e in gpu_catalog().items():
        t2.add_row(name, f"{e['memory_gb']:g}", f"{e['bandwidth_tbps']:g}", f"{e['matmul_tflops'].get('fp16', 0):g}",
                   e["source"])
    con = Console()
    con.print(t)
    con.print(t2)
    return 0
