"""``multihead plan MODEL --search``: the flags, and printing the search's answer (planner/search.py)."""
from __future__ import annotations

from multihead import jsonout
from multihead.cli import _args as A


def add_search_flags(p) -> None:
    g = p.add_argument_group("search: the configuration that meets a latency target (with --search)")
    g.add_argument("--search", action="store_true", default=None,
                   help="enumerate GPU x TP x PP x replicas x weights x KV dtype x max-num-seqs and rank those "
                        "meeting --slo at the load of --concurrency / --request-rate")
    g.add_argument("--slo", metavar="ttft=2s,tpot=50ms[,e2e=30s]", help="latency targets (units s, ms, us, min)")
    g.add_argument("--gpus-max", type=A.int_range(1, 4096), default=16, help="GPUs in all, at most (default 16)")
    g.add_argument("--objective", choices=["gpus", "cost", "throughput"], default="gpus",
                   help="rank by fewest GPUs (default), lowest $ per million output tokens, or highest "
                        "output tokens/s per GPU")
    g.add_argument("--price", action="append", metavar="GPU=$/h",
                   help="price per GPU-hour, replacing the catalog's (repeatable, or comma-separated)")
    g.add_argument("--top", type=A.int_range(1, 1000), default=10, help="results to show (default 10)")


def print_search(req, args) -> int:
    """``plan --search``: the request -> planner.search_report -> the table (or JSON), the plot."""
    from multihead.planner.search import search_report
    result = search_report(req)["search"]
    if args.plot:
        from multihead.planner.search_plot import plot_pareto
        plot_pareto(result, args.plot)
    if args.json:
        print(jsonout.dumps({"search": result}, indent=1))
    else:
        print(render(result))
        if args.plot:
            print(f"Pareto plot written to {args.plot}")
    return 0


def _ms(s) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:,.1f} ms" if s < 1 else f"{s:,.2f} s"


def _iv(a: dict, key: str) -> str:
    if f"{key}_low" not in a:
        return ""
    return f" (80%: {_ms(a[key + '_low'])}-{_ms(a[key + '_high'])})"


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
        if any(x.get("within_band_of_best") for x in r["results"][1:]):
            lines.append(f"  yes~: its {r['interval']['level']:.0%} interval of output tokens/s overlaps the best one's "
                         "(out-of-document errors of the model's family): the prediction cannot tell them apart")
    best = r["results"][0] if r["results"] and r["results"][0]["meets_slo"] else None
    if best:
        a = best["at"]
        lines.append(f"Best: {best['gpus']}x {best['gpu']} (TP {best['tensor_parallel_size']} x PP "
                     f"{best['pipeline_parallel_size']} x {best['data_parallel_size']} replica(s), weights "
                     f"{best['quantization'] or 'as the checkpoint'}, KV {best['kv_cache_dtype']}): "
                     f"TTFT {_ms(a['ttft_s'])}{_iv(a, 'ttft_s')}, TPOT {_ms(a['tpot_s'])}{_iv(a, 'tpot_s')}; "
                     f"binding limit: {best['binding']}")
        if a.get("note"):
            lines.append(f"  {a['note']}")
        if (a.get("interval") or {}).get("caution"):
            lines.append(f"  caution: {a['interval']['caution']}")
        if best.get("command"):
            lines.append(f"Launch ({best['command']['engine']}):")
            lines += ["  " + x for x in best["command"]["text"].splitlines()]
            if best["command"].get("note"):
                lines.append(f"  note: {best['command']['note']}")
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
