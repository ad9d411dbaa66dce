"""Quantized weights: bytes per weight (scales and zero points included) and which weights.

Serving engines quantize the projections inside the decoder layers (attention, MLP, experts) and
keep the token embedding, the LM head (unless the checkpoint says otherwise), norms, biases and
MoE routers in 16 bits. A quantized weight costs

    bits / 8 + (scale_bytes + zero_bits / 8) / group_size   bytes

where a group is the run of weights sharing one scale along the input dimension (per output
channel: group = in_features; per tensor: ~0 overhead; a 128x128 block: 16,384).

Read from config.json's ``quantization_config`` (gptq, awq, compressed-tensors int/float, fp8,
mxfp4, bitsandbytes, fbgemm_fp8, modelopt) or chosen with ``--quantization`` (vLLM's names).
"""
from __future__ import annotations

from dataclasses import dataclass

PER_CHANNEL = None     # group_size: one scale per output channel (a group = the whole input row)
PER_TENSOR = 0         # group_size: one scale for the whole matrix


@dataclass(frozen=True)
class Quantization:
    method: str                   # vLLM's --quantization name
    bits: float                   # bits of one quantized weight
    group_size: int | None        # weights per scale; PER_CHANNEL or PER_TENSOR
    scale_bytes: float = 2.0      # bytes of one scale (fp16/bf16 2, fp32 4, e8m0/fp8 1)
    zero_bits: float = 0.0        # bits of one zero point per group (0: symmetric, none stored)
    fmt: str = "int"              # "int" or "float" weights
    targets: str = "linear"       # "linear": every projection in the layers; "experts": MoE experts only
    lm_head: bool = False         # the LM head quantized too
    source: str = "config.json quantization_config"

    def bytes_per_weight(self, in_features: int) -> float:
        """bits/8 + (scale + zero) / group: bytes one quantized weight costs, its scales included."""
        group = in_features if self.group_size is PER_CHANNEL else self.group_size
        overhead = (self.scale_bytes + self.zero_bits / 8) / group if group else 0.0
        return self.bits / 8 + overhead

    def describe(self) -> str:
        group = ("per-channel" if self.group_size is PER_CHANNEL else "per-tensor" if self.group_size == 0
                 else f"g{self.group_size}")
        where = " (experts only)" if self.targets == "experts" else ""
        return f"{self.method} {self.fmt}{self.bits:g} {group}{where}"


# -- from config.json --------------------------------------------------------------------------------
def from_config(qc: dict, where: str = "quantization_config") -> Quantization:
    """A Quantization from a config's ``quantization_config``; an unknown method is refused by name."""
    if not isinstance(qc, dict):
        raise ValueError(f"{where}: expected an object, got {type(qc).__name__}")
    method = str(qc.get("quant_method", "")).lower()
    readers = {"gptq": _gptq, "awq": _awq, "compressed-tensors": _compressed_tensors, "fp8": _fp8,
               "mxfp4": _mxfp4, "bitsandbytes": _bitsandbytes, "fbgemm_fp8": _fbgemm_fp8, "modelopt": _modelopt}
    if method in ("gptq_marlin", "marlin"):
        method = "gptq"
    if method == "awq_marlin":
        method = "awq"
    if method not in readers:
        raise ValueError(f"{where}.quant_method: {method or 'missing'!r} is not a method the cost model "
                         f"knows ({', '.join(readers)}); give --weights-dtype/--quantization explicitly")
    return readers[method](qc, where)


# What each method can store (the engines refuse the rest): GPTQ packs 2/3/4/8-bit integers
# (vLLM GPTQConfig: weight_bits in [2, 3, 4, 8]); AWQ is 4-bit (vLLM AWQConfig: "only 4-bit");
# compressed-tensors integer weights 2..8 bits, float weights fp4 (nvfp4) or fp8.
GPTQ_BITS = (2, 3, 4, 8)
AWQ_BITS = (4,)
CT_BITS = {"int": (2, 3, 4, 8), "float": (4, 8)}
BNB_4BIT_TYPES = ("nf4", "fp4")


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _num(qc: dict, key: str, where: str, default=None):
    value = qc.get(key, default)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}.{key}: expected a number, got {_show(value)}")
    return value


def _bits(qc: dict, key: str, where: str, allowed: tuple[int, ...], default=None) -> int:
    value = qc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise ValueError(f"{where}.{key}: expected one of {', '.join(map(str, allowed))} bits, got {_show(value)}")
    return value


def _group_size(qc: dict, key: str, where: str, default=None) -> int | None:
    """A group size: -1 (one group per output channel) or a positive integer (weights per scale)."""
    value = qc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or (value != -1 and value < 1) or value > 1 << 24:
        raise ValueError(f"{where}.{key}: expected -1 (per channel) or a positive integer, got {_show(value)}")
    return PER_CHANNEL if value == -1 else value


def _flag(qc: dict, key: str, where: str, default: bool = False) -> bool:
    value = qc.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ValueError(f"{where}.{key}: expected true or false, got {_show(value)}")
    return value


def _gptq(qc, where):
    bits = _bits(qc, "bits", where, GPTQ_BITS, 4)
    # GPTQ stores packed zero points for every group, symmetric or not
    return Quantization("gptq", bits, _group_size(qc, "group_size", where, 128), 2.0, bits,
                        lm_head=_flag(qc, "lm_head", where))


def _awq(qc, where):
    bits = _bits(qc, "bits" if "bits" in qc else "w_bit", where, AWQ_BITS, 4)
    group = _group_size(qc, "group_size" if "group_size" in qc else "q_group_size", where, 128)
    zero = bits if _flag(qc, "zero_point", where, True) else 0
    return Quantization("awq", bits, group, 2.0, zero)


def _compressed_tensors(qc, where):
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise ValueError(f"{where}.config_groups: expected at least one quantization group")
    name, group = next(iter(groups.items()))
    w = group.get("weights") if isinstance(group, dict) else None
    at = f"{where}.config_groups.{name}.weights"
    if not isinstance(w, dict):
        raise ValueError(f"{at}: expected an object")
    fmt = w.get("type", "int")
    if fmt not in CT_BITS:
        raise ValueError(f"{at}.type: expected 'int' or 'float', got {_show(fmt)}")
    bits = _bits(w, "num_bits", at, CT_BITS[fmt])
    strategy = w.get("strategy", "tensor")
    if strategy not in ("channel", "tensor", "group", "tensor_group", "block"):
        raise ValueError(f"{at}.strategy: {_show(strategy)} is not one the cost model knows "
                         f"(channel, tensor, group, tensor_group, block)")
    if strategy in ("group", "tensor_group"):
        size = _group_size(w, "group_size", at)
        if size is PER_CHANNEL:
            raise ValueError(f"{at}.group_size: a {strategy} strategy needs a positive group size, got -1")
    else:
        size = {"channel": PER_CHANNEL, "tensor": PER_TENSOR}.get(strategy) if strategy != "block" else \
            _block(w, "block_structure", at, required=True)
    scale = 1.0 if strategy == "tensor_group" else 2.0            # nvfp4: fp8 scales per 16
    zero = 0 if _flag(w, "symmetric", at, True) else bits
    ignore = qc.get("ignore") or []
    if not isinstance(ignore, list):
        raise ValueError(f"{where}.ignore: expected a list of module names, got {_show(ignore)}")
    return Quantization("compressed-tensors", bits, size, scale, zero, fmt=fmt,
                        lm_head="lm_head" not in [str(x) for x in ignore])


def _block(qc: dict, key: str, where: str, required: bool = False) -> int | None:
    """A [rows, cols] block of weights sharing one scale -> rows * cols (None: not stated)."""
    value = qc.get(key)
    if value is None and not required:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 1 << 16 for x in value)):
        raise ValueError(f"{where}.{key}: expected a pair of positive integers [rows, cols], got {_show(value)}")
    return value[0] * value[1]


def _fp8(qc, where):
    block = _block(qc, "weight_block_size", where)
    # DeepSeek-V3: fp32 scale per 128x128 block; vLLM's online fp8: one scale per tensor
    return Quantization("fp8", 8, block if block else PER_TENSOR, 4.0, fmt="float")


def _fbgemm_fp8(qc, where):
    return Quantization("fbgemm_fp8", 8, PER_CHANNEL, 4.0, fmt="float")


def _mxfp4(qc, where):
    # OCP MX: 4-bit e2m1 weights, one e8m0 (1 B) scale per 32; gpt-oss quantizes its experts only
    return Quantization("mxfp4", 4, 32, 1.0, fmt="float", targets="experts")


def _modelopt(qc, where):
    algo = str(qc.get("quantization", qc).get("quant_algo", "")).upper() if isinstance(
        qc.get("quantization", qc), dict) else ""
    if algo == "NVFP4":
        return Quantization("modelopt", 4, 16, 1.0, fmt="float")
    if algo == "FP8":
        return Quantization("modelopt", 8, PER_TENSOR, 4.0, fmt="float")
    raise ValueError(f"{where}.quant_algo: {algo or 'missing'!r} is not FP8 or NVFP4")


def _bitsandbytes(qc, where):
    eight, four = _flag(qc, "load_in_8bit", where), _flag(qc, "load_in_4bit", where)
    if eight == four:       # transformers' BitsAndBytesConfig refuses both; neither quantizes nothing
        raise ValueError(f"{where}: bitsandbytes needs exactly one of load_in_4bit / load_in_8bit true, got "
                         f"load_in_4bit {qc.get('load_in_4bit')!r}, load_in_8bit {qc.get('load_in_8bit')!r}")
    if eight:
        return Quantization("bitsandbytes", 8, PER_CHANNEL, 4.0)       # LLM.int8: fp32 scale per row
    # NF4/FP4 in blocks of 64 with an absmax each: fp32, or (double quant) 8-bit + fp32 per 256 blocks
    double = _flag(qc, "bnb_4bit_use_double_quant", where)
    kind = qc.get("bnb_4bit_quant_type", "nf4")
    if kind not in BNB_4BIT_TYPES:
        raise ValueError(f"{where}.bnb_4bit_quant_type: expected 'nf4' or 'fp4', got {_show(kind)}")
    return Quantization("bitsandbytes", 4, 64, 1.0 + 4.0 / 256 if double else 4.0, fmt=kind)


# -- from the command line (vLLM's --quantization names) ---------------------------------------------
FLAG_DEFAULTS = {
    "gptq": Quantization("gptq", 4, 128, 2.0, 4, source="--quantization gptq (4-bit, group 128)"),
    "awq": Quantization("awq", 4, 128, 2.0, 4, source="--quantization awq (4-bit, group 128)"),
    "fp8": Quantization("fp8", 8, PER_TENSOR, 4.0, fmt="float", source="--quantization fp8 (per-tensor scale)"),
    "int8": Quantization("compressed-tensors", 8, PER_CHANNEL, 2.0, source="w8a8 int8, per-channel scales"),
    "bitsandbytes": Quantization("bitsandbytes", 4, 64, 4.0, fmt="nf4", source="--quantization bitsandbytes (nf4)"),
    "mxfp4": Quantization("mxfp4", 4, 32, 1.0, fmt="float", targets="experts",
                          source="--quantization mxfp4 (MoE experts only)"),
}
# the older --weights-dtype values, now quantizing as engines do (embeddings stay 16-bit)
WEIGHTS_DTYPE_QUANT = {"fp8": "fp8", "int8": "int8", "int4": "gptq"}


def from_flag(name: str) -> Quantization:
    key = str(name).lower()
    if key not in FLAG_DEFAULTS:
        raise ValueError(f"quantization: expected one of {', '.join(FLAG_DEFAULTS)}, got {name!r}")
    return FLAG_DEFAULTS[key]
