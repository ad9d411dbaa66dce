"""One serving point of the GPU-time model from the inputs a user states (no torch): the library behind
``multihead gpu-time MODEL ...``, under the engines' flag names.

engine (vllm | sglang | tensorrt-llm | gpt-fast) and engine_version choose the fixed costs' version family
(cost/time/engine_costs.py); batching "continuous" (vLLM/SGLang/TensorRT-LLM in-flight) or "static" (one batch
started together); tensor_parallel_size GPUs per replica; expert_parallel_size > 1 spreads the routed experts
over them (vLLM's --enable-expert-parallel: EP = TP x DP); data_parallel_size replicas share the requests
(SGLang's --dp-size, vLLM's --data-parallel-size), and with enable_dp_attention (SGLang's
--enable-dp-attention) the replicas' attention is data-parallel inside one tensor-parallel group whose MoE
layers exchange tokens by all-to-all (cost/time/moe_time.py). Every time comes with its 80% interval.
"""
from __future__ import annotations

from multihead.cost.time import timing
from multihead.cost.time.engine_costs import ENGINE_NAMES, version_family
from multihead.cost.time.timing_intervals import add_intervals_for, load_intervals, model_class

BATCHING = ("continuous", "static")


def check(spec, *, tensor_parallel_size: int, expert_parallel_size: int, data_parallel_size: int,
          enable_dp_attention: bool, engine: str, engine_version: str | None, batching: str) -> None:
    """ValueError naming the flag for a combination the engines refuse or the model cannot be."""
    if engine not in ENGINE_NAMES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINE_NAMES)}, got {engine!r}")
    version_family(engine, engine_version)          # names engine_version when it cannot be read
    if batching not in BATCHING:
        raise ValueError(f"batching: expected one of {', '.join(BATCHING)}, got {batching!r}")
    for name, v in (("tensor-parallel-size", tensor_parallel_size), ("expert-parallel-size", expert_parallel_size),
                    ("data-parallel-size", data_parallel_size)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1024:
            raise ValueError(f"{name}: expected an integer in 1..1024, got {v!r}")
    if expert_parallel_size > 1 and spec.moe is None:
        raise ValueError(f"expert-parallel-size: {spec.name} has no routed experts to spread")
    if enable_dp_attention:
        if engine != "sglang":
            raise ValueError("enable-dp-attention: an SGLang flag (vLLM: --data-parallel-size with "
                             "--enable-expert-parallel); give --engine sglang")
        if data_parallel_size < 2 or tensor_parallel_size % data_parallel_size:
            raise ValueError(f"enable-dp-attention: needs --data-parallel-size > 1 dividing --tensor-parallel-size "
                             f"{tensor_parallel_size} (SGLang's --dp-size), got {data_parallel_size}")
    group = tensor_parallel_size if enable_dp_attention else tensor_parallel_size * data_parallel_size
    if expert_parallel_size > 1 and expert_parallel_size != group and expert_parallel_size != tensor_parallel_size:
        raise ValueError(f"expert-parallel-size: the engines spread experts over the tensor-parallel group "
                         f"({tensor_parallel_size}) or TP x DP ({group}), got {expert_parallel_size}")


def predict(spec, gpu: timing.Gpu, *, constants: timing.Constants | None = None, tensor_parallel_size: int = 1,
            expert_parallel_size: int = 1, data_parallel_size: int = 1, enable_dp_attention: bool = False,
            engine: str = "vllm", engine_version: str | None = None, batching: str = "continuous",
            concurrency: int = 1, input_len: int = 1024, output_len: int = 256, weights: str = "bf16",
            quantization=None, kv: str = "bf16") -> dict:
    """TTFT, TPOT, request latency and output tokens/s of ``concurrency`` requests in flight over all
    replicas, each with its ``*_low`` / ``*_high`` 80% interval."""
    check(spec, tensor_parallel_size=tensor_parallel_size, expert_parallel_size=expert_parallel_size,
          data_parallel_size=data_parallel_size, enable_dp_attention=enable_dp_attention, engine=engine,
          engine_version=engine_version, batching=batching)
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ValueError(f"concurrency: expected a positive integer, got {concurrency!r}")
    c = constants or timing.load_constants()
    replicas = 1 if enable_dp_attention else data_parallel_size
    per = max(1, -(-concurrency // replicas))          # requests per replica (the busiest one)
    setup = timing.Setup(spec, gpu, c, tp=tensor_parallel_size, weights=weights, quantization=quantization, kv=kv,
                         engine=engine, engine_version=engine_version,
                         expert_parallel_size=expert_parallel_size,
                         data_parallel_size=data_parallel_size if enable_dp_attention else 1,
                         enable_dp_attention=enable_dp_attention)
    point = timing.serving_point(setup, per, input_len, output_len,
                                 mode="static" if batching == "static" else "serving")
    out = {"engine": engine, "engine_version": engine_version,
           "version_family": version_family(engine, engine_version), "batching": batching,
           "tensor_parallel_size": tensor_parallel_size, "expert_parallel_size": expert_parallel_size,
           "data_parallel_size": data_parallel_size, "enable_dp_attention": enable_dp_attention,
           "concurrency": concurrency, "requests_per_replica": per, "input_len": input_len, "output_len": output_len,
           "ttft_s": point.ttft_s, "tpot_s": point.tpot_s, "itl_s": point.tpot_s,
           "request_latency_s": point.request_latency_s,
           "output_tokens_per_s": point.output_tokens_per_s * concurrency / per,
           "decode_step_s": point.decode_step_s, "prefill_s": point.prefill_s, "decode_bound": point.decode_bound,
           "time_constants": c.source}
    return add_intervals_for(out, model_class(spec), engine, load_intervals())
