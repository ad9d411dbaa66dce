"""Launch commands for serving engines: what to type to serve the plan (we do not build an engine).

``LaunchPlan`` holds the choices a plan made (parallelism, memory fraction, lengths, dtypes);
``vllm.command`` / ``sglang.command`` turn it into the engine's own command line, with the
engine's own flag names, one flag per choice. Multi-node plans (tensor parallelism inside a node,
pipeline parallelism across nodes) get the engine's multi-node form: a Ray cluster for vLLM,
``--nnodes/--node-rank/--dist-init-addr`` for SGLang.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

ENGINES = ("vllm", "sglang")
HEAD = "$HEAD_IP"     # placeholder the user replaces with the head node's address


@dataclass(frozen=True)
class LaunchPlan:
    model: str                          # HF id or local path, as the engine takes it
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    gpus_per_node: int = 8
    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    kv_cache_dtype: str = "auto"
    dtype: str = "auto"
    quantization: str | None = None
    block_size: int | None = None
    hf_overrides: dict | None = None    # config keys the engine must override (rope scaling past the config's length)

    @property
    def overrides_json(self) -> str | None:
        """The overrides as compact JSON, the engine flag's value (None: none)."""
        return json.dumps(self.hf_overrides, separators=(",", ":")) if self.hf_overrides else None

    @property
    def gpus(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def nodes(self) -> int:
        """Nodes the plan spans: one when all GPUs fit in one node, else one per pipeline stage group."""
        return max(1, -(-self.gpus // self.gpus_per_node))


@dataclass(frozen=True)
class Command:
    """One engine launch: the serve command, and for multi-node plans the steps before it."""
    engine: str
    argv: list[str]
    setup: tuple[str, ...] = ()        # shell lines to run first (e.g. the Ray cluster)
    nodes: int = 1
    note: str = ""

    @property
    def line(self) -> str:
        # the head-address placeholder stays unquoted so the shell substitutes it
        return " ".join(a if HEAD in a else shlex.quote(a) for a in self.argv)

    def render(self) -> str:
        """The text a user pastes: setup steps as comments + commands, then the serve line."""
        lines = list(self.setup) + [self.line]
        return "\n".join(lines)


def command(engine: str, plan: LaunchPlan) -> Command:
    if engine == "vllm":
        from multihead.engines import vllm
        return vllm.command(plan)
    if engine == "sglang":
        from multihead.engines import sglang
        return sglang.command(plan)
    raise ValueError(f"emit: expected one of {', '.join(ENGINES)}, got {engine!r}")
