"""``multihead serving``: what vLLM will allocate, how many requests fit, and the command to launch it.

Also ``multihead serving --validate``: every real vLLM start-up log in the catalog, predicted vs
logged, written to reports/serving/.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from multihead import jsonout
from multihead.cli import _args as A
from multihead.planner.request import ENGINES

EXAMPLES = """examples:
  multihead serving meta-llama/Llama-3.1-70B-Instruct --gpu H100 --tensor-parallel-size 4 --max-model-len 131072
  multihead serving meta-llama/Llama-3.1-70B-Instruct --gpu H100 -tp 4 --max-model-len 131072 --kv-cache-dtype fp8 --emit vllm
  multihead serving path/to/config.json --gpu L40S --max-model-len 32768 --json
  multihead serving --validate            # every vLLM log in the catalog -> reports/serving/
"""


def add_engine_flags(p: argparse.ArgumentParser, for_plan: bool = False) -> None:
    """vLLM's engine flags, under vLLM's names. ``for_plan``: only those ``multihead plan`` lacks
    (it has --gpus = --tensor-parallel-size, --memory-utilization = --gpu-memory-utilization and
    --quantization already), and the launch command's --emit."""
    g = p.add_argument_group("serving engine (vLLM's flags)")
    if not for_plan:
        g.add_argument("--tensor-parallel-size", "-tp", type=A.int_range(1, 1024), default=1,
                       help="GPUs per model replica, splitting every layer (default 1)")
        g.add_argument("--gpu-memory-utilization", type=A.PROBABILITY, default=0.9,
                       help="fraction of the GPU's physical memory the engine may use, in (0, 1] (default 0.9)")
        g.add_argument("--quantization", "-q", help="runtime weight quantization, vLLM's name (e.g. fp8)")
    g.add_argument("--pipeline-parallel-size", "-pp", type=A.int_range(1, 1024), default=1,
                   help="pipeline stages, each holding whole layers (default 1)")
    g.add_argument("--data-parallel-size", "-dp", type=A.int_range(1, 1024), default=1,
                   help="replicas of the model behind a router, each TP x PP GPUs (default 1; the load of "
                        "--concurrency / --request-rate is split between them)")
    g.add_argument("--enable-dp-attention", action="store_true", default=None,
                   help="SGLang's data-parallel attention (with --engine sglang): --data-parallel-size attention "
                        "groups inside the --tensor-parallel-size GPUs, each with its own KV pool (its --dp-size)")
    g.add_argument("--expert-parallel-size", type=A.int_range(1, 1024), default=None,
                   help="GPUs the routed experts are spread over (vLLM's --enable-expert-parallel over the TP "
                        "group; the time model's load imbalance; default 1)")
    g.add_argument("--batching", choices=["continuous", "static"], default=None,
                   help="the times' batching: continuous (in-flight, default) or static (a batch started together)")
    g.add_argument("--max-model-len", type=A.int_range(1, A.MAX_TOKENS),
                   help="the longest request, tokens" + (" (default: --tokens; and --tokens defaults to it)"
                                                          if for_plan else ""))
    g.add_argument("--max-num-batched-tokens", type=A.int_range(1, A.MAX_TOKENS), default=None,
                   help="tokens per engine step: the chunked-prefill chunk (default: the engine's; vLLM v0.19: "
                        "8192 on GPUs of >= 70 GiB not named A100, else 2048)")
    g.add_argument("--max-num-seqs", type=A.int_range(1, 1 << 20), default=None,
                   help="requests per step (default: the engine's; vLLM v0.19: 1024 on GPUs of >= 70 GiB not "
                        "named A100, else 256)")
    g.add_argument("--kv-cache-dtype", choices=["auto", "fp8", "fp8_e4m3", "fp8_e5m2"],
                   default=None if for_plan else "auto", help="KV cache storage (auto: the model dtype)")
    g.add_argument("--dtype", choices=["auto", "bfloat16", "float16", "float32"], default="auto",
                   help="weights and activations (auto: the checkpoint's; float32 checkpoints run in bfloat16)")
    g.add_argument("--block-size", type=int, choices=[1, 8, 16, 32, 64, 128], default=None,
                   help="tokens per KV-cache page (default 16; SGLang's --page-size, default 1 there)")
    g.add_argument("--engine", choices=list(ENGINES), default="vllm",
                   help="whose memory account (and launch command): vLLM's, SGLang's or TensorRT-LLM's (default vllm)")
    g.add_argument("--engine-version", default=None,
                   help="engine version to account for (default: the newest modelled; vLLM 0.6 or 0.19, SGLang 0.4 or "
                        "0.5, TensorRT-LLM 0.x (TensorRT engine path, 0.7+) or 1.x (PyTorch backend))")
    g.add_argument("--mem-fraction-static", type=A.PROBABILITY, default=None,
                   help="SGLang: fraction of the memory free at start-up for weights + KV cache "
                        "(default: SGLang's own choice for the GPU and TP)")
    g.add_argument("--kv-cache-free-gpu-memory-fraction", "--free-gpu-memory-fraction",
                   dest="kv_cache_free_gpu_memory_fraction", type=A.OPEN_FRACTION, default=None,
                   help="TensorRT-LLM: fraction of the memory free after weights and buffers for the KV cache, "
                        "in (0, 1) (default 0.9, trtllm-serve's)")
    if for_plan:
        g.add_argument("--emit", choices=list(ENGINES), default=None,
                       help="launch command in the serving section (default: the --engine's)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serving", help="vLLM's KV cache, concurrency and launch command for a model on GPUs",
        description="The serving account, modelled on how vLLM v0.19 sizes its KV cache per GPU: physical "
                    "memory x --gpu-memory-utilization, minus weights, the profile run's activation peak and "
                    "non-torch memory; the rest in pages of --block-size tokens. Prints the KV capacity, the "
                    "maximum concurrency at --max-model-len, the longest request that fits, and the launch "
                    "command.", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", help="HF id of a catalog config (see --list), or a config.json path / folder")
    p.add_argument("--gpu", default=None, help="GPU from the catalog (see --list; default H100-SXM)")
    p.add_argument("--gpu-memory-gb", type=A.GPU_MEMORY_GB, default=None,
                   help="a GPU's memory in GB (1e9 B, as in `plan`), the figure the device reports (torch's "
                        "total_memory: an H100 80GB reports 85.03 GB = 79.19 GiB): a GPU outside the catalog, or "
                        "with --gpu a catalog GPU's memory overridden")
    p.add_argument("--effective-tflops", type=A.EFFECTIVE_TFLOPS, default=None,
                   help="achievable 16-bit matmul TFLOP/s for the serving times (of a GPU given by --gpu-memory-gb, or over --gpu's)")
    p.add_argument("--bandwidth-tbps", type=A.BANDWIDTH_TBPS, default=None,
                   help="achievable memory bandwidth, TB/s, for the serving times (of a GPU given by --gpu-memory-gb, or over --gpu's)")
    add_engine_flags(p)
    from multihead.cli.gpu_time import add_request_flags
    add_request_flags(p)
    p.add_argument("--emit", choices=list(ENGINES), default=None,
                   help="launch command to print (default: the --engine's)")
    p.add_argument("--json", action="store_true", help="print the serving object as JSON")
    p.add_argument("--list", action="store_true", help="list catalog configs and GPUs")
    p.add_argument("--validate", action="store_true",
                   help="predict every vLLM log in the catalog and write the table to --out")
    p.add_argument("--out", type=Path, default=Path("reports/serving"), help="folder for --validate (default reports/serving)")
    p.set_defaults(func=run)


def run(args) -> int:
    """A view of the plan: the same PlanRequest as `multihead plan`, printed as its serving section.
    --max-model-len defaults to the model's training length (and the plan's T to --max-model-len)."""
    from multihead import planner
    from multihead.planner.request import PlanRequest
    from multihead.planner.serving import render
    if args.validate:
        return _validate(args.out)
    if args.list:
        return _list()
    if not args.model:
        raise ValueError("model: expected a catalog HF id or a config.json path (see --list)")
    if args.gpu_memory_gb is None or args.gpu is not None:   # the plan's view: one request, one account
        out = planner.report(PlanRequest.from_args(args))["serving"]   # (a catalog GPU's memory overridden too)
    else:                                # a GPU outside the catalog by its memory alone: the account only
        out = _memory_only(args)
    if args.json:
        print(jsonout.dumps({"serving": out}, indent=1))
    else:
        print(render(out))
    if not out["fits"]:
        # the engine would refuse to start: say why on one line, as vLLM does, and exit 2
        raise ValueError(f"gpu: one request does not fit. {out['reason']}")
    return 0


def _memory_only(args) -> dict:
    """The serving account of a GPU given by --gpu-memory-gb alone (no time figures: the plan needs them)."""
    from multihead.cost.spec.lookup import find_model
    from multihead.planner.search import answer      # the planner's one fallback search (issue 27)
    found = find_model(args.model)                    # the one model door, as the plan's
    cfg, name = found.config, found.model_id
    req = request_from(args, name, cfg)
    kw = {"gpu_bytes": args.gpu_memory_gb * 1e9, "spec": found.spec}
    device = None
    if args.effective_tflops is not None or args.bandwidth_tbps is not None:
        from multihead.planner.inputs import resolve_device
        device = resolve_device(gpu_memory_gb=args.gpu_memory_gb, effective_tflops=args.effective_tflops,
                                bandwidth_tbps=args.bandwidth_tbps)
    return answer(cfg, req, emit=args.emit or args.engine, heads=_heads(cfg), input_len=args.input_len,
                  output_len=args.output_len, device=device, concurrency=args.concurrency,
                  request_rate=args.request_rate, **kw)


def request_from(args, name: str, cfg: dict):
    from multihead.cost.serving import answer as S
    if args.gpu_memory_gb is not None:      # a GPU by its memory alone (with --gpu: the plan's path, run())
        gpu = f"GPU-{args.gpu_memory_gb:g}GB"   # the range is the flag's, as plan's (values.GPU_MEMORY_GB)
    else:
        gpu, _ = S.gpu_memory_bytes(args.gpu or "H100-SXM")
    length = args.max_model_len or _max_position(cfg)
    if length is None:
        raise ValueError("max-model-len: the config states no max_position_embeddings; give --max-model-len")
    flags = {k: getattr(args, k) for k in S.ENGINE_DEFAULTS if getattr(args, k) is not None}
    return S.Request(tensor_parallel_size=args.tensor_parallel_size, pipeline_parallel_size=args.pipeline_parallel_size,
                     gpu_memory_utilization=args.gpu_memory_utilization, max_model_len=length,
                     **flags, given=frozenset(flags), model=name, gpu=gpu, kv_cache_dtype=args.kv_cache_dtype,
                     dtype=args.dtype, quantization=args.quantization, engine=args.engine,
                     engine_version=args.engine_version, mem_fraction_static=args.mem_fraction_static,
                     kv_cache_free_gpu_memory_fraction=args.kv_cache_free_gpu_memory_fraction,
                     measured=getattr(args, "measured", None))


def _max_position(cfg: dict) -> int | None:
    from multihead.cost.serving.extras import text_config
    return text_config(cfg).get("max_position_embeddings")


def _heads(cfg: dict) -> int | None:
    from multihead.cost.serving.extras import text_config
    return text_config(cfg).get("num_attention_heads")


def _list() -> int:
    from multihead.cost import catalog_gpu, gpu_catalog
    from multihead.cost.spec.lookup import config_index
    print("Catalog configs (HF id -> source; '= NAME': the same config as that catalog model):")
    for k, v in config_index().items():
        print(f"  {k:<62} {v['source']}" + (f"  = {v['same_as']}" if "same_as" in v else ""))
    print("GPUs (physical memory as the device reports it):")
    for k in gpu_catalog():
        g = catalog_gpu(k)
        print(f"  {k:<10} {g.reported_memory_bytes / 2**30:8.2f} GiB  "
              f"{'reported' if g.extra.get('memory_reported') else 'estimated'}")
    return 0


def _validate(out_dir: Path) -> int:
    from multihead.fits.serving_report import write_report
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"out: {out_dir} exists and is not a folder")
    summary = write_report(out_dir)
    print(jsonout.dumps(summary, indent=1))
    print(f"written: {out_dir / 'table.md'}, {out_dir / 'table.json'}")
    return 0
