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
    if args.validate:
        return _validate(args.out)
    if args.list:
        return _list()
    if not args.model:
        raise ValueError("model: expected a catalog HF id or a config.json path (see --list)")
    from multihead.cost import serving_answer as S
    cfg, name = load_model(args.model)
    req = request_from(args, name, cfg)
    out = S.answer(cfg, req, emit=args.emit, heads=_heads(cfg), input_len=args.input_len, output_len=args.output_len)
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


def load_model(model: str) -> tuple[dict, str]:
    """(config dict, name): a config.json path or folder, else a catalog HF id (case-insensitive)."""
    from multihead.cost.serving_fit import CATALOG
    path = Path(model)
    if path.exists():
        file = path / "config.json" if path.is_dir() else path
        try:       # vllm serve takes the model folder
            return json.loads(file.read_text()), str(path if path.is_dir() else path.parent)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"model: cannot read {file} as a config.json ({err})") from None
    index = json.loads((CATALOG / "configs" / "index.json").read_text())
    key = {k.lower(): k for k in index}.get(model.lower())
    if key is not None:
        return json.loads((CATALOG / "configs" / index[key]["file"]).read_text()), key
    from multihead.cost.lookup import model_catalog      # the planner's catalog (short names)
    planner = model_catalog()
    key = {k.lower(): k for k in planner}.get(model.lower())
    if key is None or "config" not in planner[key]:
        raise ValueError(f"model: {model!r} is neither a config.json path nor a catalog config "
                         f"(known: {', '.join(list(index) + list(planner))})")
    return dict(planner[key]["config"]), hf_id(planner[key].get("source", ""), key)


def hf_id(source: str, fallback: str) -> str:
    """The HF repo id a catalog source names ('https://huggingface.co/ORG/NAME/...' or 'ORG/NAME
    config.json ...'), which is what `vllm serve` takes; else the catalog name."""
    text = source.removeprefix("https://huggingface.co/").split()[0] if source else ""
    parts = text.split("/")
    return f"{parts[0]}/{parts[1]}" if len(parts) >= 2 and parts[0] and parts[1] else fallback


def render(out: dict) -> str:
    """The serving section as text: the budget, the engine's numbers, the verdict, the command."""
    lines = ["Serving (vLLM v0.19 accounting, per GPU)"]
    for t in out["terms"]:
        lines.append(f"  {t['name']:<16} {t['gib']:>9.2f} GiB   {t['source']}")
    lines.append(f"  KV cache size     {out['kv_cache_tokens']:>9,} tokens ({out['num_gpu_blocks']:,} blocks of "
                 f"{out['page_bytes']:,} B x {out['layers_per_group']} layers, {out['kv_cache_groups']} group(s))")
    lines.append(f"  max concurrency   {out['max_concurrency']:>9.2f}x for {out['max_model_len']:,} tokens per request")
    lines.append(f"  longest request   {out['max_model_len_fit']:>9,} tokens at concurrency 1 (searched up to the "
                 f"model's positions or --max-model-len)")
    lines.append(f"  prefill           {out['prefill']}")
    from multihead.cost.serving_time import render_lines
    lines += ["  " + x for x in render_lines(out)]
    lines.append(f"Verdict: {out['verdict']}")
    if out.get("fallbacks"):
        lines.append("Fallbacks that fit, cheapest first (fewest GPUs, then least precision lost; KV per GPU):")
    for f in out.get("fallbacks", []):
        if f.get("note"):
            lines.append(f"  {' '.join(f['flags'])}: {f['note']}")
            continue
        lines.append(f"  {' '.join(f['flags'])} ({f['gpus']} GPUs): {f['max_concurrency']:.2f}x, "
                     f"{f['kv_cache_tokens']:,} KV tokens, {f['kv_cache_gib_per_gpu']:.2f} GiB KV per GPU")
    if "command" in out:
        lines.append(f"Launch ({out['command']['engine']}, {out['command']['for']}):")
        lines += ["  " + x for x in out["command"]["text"].splitlines()]
        if out["command"]["note"]:
            lines.append(f"  note: {out['command']['note']}")
    return "\n".join(lines)


def _list() -> int:
    from multihead.cost.serving_answer import gpu_catalog
    from multihead.cost.serving_fit import CATALOG
    print("Catalog configs (HF id -> source):")
    for k, v in json.loads((CATALOG / "configs" / "index.json").read_text()).items():
        print(f"  {k:<62} {v['source']}")
    print("GPUs (physical memory as the device reports it):")
    for k, v in gpu_catalog().items():
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
