"""``multihead gpu-time``: the GPU-time model against published measurements (fit on part, test on the rest)."""
from __future__ import annotations

import argparse
import functools

from multihead import jsonout
from multihead.cli import _args as A


def add_request_flags(p: argparse.ArgumentParser) -> None:
    """The request the serving times are for (shared by ``multihead serving`` and ``multihead plan``)."""
    g = p.add_argument_group("request (for TTFT, TPOT and tokens/s)")
    g.add_argument("--input-len", type=A.int_range(1, A.MAX_TOKENS),
                   help="prompt tokens per request (default: max-model-len less --output-len)")
    g.add_argument("--output-len", type=A.int_range(1, A.MAX_TOKENS),
                   help="new tokens per request (default 1024, at most a quarter of max-model-len)")
    load = g.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=A.int_range(1, 1 << 20),
                      help="evaluate at N requests in flight (closed loop): serving.at")
    load.add_argument("--request-rate", type=A.float_range(1e-6, 1e6),
                      help="evaluate at R requests/s arriving as a Poisson process (open loop): serving.at")
    g.add_argument("--measured", type=measured_arg, metavar="FILE|concurrency=16,ttft=250ms,tpot=30ms",
                   help="one benchmark run of this very deployment: a `vllm bench serve --save-result` or SGLang "
                        "`bench_serving` result file, or its numbers (keys concurrency / request_rate, input_len, "
                        "output_len, ttft, tpot, throughput); the times are scaled to reproduce it (serving.measured)")


def measured_arg(text: str) -> str:
    """--measured: a bench result file (read here, on the command line only) or the point's text, checked."""
    from pathlib import Path

    from multihead.cost.time.measured_point import parse, read_bench_result
    is_file = False
    try:
        try:
            # an existing file whatever its name holds ("runs/concurrency=16/result.json"); a .json name without
            # "=" is a file too, so a missing one says it cannot be read
            is_file = Path(text).is_file() or ("=" not in text and Path(text).suffix.lower() in (".json", ".jsonl"))
        except (OSError, ValueError):            # a name no file system takes (too long, a NUL): not a file
            is_file = False
        if is_file:
            text = read_bench_result(text)
        parse(text)
    except ValueError as err:
        said = str(err).removeprefix("measured: ")
        if "=" not in text and not is_file:      # neither the point's text nor a file it could read
            said += " (or a vLLM / SGLang bench result file)"
        raise argparse.ArgumentTypeError(said) from None
    return text


def add_time_flags(p: argparse.ArgumentParser) -> None:
    """The time model's inputs a user states, under the engines' own flag names (``gpu-time MODEL``)."""
    g = p.add_argument_group("one serving point (with MODEL)")
    g.add_argument("--gpu", default="H100-SXM", help="catalog GPU (default H100-SXM)")
    g.add_argument("--tensor-parallel-size", "-tp", type=A.int_range(1, 1024), default=1)
    g.add_argument("--expert-parallel-size", type=A.int_range(1, 1024), default=1,
                   help="GPUs the routed experts are spread over (vLLM's --enable-expert-parallel: TP x DP)")
    g.add_argument("--data-parallel-size", type=A.int_range(1, 1024), default=1,
                   help="replicas sharing the requests (vLLM's --data-parallel-size, SGLang's --dp-size)")
    g.add_argument("--enable-dp-attention", action="store_true", help="SGLang's data-parallel attention")
    g.add_argument("--engine", choices=["vllm", "sglang", "tensorrt-llm", "gpt-fast"], default="vllm",
                   help="whose fixed costs (default vllm)")
    g.add_argument("--engine-version", default=None,
                   help="engine version (default: the newest family; vLLM < 0.8 is the V0 engine)")
    g.add_argument("--batching", choices=["continuous", "static"], default="continuous")
    g.add_argument("--concurrency", type=A.int_range(1, 1_000_000), default=1, help="requests in flight (default 1)")
    g.add_argument("--input-len", type=A.int_range(1, A.MAX_TOKENS), default=1024)
    g.add_argument("--output-len", type=A.int_range(1, A.MAX_TOKENS), default=256)
    g.add_argument("--quantization", choices=["gptq", "awq", "fp8", "int8", "bitsandbytes", "mxfp4"], default=None)
    g.add_argument("--kv-cache-dtype", choices=["auto", "fp8"], default="auto")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "gpu-time", help="predict TTFT, TPOT and throughput of one serving point for a MODEL; without one, "
                         "validate the GPU-time model against published measurements",
        description="Predict every row of reports/gpu-time/measurements.json (published TTFT, decode tokens/s, "
                    "ITL and throughput on A100, L40S, H100, H200, B200, GB200, MI300X and MI325X) with the committed constants and print "
                    "the error by split: the training rows and the seen sets (every set already looked at), and a "
                    "held-out set when one is on the branch (documents never fitted). With MODEL: one serving point with 80% "
                    "intervals from the inputs you state. --fit refits the constants on the fitted rows only and rewrites "
                    "multihead/cost/catalog/gpu_time_fit.json and reports/gpu-time/.")
    p.add_argument("model", nargs="?", help="a catalog model, HF id or config.json: predict one serving point "
                   "(TTFT, TPOT, throughput with 80%% intervals) instead of validating the table")
    add_time_flags(p)
    p.add_argument("--fit", action="store_true", help="refit the constants and rewrite the fit file and the reports")
    p.add_argument("--measurements", type=A.input_file(), help="table of measurements (default reports/gpu-time/measurements.json)")
    p.add_argument("--out", type=A.output_dir(), help="report folder for --fit (default reports/gpu-time/)")
    p.add_argument("--cv", action="store_true",
                   help="4-fold cross-validation inside the fitted rows (how model variants are chosen; slow)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    # The serving-point flags default to None here so that run() knows which were typed (a flag that
    # does not apply to the mode is refused by name); _predict fills in add_time_flags' defaults.
    p.set_defaults(func=run, **dict.fromkeys(_time_flag_defaults()))


@functools.cache
def _time_flag_defaults() -> dict:
    """dest -> default of every serving-point flag, read from add_time_flags (their one definition)."""
    p = argparse.ArgumentParser(add_help=False)
    add_time_flags(p)
    return vars(p.parse_args([]))


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _check_mode(args: argparse.Namespace) -> None:
    """ValueError naming every typed flag that the chosen mode would ignore: the serving-point flags
    without MODEL; --fit, --out, --measurements and --cv with MODEL; --out without --fit; --fit/--out with --cv."""
    if args.model:
        typed = [_flag(d) for d in ("fit", "cv", "measurements", "out") if getattr(args, d) not in (None, False)]
        if typed:
            raise ValueError(f"{', '.join(typed)}: validate the measurements table, so they apply only without MODEL "
                             f"(with MODEL {args.model!r} gpu-time predicts one serving point); drop them or MODEL")
        return
    typed = [_flag(d) for d in _time_flag_defaults() if getattr(args, d) is not None]
    if typed:
        raise ValueError(f"{', '.join(typed)}: describe one serving point, so they apply only with MODEL "
                         f"(multihead gpu-time MODEL {typed[0]} ...); without MODEL gpu-time validates the "
                         f"measurements table")
    if args.cv and (args.fit or args.out is not None):
        typed = [_flag(d) for d in ("fit", "out") if getattr(args, d) not in (None, False)]
        raise ValueError(f"{', '.join(typed)}: --cv only cross-validates (it writes nothing); drop --cv to refit")
    if args.out is not None and not args.fit:
        raise ValueError("--out: the report folder of --fit; without --fit nothing is written")


def _predict(args) -> int:
    from multihead import cost
    from multihead.cost.time import time_request
    from multihead.cost.time import timing
    from multihead.cost.spec.quantization import from_flag
    from multihead.cost.serving.answer import gpu_memory_bytes
    from multihead.cost.spec.lookup import find_model
    for dest, default in _time_flag_defaults().items():     # the flags not typed: add_time_flags' defaults
        if getattr(args, dest) is None:
            setattr(args, dest, default)
    found = find_model(args.model)           # the one model door: a catalog's stated params come with it
    name = found.model_id
    spec = found.spec.with_overrides(name=name)
    gpu_name, _ = gpu_memory_bytes(args.gpu)
    gpu = cost.catalog_gpu(gpu_name)
    time_request.check(spec, tensor_parallel_size=args.tensor_parallel_size,
                       expert_parallel_size=args.expert_parallel_size, data_parallel_size=args.data_parallel_size,
                       enable_dp_attention=args.enable_dp_attention, engine=args.engine,
                       engine_version=args.engine_version, batching=args.batching)
    checked = _check_runs(found, name, gpu_name, args)
    quantization = from_flag(args.quantization) if args.quantization else spec.quantization
    weights = "fp16" if spec.dtype == "fp16" else "bf16"
    out = time_request.predict(spec, gpu, tensor_parallel_size=args.tensor_parallel_size,
                               expert_parallel_size=args.expert_parallel_size,
                               data_parallel_size=args.data_parallel_size, enable_dp_attention=args.enable_dp_attention,
                               engine=args.engine, engine_version=args.engine_version, batching=args.batching,
                               concurrency=args.concurrency, input_len=args.input_len, output_len=args.output_len,
                               weights=weights, quantization=quantization,
                               kv="fp8" if args.kv_cache_dtype == "fp8" else weights)
    out = {"model": name, "gpu": gpu_name, **out}
    queue = _queue_note(checked, out)
    if queue:
        out["queue_note"] = queue
    if args.json:
        print(jsonout.dumps(out, indent=1))
        return 0

    def iv(k, fmt):
        return f" (80%: {fmt(out[k + '_low'])}-{fmt(out[k + '_high'])})" if k + "_low" in out else ""
    ms = lambda x: f"{x * 1e3:,.1f} ms"          # noqa: E731
    rate = lambda x: f"{x:,.0f}"                 # noqa: E731
    replicas = 1 if args.enable_dp_attention else args.data_parallel_size
    print(f"{name} on {replicas * args.tensor_parallel_size} {gpu_name} ({replicas} x TP {args.tensor_parallel_size}; "
          f"{out['engine']} {out['version_family']}, {out['batching']} batching, EP {out['expert_parallel_size']}"
          f"{', DP attention ' + str(out['data_parallel_size']) if out['enable_dp_attention'] else ''}), "
          f"{out['concurrency']} requests of {out['input_len']:,} + {out['output_len']:,} tokens:")
    print(f"  TTFT {ms(out['ttft_s'])}{iv('ttft_s', ms)}, TPOT {ms(out['tpot_s'])}{iv('tpot_s', ms)}")
    print(f"  request latency {out['request_latency_s']:,.2f} s, {out['output_tokens_per_s']:,.0f} output tokens/s in all"
          f"{iv('output_tokens_per_s', rate)} (decode {out['decode_bound']}-bound)")
    if (out.get("interval") or {}).get("caution"):
        print(f"  caution: {out['interval']['caution']}")
    if queue:
        print(f"  note: {queue}")
    print(f"  constants: {out['time_constants']}; intervals: out-of-document errors of the family (docs/gpu-time.md)")
    return 0


def _queue_note(req, out: dict) -> str | None:
    """A note when vLLM would not run all of these requests at once: the time model times them all in
    flight, while the engine admits max_num_seqs per replica (its default for this GPU and version:
    cost.serving.answer.engine_batch) and queues the rest, which `multihead serving --concurrency` models."""
    from multihead.cost.serving.answer import engine_batch
    if req is None or out["engine"] != "vllm":
        return None
    seqs = engine_batch(req)[1]
    per = out["requests_per_replica"]
    if per <= seqs:
        return None
    return (f"vLLM runs at most {seqs:,} sequences per replica here (--max-num-seqs, its default on this GPU): "
            f"{per - seqs:,} of the {per:,} requests per replica would wait in its queue; these times are for all "
            f"{per:,} in flight (`multihead serving MODEL --concurrency {out['concurrency']}` times the queue)")


def _check_runs(found, name: str, gpu_name: str, args):
    """ValueError naming the flag when the serving point is one no engine would run, by the checks the
    planner and ``multihead serving`` use: the model's positions (cost.spec.positions.coverage: an engine
    refuses a longer max-model-len without a rope override, which gpu-time does not price), tensor
    parallelism's placement rule, and the engine's memory account (cost.serving.answer.serving_account:
    the weights per GPU, then one request's KV cache of input-len + output-len tokens). Returns the
    serving Request it checked (the engine's flags at their defaults)."""
    import dataclasses

    from multihead.cost.serving.answer import ENGINES, Request, engine_version, serving_account
    from multihead.cost.spec.positions import coverage
    spec, tokens = found.spec, args.input_len + args.output_len
    covered = coverage(spec).covered
    if covered is not None and tokens > covered:
        raise ValueError(f"input-len: {args.input_len:,} prompt + {args.output_len:,} output tokens exceed {name}'s "
                         f"{covered:,} positions ({coverage(spec).how}); the engines refuse a longer request without "
                         f"a rope-scaling override (multihead plan --max-model-len prices one)")
    # gpt-fast has no memory account here: vLLM's stands in (the same weights and KV bytes per GPU)
    engine = args.engine if args.engine in ENGINES else "vllm"
    req = Request(tensor_parallel_size=args.tensor_parallel_size, max_model_len=tokens, model=name, gpu=gpu_name,
                  kv_cache_dtype=args.kv_cache_dtype, quantization=args.quantization, engine=engine,
                  engine_version=args.engine_version if engine == args.engine else None,
                  data_parallel_size=args.data_parallel_size, enable_dp_attention=args.enable_dp_attention,
                  expert_parallel_size=args.expert_parallel_size)
    try:
        engine_version(req)
    except ValueError:                       # a version the time model knows but the memory account does not
        req = dataclasses.replace(req, engine_version=None)     # model: the newest modelled one's account
    # the TP placement rule (cost.counts.memory.check_tensor_parallel) is checked inside, naming tensor-parallel-size
    account, _ = serving_account(found.config, req, spec=spec)
    if account.fits:
        return req
    shortest, _ = serving_account(found.config, dataclasses.replace(req, max_model_len=args.output_len + 1), spec=spec)
    gpus = f"{args.tensor_parallel_size} x {gpu_name}" if args.tensor_parallel_size > 1 else f"one {gpu_name}"
    if not shortest.fits:                    # not even a one-token prompt: the weights (or the workspace)
        raise ValueError(f"gpu: {name} does not fit {gpus}: {shortest.reason}")
    raise ValueError(f"input-len: one request of {args.input_len:,} prompt + {args.output_len:,} output tokens "
                     f"does not fit the KV cache of {gpus}: {account.reason}")


def run(args: argparse.Namespace) -> int:
    from multihead.fits import timing_validation as tv
    _check_mode(args)
    if args.model:
        return _predict(args)
    if args.cv:
        summ = tv.cross_validate(tv.load_table(args.measurements))
        if args.json:
            print(jsonout.dumps(summ, indent=1))
            return 0
        print("out-of-fold error of the fitted rows (4 folds):")
        for fam, s in summ.items():
            if isinstance(s, dict) and s.get("n"):
                print(f"  {fam}: n {s['n']}, median {s['median_abs'] * 100:.1f}%, max {s['max_abs'] * 100:.1f}%")
        print(f"  log-RMS {summ['log_rms']:.4f}")
        return 0
    result = tv.run(refit=args.fit, measurements=args.measurements, out_dir=args.out)
    if args.json:
        print(jsonout.dumps(result, indent=1))
        return 0
    print(f"constants: {result['source'] if not args.fit else 'refitted on the fitted rows (training, sets 1 and 2)'}")
    print(f"split: {tv.SPLIT_RULE}")
    print("\n".join(tv._summary_lines(result["summary"])))
    return 0
