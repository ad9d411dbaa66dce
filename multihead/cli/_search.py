"""``multihead plan MODEL --search``: the flags, and printing the search's answer (planner/search.py)."""
from __future__ import annotations

import json

from multihead.cli import _args as A


def add_search_flags(p) -> None:
    g = p.add_argument_group("search: the configuration that meets a latency target (with --search)")
    g.add_argument("--search", action="store_true",
                   help="enumerate GPU x TP x PP x replicas x weights x KV dtype x max-num-seqs and rank those "
                        "meeting --slo at the load of --concurrency / --request-rate")
    g.add_argument("--slo", metavar="ttft=2s,tpot=50ms[,e2e=30s]", help="latency targets (units s, ms, us, min)")
    g.add_argument("--gpus-max", type=A.int_range(1, 4096), default=16, help="GPUs in all, at most (default 16)")
    g.add_argument("--objective", choices=["gpus", "cost", "throughput"], default="gpus",
                   help="rank by fewest GPUs (default), lowest $ per million output tokens, or highest "
                        "output tokens/s per GPU")
    g.add_argument("--price", action="append", metavar="GPU=$/h",
                   help="price per GPU-hour, replacing the catalog's (repeatable)")
    g.add_argument("--top", type=A.int_range(1, 1000), default=10, help="results to show (default 10)")


def run_search(args) -> int:
    from multihead.planner import search as S
    from multihead.planner.serving import load_model
    if not args.model:
        raise ValueError("model: --search needs a model (catalog name, HF id or config.json)")
    if args.concurrency is None and args.request_rate is None:
        raise ValueError("concurrency: --search needs the load: --concurrency N or --request-rate R")
    cfg, name = load_model(args.model)
    slo = S.parse_slo(args.slo)
    prices = S.parse_prices(args.price)
    gpus, devices = resolve_gpus(args)
    inp, out = lengths(args, cfg)
    space = S.Space(gpus=gpus, devices=devices, gpus_max=args.gpus_max, engines=(args.engine,),
                    quantizations=(args.quantization,) if args.quantization else S.QUANTIZATIONS,
                    kv_cache_dtypes=(args.kv_cache_dtype,) if args.kv_cache_dtype else S.KV_CACHE_DTYPES)
    work = S.Workload(input_len=inp, output_len=out, concurrency=args.concurrency, request_rate=args.request_rate,
                      slo=slo, objective=args.objective, max_model_len=args.max_model_len, prices=prices)
    from multihead.cost.serving_answer import Request
    base = Request(model=name, gpu_memory_utilization=args.memory_utilization,
                   max_num_batched_tokens=args.max_num_batched_tokens, block_size=args.block_size,
                   dtype=args.dtype, engine=args.engine, engine_version=args.engine_version,
                   mem_fraction_static=getattr(args, "mem_fraction_static", None))
    result = S.search(cfg, name, work, space, emit=args.emit or "auto", top=args.top, band=S.trust_band(),
                      base_request=base)
    if args.plot:
        from multihead.planner.search_plot import plot_pareto
        plot_pareto(result, args.plot)
    if args.json:
        print(json.dumps({"search": result}, indent=1, allow_nan=False))
    else:
        print(render(result))
        if args.plot:
            print(f"Pareto plot written to {args.plot}")
    return 0


def resolve_gpus(args) -> tuple[tuple[str, ...], dict]:
    """(GPU names, {name: DeviceSpec} for a GPU given by its figures): --gpu 'H100,MI300X' -> catalog
    names (the serving catalog's aliases); the three figures -> one GPU named 'custom'; neither ->
    planner/search.DEFAULT_GPUS."""
    import dataclasses

    from multihead.cost.serving_answer import gpu_memory_bytes
    from multihead.planner import search as S
    figures = (args.gpu_memory_gb, args.effective_tflops, args.bandwidth_tbps)
    if any(f is not None for f in figures):
        if args.device:
            raise ValueError("gpu: with --search, give --gpu names or the figures (--gpu-memory-gb, "
                             "--effective-tflops, --bandwidth-tbps), not both")
        from multihead.planner.inputs import resolve_device
        dev = resolve_device(None, gpu_memory_gb=args.gpu_memory_gb, effective_tflops=args.effective_tflops,
                             bandwidth_tbps=args.bandwidth_tbps)
        return ("custom",), {"custom": dataclasses.replace(dev, name="custom")}
    if not args.device:
        return S.DEFAULT_GPUS, {}
    names = [n.strip() for n in args.device.split(",") if n.strip()]
    if not names:
        raise ValueError("gpu: expected GPU names separated by commas")
    return tuple(dict.fromkeys(gpu_memory_bytes(n)[0] for n in names)), {}


def lengths(args, cfg: dict) -> tuple[int, int]:
    from multihead.cost.serving_time import request_lengths
    longest = args.max_model_len or args.tokens
    if longest is None:
        if args.input_len is None:
            raise ValueError("input-len: --search needs the request's prompt length (--input-len)")
        longest = args.input_len + (args.output_len or 1024)
    return request_lengths(longest, args.input_len, args.output_len)


def _ms(s) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:,.1f} ms" if s < 1 else f"{s:,.2f} s"


def render(r: dict) -> str:
    lines = [f"Search: {r['candidates']:,} configurations evaluated in {r['seconds']:.2f} s; "
             f"{r['feasible']:,} run at {r['load']}, {r['meeting_slo']:,} meet the SLO ({r['slo_text']})",
             f"  requests of {r['input_len']:,} prompt + {r['output_len']:,} output tokens; objective: {r['objective']}"]
    if r["results"]:
        head = ("#", "GPU", "GPUs", "TP", "PP", "DP", "weights", "KV", "seqs", "TTFT", "TPOT", "e2e",
                "tok/s/GPU", "$/Mtok", "binds", "SLO")
        rows = []
        for i, x in enumerate(r["results"], 1):
            a = x["at"]
            usd = x["usd_per_million_output_tokens"]
            rows.append((str(i), x["gpu"], str(x["gpus"]), str(x["tensor_parallel_size"]),
                         str(x["pipeline_parallel_size"]), str(x["data_parallel_size"]), x["quantization"] or "ckpt",
                         x["kv_cache_dtype"], str(x["max_num_seqs"]), _ms(a["ttft_s"]), _ms(a["tpot_s"]),
                         _ms(a["request_latency_s"]),
                         f"{a['output_tokens_per_s_per_gpu']:,.0f}" if a["output_tokens_per_s_per_gpu"] else "-",
                         f"{usd:,.2f}" if usd is not None else "-", x["binding"],
                         ("yes" + ("~" if x.get("within_band_of_best") and i > 1 else "")) if x["meets_slo"] else "no"))
        widths = [max(len(h), *(len(row[j]) for row in rows)) for j, h in enumerate(head)]
        lines.append("  " + "  ".join(h.rjust(w) for h, w in zip(head, widths)))
        lines += ["  " + "  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
        if r.get("band") is not None and any(x.get("within_band_of_best") for x in r["results"][1:]):
            lines.append(f"  yes~: within the time model's error band ({r['band']:.0%}) of the best on the "
                         "objective: the prediction cannot tell them apart")
    best = r["results"][0] if r["results"] and r["results"][0]["meets_slo"] else None
    if best:
        a = best["at"]
        lines.append(f"Best: {best['gpus']}x {best['gpu']} (TP {best['tensor_parallel_size']} x PP "
                     f"{best['pipeline_parallel_size']} x {best['data_parallel_size']} replica(s), weights "
                     f"{best['quantization'] or 'as the checkpoint'}, KV {best['kv_cache_dtype']}): "
                     f"TTFT {_ms(a['ttft_s'])}, TPOT {_ms(a['tpot_s'])}; binding limit: {best['binding']}")
        if a.get("note"):
            lines.append(f"  {a['note']}")
        if best.get("command"):
            lines.append(f"Launch ({best['command']['engine']}):")
            lines += ["  " + x for x in best["command"]["text"].splitlines()]
    else:
        miss = r.get("closest_miss") or {}
        if "note" in miss:
            lines.append(f"Nothing meets the SLO: {miss['note']}")
        elif miss:
            over = ", ".join(f"{k} {v:.2f}x its target" for k, v in miss["over_target"].items())
            lines.append(f"Nothing meets the SLO; closest: {miss['gpus']}x {miss['gpu']} (TP {miss['tensor_parallel_size']}"
                         f" x PP {miss['pipeline_parallel_size']} x {miss['data_parallel_size']} replica(s), weights "
                         f"{miss['quantization'] or 'ckpt'}, KV {miss['kv_cache_dtype']}): {over}; binding: "
                         f"{miss['binding']}")
    return "\n".join(lines)
