"""Which dtypes a model is served in: weights, activations, KV cache, and quantized weights.

Engines resolve ``--dtype auto`` from the config's torch_dtype, except that float32 checkpoints
are served in bf16 (fp16 on GPUs without bf16, e.g. V100/T4): a Gemma-2 config saying float32 is
2 bytes per weight on the GPU, not 4, and the plan says so in a note. ``--weights-dtype`` fp8,
int8 and int4 mean quantized layers (embeddings, norms and routers stay 16-bit), as engines do.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from multihead.cost.spec import quantization as quant
from multihead.cost.spec.model import ModelSpec
from multihead.cost.spec.quantization import Quantization
from multihead.cost.spec.units import SIXTEEN_BIT, canonical_dtype


@dataclass(frozen=True)
class Precision:
    weights: str                      # the unquantized weights' dtype (fp32 / fp16 / bf16)
    activation: str
    kv: str
    quantization: Quantization | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def weights_label(self) -> str:
        """What --weights-dtype / JSON weights_dtype say: the quantized format when there is one."""
        return self.quantization.describe() if self.quantization else self.weights


def serving_dtype(config_dtype: str | None) -> tuple[str, str | None]:
    """(dtype, note): the engines' --dtype auto for a checkpoint in ``config_dtype``."""
    if config_dtype is None:
        return "fp16", None
    if config_dtype == "fp32":
        return "bf16", ("torch_dtype: the config says float32; vLLM/SGLang --dtype auto serve float32 "
                        "checkpoints in bf16 (fp16 on GPUs without bf16), so weights and KV are 2 B each")
    if config_dtype in SIXTEEN_BIT:
        return config_dtype, None
    return "bf16", f"torch_dtype: {config_dtype} checkpoint; its unquantized parts served in bf16"


def resolve(spec: ModelSpec, weights_dtype: str | None = None, kv_dtype: str | None = None,
            quantization: str | None = None) -> Precision:
    """The serving precision: flags over the config (quantization_config, torch_dtype)."""
    notes = []
    q = spec.quantization
    if quantization is not None:
        q = quant.from_flag(quantization)
    weights = canonical_dtype(weights_dtype, "weights-dtype") if weights_dtype else None
    if weights in quant.WEIGHTS_DTYPE_QUANT and quantization is None:
        q = quant.from_flag(quant.WEIGHTS_DTYPE_QUANT[weights])
        notes.append(f"weights-dtype {weights}: the layers' projections are quantized "
                     f"({q.describe()}); embeddings, norms and routers stay 16-bit, as engines load them")
        weights = None
    if weights is None and spec.dtype is None and q is not None and q.method == "mxfp4":
        weights = "bf16"        # vLLM's MXFP4 MoE kernels take bf16 activations only (Mxfp4Config)
        notes.append("torch_dtype: absent; an mxfp4 checkpoint runs in bf16 (vLLM resolved --dtype auto to "
                     "bfloat16 for gpt-oss-20b in its start-up log)")
    if weights is None:
        weights, note = serving_dtype(spec.dtype)
        notes += [note] if note else []
    activation = weights if weights in ("fp32", *SIXTEEN_BIT) else "bf16"
    kv = canonical_dtype(kv_dtype, "kv-dtype") if kv_dtype else activation
    if q is not None and q is spec.quantization:
        notes.append(f"quantization: {q.describe()} from config.json quantization_config")
    return Precision(weights, activation, kv, q, tuple(notes))
