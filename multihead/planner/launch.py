"""The launch command of a serving answer: the engine's command line for the request, or for the
one search's cheapest setting when the request does not fit (planner/search.py).

The planner builds it from the serving object (cost/serving/answer.py answer); cost/ never imports
the engines (tests/test_layout.py).
"""
from __future__ import annotations

import dataclasses

from multihead.cost.serving.answer import GPUS_PER_NODE, batched_tokens, given_flags
from multihead.engines import LaunchPlan, command


def launch_plan(req, dtype: str, fraction: float | None = None, hf_overrides: dict | None = None,
                total_bytes: float | None = None, config: dict | None = None) -> LaunchPlan:
    """The launch choices; ``fraction``: the memory fraction to emit (SGLang's --mem-fraction-static
    the account used), else --gpu-memory-utilization; ``hf_overrides``: the config keys the engine
    must override (cost.serving.answer.length_override's rope_override); ``total_bytes``: the GPU's
    memory when it is not a catalog name (for vLLM's default --max-num-batched-tokens); ``config``: the model's
    config.json, whose ``auto_map`` (code shipped with the checkpoint: Kimi, DeepSeek-V3/R1, MiniMax-M2) makes the
    command trust remote code, as the engines require to load it. --max-num-seqs and --block-size are
    stated when the request sets them (given_flags), else left to the engine, whose defaults the
    accounts and the times used (cost.serving.answer.engine_batch)."""
    given = given_flags(req)
    return LaunchPlan(req.model, req.tensor_parallel_size, req.pipeline_parallel_size, GPUS_PER_NODE,
                      req.gpu_memory_utilization if fraction is None else fraction, req.max_model_len,
                      batched_tokens(req, total_bytes), req.max_num_seqs if "max_num_seqs" in given else None,
                      req.kv_cache_dtype, dtype, req.quantization, req.block_size if "block_size" in given else None,
                      1 if getattr(req, "enable_dp_attention", False) else req.data_parallel_size, hf_overrides,
                      req.data_parallel_size if getattr(req, "enable_dp_attention", False) else 1,
                      expert_parallel_size=req.expert_parallel_size,
                      engine_version=req.engine_version if req.engine == "tensorrt-llm" else None,
                      trust_remote_code=needs_remote_code(config),
                      checkpoint_quantization=checkpoint_method(config),
                      checkpoint_weights=checkpoint_weights(config),
                      quantization_weights=flag_weights(req.quantization))


def checkpoint_method(config: dict | None) -> str | None:
    """The checkpoint's quantization method as its config.json states it (quantization_config.quant_method; a
    compressed-tensors checkpoint may state only its format), None for a 16-bit checkpoint."""
    qc = config.get("quantization_config") if isinstance(config, dict) else None
    if not isinstance(qc, dict):
        return None
    return str(qc.get("quant_method") or ("compressed-tensors" if "config_groups" in qc else "") or "") or None


def weights_label(q) -> str:
    """A cost.spec.quantization.Quantization's weights as format + bits: 'int8', 'fp8', 'int4', 'fp4'."""
    return f"{'fp' if q.fmt == 'float' else 'int'}{q.bits:g}"


def flag_weights(flag: str | None) -> str | None:
    """The weights the accounts assume for a --quantization name (cost.spec.quantization.FLAG_DEFAULTS)."""
    from multihead.cost.spec.quantization import from_flag
    return weights_label(from_flag(flag)) if flag else None


def checkpoint_weights(config: dict | None) -> str | None:
    """The checkpoint's weights (weights_label), read from its quantization_config by cost.spec.quantization (a
    compressed-tensors checkpoint states them only there; its first config group); None if absent or unread."""
    if checkpoint_method(config) is None:
        return None
    from multihead.cost.spec.quantization import from_config
    try:
        q = from_config(config["quantization_config"])
    except (ValueError, KeyError, TypeError):
        return None
    return weights_label(q)


def needs_remote_code(config: dict | None) -> bool:
    """Whether a checkpoint ships its own model or tokenizer code: its config.json names it in ``auto_map``
    (transformers loads such code only with trust_remote_code=True)."""
    return isinstance(config, dict) and bool(config.get("auto_map"))


def own_fraction(req, emit: str, out: dict) -> float | None:
    """The memory fraction of the engine's own account when the command is for that engine (SGLang's
    --mem-fraction-static, TensorRT-LLM's --kv_cache_free_gpu_memory_fraction), else None."""
    if req.engine == emit == "sglang" and "sglang" in out:
        return out["sglang"]["mem_fraction_static"]
    if req.engine == emit == "tensorrt-llm" and "tensorrt_llm" in out:
        return out["tensorrt_llm"]["free_gpu_memory_fraction"]
    return None


def add_command(out: dict, req, emit: str | None, launch=None, total_bytes: float | None = None,
                config: dict | None = None) -> dict:
    """``out`` (the serving object) with its ``command`` for engine ``emit`` (None: none): for
    ``launch`` (default the request), SGLang's own chunk and memory fraction when it is SGLang's account."""
    if out.pop("refused", False) or not emit:     # a length no override reaches: no command the engine refuses
        return out
    launch = launch or req
    positions = out.get("positions")
    own = req.engine == "sglang" and emit == "sglang" and "sglang" in out
    chosen = dataclasses.replace(launch, max_num_batched_tokens=out["sglang"]["chunked_prefill_size"]) if own else launch
    cmd = command(emit, launch_plan(chosen, out["dtype"], own_fraction(req, emit, out),
                                    positions["rope_override"] if positions else None, total_bytes, config))
    note = ("--mem-fraction-static covers weights + KV cache only, as a fraction of the memory free at start-up; "
            "the capacity above is SGLang's own account of this command") if own else cmd.note
    note = "; ".join(x for x in (note, cmd.checkpoint_note, positions["note"] if positions else "") if x)
    out["command"] = {"engine": emit, "text": cmd.render(), "argv": cmd.argv, "nodes": cmd.nodes,
                      "note": note, "for": "the request" if launch == req else "the first fallback"}
    return out
