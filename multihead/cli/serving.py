"""``multihead serving``: what vLLM will allocate, how many requests fit, and the command to launch it.

Also ``multihead serving --validate``: every real vLLM start-up log in the catalog, predicted vs
logged, written to reports/serving/.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from multihead.cli import _args as A

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
    g.add_argument("--max-model-len", type=A.int_range(1, A.MAX_TOKENS),
                   help="the longest request, tokens" + (" (default: --tokens; and --tokens defaults to it)"
                                                          if for_plan else ""))
    g.add_argument("--max-num-batched-tokens", type=A.int_range(1, A.MAX_TOKENS), default=8192,
                   help="tokens per engine step: the chunked-prefill chunk (default 8192)")
    g.add_argument("--max-num-seqs", type=A.int_range(1, 1 << 20), default=1024,
                   help="requests per step (default 1024, vLLM's default on 80 GB-class GPUs)")
    g.add_argument("--kv-cache-dtype", choices=["auto", "fp8", "fp8_e4m3", "fp8_e5m2"],
                   default=None if for_plan else "auto", help="KV cache storage (auto: the model dtype)")
    g.add_argument("--dtype", choices=["auto", "bfloat16", "float16", "float32"], default="auto",
                   help="weights and activations (auto: the checkpoint's; float32 checkpoints run in bfloat16)")
    g.add_argument("--block-size", type=int, choices=[1, 8, 16, 32, 64, 128], default=16,
                   help="tokens per KV-cache page (default 16)")
    if for_plan:
        g.add_argument("--emit", choices=["vllm", "sglang"], default="vllm",
                       help="launch command in the serving section (default vllm)")


ENGINE_TO_PLAN_DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}   # --dtype -> --weights-dtype


def plan_options(args) -> dict:
    """The plan's ``serving`` section options from its parsed flags (engine names as keys)."""
    keys = ("pipeline_parallel_size", "max_model_len", "max_num_batched_tokens", "max_num_seqs", "kv_cache_dtype",
            "dtype", "block_size", "emit", "quantization", "input_len", "output_len")
    out = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    if args.model:
        from multihead.planner.serving import load_model
        try:
            out["config"], out["model_id"] = load_model(args.model)
        except ValueError:
            pass                      # a model from flags alone: the spec is all there is
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serving", help="vLLM's KV cache, concurrency and launch command for a model on GPUs",
        description="The serving account, modelled on how vLLM v0.19 sizes its KV cache per GPU: physical "
                    "memory x --gpu-memory-utilization, minus weights, the profile run's activation peak and "
                    "non-torch memory; the rest in pages of --block-size tokens. Prints the KV capacity, the "
                    "maximum concurrency at --max-model-len, the longest request that fits, and the launch "
                    "command.", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", help="HF id of a catalog config (see --list), or a config.json path / folder")
    p.add_argument("--gpu", default="H100-SXM", help="GPU from the catalog (see --list; default H100-SXM)")
    add_engine_flags(p)
    from multihead.cli.gpu_time import add_request_flags
    add_request_flags(p)
    p.add_argument("--emit", choices=["vllm", "sglang"], default="vllm", help="launch command to print (default vllm)")
    p.add_argument("--json", action="store_true", help="print the serving object as JSON")
    p.add_argument("--list", action="store_true", help="list catalog configs and GPUs")
    p.add_argument("--validate", action="store_true",
                   help="predict every vLLM log in the catalog and write the table to --out")
    p.add_argument("--out", type=Path, default=Path("reports/serving"), help="folder for --validate (default reports/serving)")
    p.set_defaults(func=run)


def run(args) -> int:
    from multihead.planner.serving import load_model, render
    if args.validate:
        return _validate(args.out)
    if args.list:
        return _list()
    if not args.model:
        raise ValueError("model: expected a catalog HF id or a config.json path (see --list)")
    from multihead.planner.search import answer      # the planner's one search adds the fallbacks (issue 27)
    cfg, name = load_model(args.model)
    req = request_from(args, name, cfg)
    out = answer(cfg, req, emit=args.emit, heads=_heads(cfg), input_len=args.input_len, output_len=args.output_len)
    if args.json:
        print(json.dumps({"serving": out}, indent=1))
    else:
        print(render(out))
    if not out["fits"]:
        # the engine would refuse to start: say why on one line, as vLLM does, and exit 2
        raise ValueError(f"gpu: one request does not fit. {out['reason']}")
    return 0


def request_from(args, name: str, cfg: dict):
    from multihead.cost import serving_answer as S
    gpu, _ = S.gpu_memory_bytes(args.gpu)
    length = args.max_model_len or _max_position(cfg)
    if length is None:
        raise ValueError("max-model-len: the config states no max_position_embeddings; give --max-model-len")
    return S.Request(tensor_parallel_size=args.tensor_parallel_size, pipeline_parallel_size=args.pipeline_parallel_size,
                     gpu_memory_utilization=args.gpu_memory_utilization, max_model_len=length,
                     max_num_batched_tokens=args.max_num_batched_tokens, max_num_seqs=args.max_num_seqs,
                     block_size=args.block_size, model=name, gpu=gpu, kv_cache_dtype=args.kv_cache_dtype,
                     dtype=args.dtype, quantization=args.quantization)


def _max_position(cfg: dict) -> int | None:
    from multihead.cost.serving_model import text_config
    return text_config(cfg).get("max_position_embeddings")


def _heads(cfg: dict) -> int | None:
    from multihead.cost.serving_model import text_config
    return text_config(cfg).get("num_attention_heads")


def _list() -> int:
    from multihead.cost.serving_answer import gpu_memory_catalog
    from multihead.cost.serving_fit import CATALOG
    print("Catalog configs (HF id -> source):")
    for k, v in json.loads((CATALOG / "configs" / "index.json").read_text()).items():
        print(f"  {k:<62} {v['source']}")
    print("GPUs (physical memory as the device reports it):")
    for k, v in gpu_memory_catalog().items():
        print(f"  {k:<10} {v['bytes'] / 2**30:8.2f} GiB  {'reported' if v['reported'] else 'estimated'}")
    return 0


def _validate(out_dir: Path) -> int:
    from multihead.cost.serving_report import write_report
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"out: {out_dir} exists and is not a folder")
    summary = write_report(out_dir)
    print(json.dumps(summary, indent=1))
    print(f"written: {out_dir / 'table.md'}, {out_dir / 'table.json'}")
    return 0
