"""Launch commands for serving engines: what to type to serve the plan (we do not build an engine).

``LaunchPlan`` holds the choices a plan made (parallelism, memory fraction, lengths, dtypes);
``vllm.command`` / ``sglang.command`` turn it into the engine's own command line, with the
engine's own flag names, one flag per choice. Multi-node plans (tensor parallelism inside a node,
pipeline parallelism across nodes) get the engine's multi-node form: a Ray cluster for vLLM,
``--nnodes/--node-rank/--dist-init-addr`` for SGLang.
"""
from __future__ import annotations

import dataclasses
import json
import re
import shlex
from dataclasses import dataclass

ENGINES = ("vllm", "sglang", "tensorrt-llm")
HEAD = "$HEAD_IP"     # placeholder the user replaces with the head node's address
from multihead.cost.spec.lookup import MODEL_DIR   # a config file that is no folder's config.json
PLACEHOLDER = re.compile(r"\$[A-Z0-9_]+")   # $HEAD_IP, $AWQ_CHECKPOINT: left unquoted so the shell substitutes them

# --quantization methods an engine applies at load to a 16-bit checkpoint, in the versions the serving accounts follow
# (vLLM v0.19: dynamic FP8 and in-flight bitsandbytes; SGLang: dynamic FP8; later vLLM docs add more, e.g. mxfp4).
# Every other method needs a checkpoint quantized so, whose config.json states quantization_config; both engines
# detect it from there, vLLM refuses a flag that disagrees with it ("Quantization method specified in the model config
# (...) does not match the quantization method specified in the `quantization` argument (...)"), and SGLang's docs
# say not to add the flag to a pre-quantized checkpoint.
ONLINE_QUANTIZATION = {"vllm": ("fp8", "bitsandbytes"), "sglang": ("fp8",)}
# The quant_methods of checkpoints each of our --quantization names can stand for, beside the name itself: engines
# switch GPTQ / AWQ to their Marlin kernels, FP8 comes as fbgemm_fp8 or ModelOpt too, int8 W8A8 as SGLang's w8a8_int8,
# and an llm-compressor checkpoint is compressed-tensors whatever it holds. Such a checkpoint counts as quantized as
# asked when its weights (format + bits, read from its quantization_config) are the ones the accounts assume for the
# flag (LaunchPlan.quantization_weights); a checkpoint whose weights are not read never counts for compressed-tensors.
CHECKPOINT_METHODS = {"gptq": ("gptq", "gptq_marlin", "compressed-tensors"),
                      "awq": ("awq", "awq_marlin", "compressed-tensors"),
                      "fp8": ("fp8", "fbgemm_fp8", "modelopt", "compressed-tensors"),
                      "int8": ("compressed-tensors", "w8a8_int8"),
                      "bitsandbytes": ("bitsandbytes",), "mxfp4": ("mxfp4",)}


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
    data_parallel_size: int = 1         # replicas of the model (each tensor_parallel_size x pipeline_parallel_size GPUs)
    hf_overrides: dict | None = None    # config keys the engine must override (rope scaling past the config's length)
    dp_attention_size: int = 1          # SGLang's --dp-size with --enable-dp-attention: attention groups in one replica
    expert_parallel_size: int = 1       # TensorRT-LLM's --ep_size (vLLM / SGLang: not emitted here)
    engine_version: str | None = None   # the version family the command is for (TensorRT-LLM: 0.x / 1.x)
    trust_remote_code: bool = False     # the checkpoint ships its own code (config.json auto_map): engines load it only so
    checkpoint_quantization: str | None = None   # the checkpoint's quantization_config.quant_method (None: 16-bit)
    checkpoint_weights: str | None = None        # its weights as format + bits ('int8', 'fp8', 'int4'; None: unknown)
    quantization_weights: str | None = None      # the weights the accounts assume for ``quantization`` (same labels)

    @property
    def overrides_json(self) -> str | None:
        """The overrides as compact JSON, the engine flag's value (None: none)."""
        return json.dumps(self.hf_overrides, separators=(",", ":")) if self.hf_overrides else None

    @property
    def gpus(self) -> int:
        """GPUs of one replica."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def nodes(self) -> int:
        """Nodes one replica spans: one when its GPUs fit in one node, else one per pipeline stage group."""
        return max(1, -(-self.gpus // self.gpus_per_node))

    @property
    def replicas_per_node(self) -> int:
        """Replicas one launch command runs (the engine's own data parallelism inside a node): the
        largest divisor of data_parallel_size that fits in a node, so identical launches add up to it."""
        if self.nodes > 1:
            return 1
        fit = max(1, self.gpus_per_node // self.gpus)
        return max(d for d in range(1, min(fit, self.data_parallel_size) + 1) if self.data_parallel_size % d == 0)

    @property
    def launches(self) -> int:
        """Separate launches (nodes or node groups) the replicas need; a router spreads requests over them."""
        return -(-self.data_parallel_size // self.replicas_per_node)


def replicate(cmd: "Command", plan: LaunchPlan) -> "Command":
    """The command for ``plan.data_parallel_size`` replicas: the engine's data-parallel flag runs the
    replicas that fit in one node; when more are asked, the same launch is repeated on further nodes
    (or, for replicas spanning nodes, further clusters) behind a router."""
    if plan.launches == 1:
        return cmd
    per = plan.replicas_per_node
    where = f"{plan.nodes} node(s) each" if plan.nodes > 1 else "one node each"
    steps = (f"# {plan.data_parallel_size} replicas: {plan.launches} launches of {per} replica(s), {where}; "
             f"run the launch below on each and put a load balancer in front that spreads requests over "
             f"the {plan.launches} endpoints",)
    note = "; ".join(n for n in (cmd.note, f"{plan.launches} identical launches behind a router") if n)
    return Command(cmd.engine, cmd.argv, steps + cmd.setup, cmd.nodes * plan.launches, note)


@dataclass(frozen=True)
class Command:
    """One engine launch: the serve command, and for multi-node plans the steps before it."""
    engine: str
    argv: list[str]
    setup: tuple[str, ...] = ()        # shell lines to run first (e.g. the Ray cluster)
    nodes: int = 1
    note: str = ""
    checkpoint_note: str = ""          # the model is a placeholder for a quantized checkpoint (checkpoint_for_quantization)

    @property
    def line(self) -> str:
        # the head-address placeholder stays unquoted so the shell substitutes it
        return " ".join(a if HEAD in a or PLACEHOLDER.fullmatch(a) else shlex.quote(a) for a in self.argv)

    def render(self) -> str:
        """The text a user pastes: setup steps as comments + commands, then the serve line."""
        lines = list(self.setup) + [self.line]
        return "\n".join(lines)


def checkpoint_for_quantization(engine: str, plan: LaunchPlan) -> tuple[LaunchPlan, str]:
    """The plan as vLLM / SGLang accept its --quantization, and a note (empty when nothing changed):
    - the checkpoint is quantized as asked: no flag (the engine reads the method from its config.json);
    - a 16-bit checkpoint and a method the engine applies at load (ONLINE_QUANTIZATION): the flag as given;
    - otherwise the engine would refuse the command, so the model becomes a placeholder ($AWQ_CHECKPOINT, ...) for a
      checkpoint quantized so, which the user names (the plan's memory and time accounts assume one).
    TensorRT-LLM has no runtime flag at all (tensorrt_llm.py says so)."""
    q = plan.quantization
    if engine not in ONLINE_QUANTIZATION or not q:
        return plan, ""
    have = (plan.checkpoint_quantization or "").lower() or None
    ck, assumed = plan.checkpoint_weights, plan.quantization_weights
    same_method = have in CHECKPOINT_METHODS.get(q, (q,))
    same_weights = ck == assumed if (ck and assumed) else have != "compressed-tensors"
    if same_method and same_weights:
        return dataclasses.replace(plan, quantization=None), ""
    if have is None and q in ONLINE_QUANTIZATION[engine]:
        return plan, ""
    holder = f"${q.upper()}_CHECKPOINT"
    if have is None:
        why = (f"{plan.model} is a 16-bit checkpoint, and {engine} quantizes one at load only to "
               f"{' or '.join(ONLINE_QUANTIZATION[engine])}")
    elif same_method and not ck:
        why = (f"{plan.model} is a {have} checkpoint whose weights its quantization_config does not show in a form "
               f"read here, so it is not taken for the {assumed} the accounts assume for --quantization {q}")
    elif same_method:
        why = (f"{plan.model} holds {have} {ck} weights (its config.json's quantization_config), and the accounts "
               f"assume {assumed} for --quantization {q}")
    else:
        shown = f"{have} {ck}" if ck else have
        why = (f"{plan.model} is quantized as {shown} (its config.json's quantization_config), and {engine} refuses a "
               "--quantization that disagrees with it")
    note = (f"--quantization {q}: {why}; put the HF id or path of a checkpoint of this model quantized with {q} in "
            f"place of {holder} (the accounts above assume one): the engine reads the method from its config.json")
    return dataclasses.replace(plan, model=holder, quantization=None), note


def command(engine: str, plan: LaunchPlan) -> Command:
    if plan.data_parallel_size < 1:
        raise ValueError(f"data-parallel-size: expected a positive integer, got {plan.data_parallel_size!r}")
    if plan.dp_attention_size > 1 and engine != "sglang":
        raise ValueError(f"emit: DP attention is SGLang's (--enable-dp-attention); {engine} has no such flag: emit sglang")
    plan, qnote = checkpoint_for_quantization(engine, plan)
    if plan.model == MODEL_DIR:
        qnote = "; ".join(x for x in (f"{MODEL_DIR}: the config was given as a file that is not a model folder's "
                                      "config.json; put the folder holding this model's config.json and weights "
                                      "in its place", qnote) if x)
    if engine == "vllm":
        from multihead.engines import vllm
        return _noted(replicate(vllm.command(plan), plan), qnote)
    if engine == "sglang":
        from multihead.engines import sglang
        return _noted(replicate(sglang.command(plan), plan), qnote)
    if engine == "tensorrt-llm":
        from multihead.engines import tensorrt_llm
        return _noted(replicate(tensorrt_llm.command(plan), plan), qnote)
    raise ValueError(f"emit: expected one of {', '.join(ENGINES)}, got {engine!r}")


def _noted(cmd: Command, note: str) -> Command:
    return dataclasses.replace(cmd, checkpoint_note=note) if note else cmd
