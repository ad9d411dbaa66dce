"""``multihead plan``: size a model on a GPU for T tokens and decide one pass or chunks."""
from __future__ import annotations

import argparse

from multihead.cli import _args as A

from multihead.planner.request import DTYPES, MAX_PLAN_TOKENS, QUANTIZATIONS
_SIZE = A.int_range(1, 1 << 24)

EXAMPLES = """examples:
  multihead plan example-13b-gqa8 --tokens 128000 --passes 3 --gpu-memory-gb 80 --effective-tflops 100 --bandwidth-tbps 2
  multihead plan --params 13e9 --layers 40 --heads 40 --kv-heads 8 --head-dim 128 --tokens 128000 \\
      --gpu-memory-gb 80 --effective-tflops 100 --bandwidth-tbps 2 --explain
  multihead plan Llama-3.1-8B --tokens 131072 --gpu H100-SXM --kv-dtype fp8 --json
  multihead plan Mixtral-8x7B --tokens 32768 --gpu H100-SXM --gpus 2 --quantization awq
  multihead plan path/to/config.json --tokens 32768 --device profile.json --plot memory.png
  multihead plan --list
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plan", help="parameters, compute and memory of a model on a GPU; one pass or chunks, and fallbacks",
        description="The three accounts (parameters, compute, memory) for T tokens of a model on a GPU, the "
                    "prefill and decode times, and the decision: one full pass or chunks, with fallbacks when it "
                    "does not fit. Dense, MoE, MLA, sliding-window and quantized models from a plain config.json. "
                    "Attention FLOPs follow the reference text (4*T^2*D*L, no causal halving); the causal count "
                    "is reported beside them.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", help="catalog model name (see --list), a HuggingFace config.json path, "
                                            "or a model folder holding one")
    g = p.add_argument_group("model overrides (or a model from flags alone)")
    g.add_argument("--params", type=A.int_range(0, 10 ** 15), help="total parameters, e.g. 13e9 (overrides the "
                                                                  "architecture count)")
    for flag, text in (("--layers", "L, decoder layers"), ("--heads", "H, query heads"),
                       ("--kv-heads", "H_kv, key/value heads (default: H, i.e. MHA)"),
                       ("--head-dim", "d_k (default: hidden / heads)"),
                       ("--hidden", "D = hidden_size (default without a model: heads * head_dim)"),
                       ("--intermediate", "MLP width I (intermediate_size)"), ("--vocab", "vocabulary size"),
                       ("--max-position", "training length (max_position_embeddings)")):
        g.add_argument(flag, type=A.int_range(1, 1 << 40) if flag == "--max-position" else _SIZE, help=text)
    _workload_args(p.add_argument_group("workload and precision"))
    _device_args(p.add_argument_group("GPU"))
    from multihead.cli.serving import add_engine_flags
    add_engine_flags(p, for_plan=True)      # the serving section's flags, vLLM's names (issue 13)
    from multihead.cli.gpu_time import add_request_flags
    add_request_flags(p)                     # --input-len / --output-len of the serving times (issue 14)
    from multihead.cli._search import add_search_flags
    add_search_flags(p)                      # --search, --slo, --objective ... (issue 29)
    o = p.add_argument_group("output")
    o.add_argument("--explain", action="store_true", help="print every formula with the numbers substituted")
    o.add_argument("--json", action="store_true", help="print one JSON object")
    o.add_argument("--plot", metavar="FILE.png", type=A.output_file(suffixes=(".png", ".svg", ".pdf")),
                   help="write memory vs context length (H_kv = H, actual, 1) to FILE (.png, .svg or .pdf)")
    o.add_argument("--html", metavar="FILE.html", type=_html_path,
                   help="write the planner page's view of this plan as one self-contained HTML file")
    o.add_argument("--list", action="store_true", help="list the catalog models and GPUs")
    p.set_defaults(func=run)


def _workload_args(w) -> None:
    w.add_argument("--tokens", type=A.int_range(1, MAX_PLAN_TOKENS),
                   help="T, tokens of one input (default: --max-model-len, else the model's training length)")
    w.add_argument("--batch", type=A.int_range(1, A.MAX_COUNT), default=1, help="B, sequences at once (default 1)")
    w.add_argument("--passes", type=A.int_range(1, A.MAX_COUNT), default=1,
                   help="passes over the same input (the text makes 3; default 1)")
    w.add_argument("--chunks", type=A.int_range(1, MAX_PLAN_TOKENS),
                   help="evaluate this split instead of choosing the fewest chunks that fit")
    w.add_argument("--weights-dtype", choices=DTYPES,
                   help="weight storage (default: the config's torch_dtype as engines serve it: float32 -> bf16); "
                        "fp8/int8/int4 quantize the layers, embeddings stay 16-bit")
    w.add_argument("--quantization", choices=QUANTIZATIONS,
                   help="vLLM's --quantization: weight format of the layers (default: the config's "
                        "quantization_config, if any)")
    w.add_argument("--kv-dtype", choices=DTYPES, help="KV cache storage (default: the activation dtype)")
    w.add_argument("--attention", choices=["tiled", "materialized"], default="tiled",
                   help="tiled (FlashAttention-style, default) or a materialized [B,H,T,T] score matrix")
    w.add_argument("--causal-skip", action="store_true",
                   help="time attention by the causal FLOP count (kernels that skip masked blocks)")


def _device_args(d) -> None:
    d.add_argument("--gpu", "--device", dest="device", metavar="NAME_OR_PROFILE",
                   help="catalog GPU (see --list; 'H100' is H100-SXM) or a measured profile JSON from "
                        "`multihead calibrate` (default H100-SXM, unless --gpu-memory-gb, --effective-tflops "
                        "and --bandwidth-tbps describe the GPU)")
    d.add_argument("--gpu-memory-gb", type=A.GPU_MEMORY_GB, help="GPU memory in GB (1e9 B)")
    d.add_argument("--effective-tflops", type=A.EFFECTIVE_TFLOPS, help="sustained matmul TFLOP/s (already effective)")
    d.add_argument("--bandwidth-tbps", type=A.BANDWIDTH_TBPS,
                   help="sustained memory bandwidth in TB/s (already effective)")
    d.add_argument("--flops-efficiency", type=A.EFFICIENCY,
                   help="fraction of a catalog GPU's datasheet peak FLOP/s reached, in every account and time "
                        "(not given: 0.5 in the text's accounts, the fitted GPU-time model's in the times)")
    d.add_argument("--bandwidth-efficiency", type=A.EFFICIENCY,
                   help="fraction of a catalog GPU's datasheet bandwidth reached, in every account and time "
                        "(not given: 0.8 in the text's accounts, the fitted GPU-time model's in the times)")
    d.add_argument("--gpus", "--tensor-parallel-size", "-tp", dest="gpus", type=A.int_range(1, 4096), default=1,
                   help="tensor-parallel GPUs (must divide H and fit H_kv); vLLM's --tensor-parallel-size")
    d.add_argument("--memory-utilization", "--gpu-memory-utilization", dest="memory_utilization",
                   type=A.PROBABILITY, default=0.9,
                   help="fraction of GPU memory usable (default 0.9: CUDA context, fragmentation)")


def run(args) -> int:
    """Parse -> PlanRequest -> planner.plan_request -> print (tables, JSON, plot, HTML)."""
    from multihead import planner
    from multihead.planner.rendering import to_json
    from multihead.planner.request import PlanRequest

    if args.list:
        return _list()
    req = PlanRequest.from_args(args)
    if req.search:
        from multihead.cli._search import print_search
        return print_search(req, args)
    p = planner.plan_request(req)
    time_plot = None
    if args.plot:
        planner.plot_memory(p, args.plot)
        from multihead.planner.time_plot import plot_plan_time
        time_plot = plot_plan_time(p.to_dict(), args.plot)      # throughput and TPOT vs concurrency
    if args.html:
        from multihead.web.report import write_report
        write_report(args.html, req, p)
    if args.json:
        print(to_json(p))
    else:
        planner.render(p, explain=args.explain)
        if args.plot:
            print(f"plot written to {args.plot}" + (f"; serving times: {time_plot}" if time_plot else ""))
        if args.html:
            print(f"report written to {args.html}")
    return 0


def _html_path(text: str):
    from multihead.cli import _args
    return _args.output_file(suffixes=(".html", ".htm"))(text)


def _list() -> int:
    from rich.console import Console
    from rich.table import Table

    from multihead.cost import catalog_model, gpu_catalog, model_names, param_counts

    t = Table(title="Models")
    for col in ("name", "D", "L", "H", "H_kv", "d_k", "params", "max pos", "kind", "source"):
        t.add_column(col)
    for name in model_names():
        s = catalog_model(name)
        c = param_counts(s)
        t.add_row(name, str(s.hidden_size), str(s.num_layers), str(s.num_heads), str(s.num_kv_heads), str(s.head_dim),
                  f"{c.total / 1e9:.3g}B" if c else f"{(s.params or 0) / 1e9:.3g}B", str(s.max_position_embeddings or "?"),
                  "; ".join([s.attention_kind, *s.features()]), s.source.split(" (")[0])
    t2 = Table(title="GPUs")
    for col in ("name", "memory GB", "TB/s", "16-bit TFLOP/s", "source"):
        t2.add_column(col)
    for name, e in gpu_catalog().items():
        tf = e["matmul_tflops"]     # the catalog states fp16, or bf16 alone for some GPUs (Gaudi3)
        sixteen = f"{tf['fp16']:g}" if "fp16" in tf else (f"{tf['bf16']:g} (bf16)" if "bf16" in tf else "-")
        t2.add_row(name, f"{e['memory_gb']:g}", f"{e['bandwidth_tbps']:g}", sixteen, e["source"])
    con = Console()
    con = con if con.is_terminal else Console(width=200)     # piped: wide enough for the names
    con.print(t)
    con.print(t2)
    return 0
