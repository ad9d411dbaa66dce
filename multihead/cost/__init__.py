"""The cost model: every count, byte and FLOP of serving a transformer, in one torch-free package.

Public API (what the planner, serving, timing, the web page and the experiments call):

    from multihead import cost
    spec = cost.read_config(config_dict, name="Qwen3-30B-A3B")   # HF config.json -> ModelSpec
    spec = cost.resolve_model("Llama-3.1-8B" | "path/config.json" | spec)   # catalog name, file, spec
    c = cost.param_counts(spec)            # ParamCounts: .total, .active, .embedding, .experts_total, ...
    prec = cost.spec.precision.resolve(spec, weights_dtype=None, kv_dtype=None, quantization=None)
    w = cost.weight_bytes(spec, prec.weights, prec.quantization, gpus=1)    # WeightBytes: .total
    cost.kv_bytes_per_token(spec, "bf16")  # all layers, uncapped (MLA: latent only)
    cost.kv_bytes(spec, tokens, "bf16", batch=1, gpus=1)   # per GPU, windows capped
    cost.kv_layer_groups(spec)             # KVGroup(kind, layers, window, elements_per_token, latent)
    cost.coverage(spec); cost.extension_needed(spec, tokens)  # rope_scaling: covered length, factor, snippet
    cost.spec_attention_flops(spec, tokens, batch, causal)    # prefill attention FLOPs, windows included
    cost.catalog_gpu("H100-SXM")           # the GPU's one record (DeviceSpec); cost.gpu_catalog(): the names

Rooms (docs/layout.md "cost/ by room"; arrows point down only): ``spec/`` (units, model, quantization,
hf_config and config_file, lookup, positions, precision), ``counts/`` (formulas, params, memory),
``time/`` (timing: the fitted GPU-time model and its Setup; device: the one device record; cpu_profile and attention_time: a
measured CPU; communication, engine fixed costs, MoE terms, intervals, the operating point),
``serving/`` (one memory account per engine: vllm, sglang; the answer; fitted: the data door). The
offline fitting and validation live in ``multihead.fits``, which nothing here imports.

Symbols everywhere: B batch, T tokens, D hidden_size, H heads, H_kv KV heads, d head_dim, L layers,
I intermediate_size, V vocab_size, E experts, k experts per token.
"""
from multihead.cost.spec import precision
from multihead.cost.spec.lookup import catalog_model, load_config_file, model_catalog, model_names, resolve_model
from multihead.cost.time.device import DeviceSpec, catalog_gpu, gpu_catalog
from multihead.cost.counts.formulas import (Dims, attention_flops, attention_params, causal_pairs, decode_attention_flops,
                                     kv_cache_bytes, score_matrix_bytes, spec_attention_flops, tiled_state_bytes)
from multihead.cost.spec.hf_config import read_config
from multihead.cost.counts.memory import (KVGroup, WeightBytes, decode_weight_bytes, kv_bytes, kv_bytes_per_token,
                                   kv_layer_groups, weight_bytes)
from multihead.cost.spec.model import MLA, LayerKind, ModelSpec, MoE, RopeScaling
from multihead.cost.counts.params import ParamCounts, param_counts, total_params
from multihead.cost.spec.positions import coverage, extension_needed
from multihead.cost.spec.quantization import Quantization
from multihead.cost.spec.units import dtype_bytes

__all__ = ["precision", "catalog_model", "load_config_file", "model_catalog", "model_names", "resolve_model", "DeviceSpec",
           "catalog_gpu", "gpu_catalog", "Dims", "attention_flops", "attention_params", "causal_pairs",
           "decode_attention_flops", "kv_cache_bytes", "score_matrix_bytes", "spec_attention_flops",
           "tiled_state_bytes", "read_config", "KVGroup", "WeightBytes", "decode_weight_bytes", "kv_bytes",
           "kv_bytes_per_token", "kv_layer_groups", "weight_bytes", "MLA", "LayerKind", "ModelSpec", "MoE",
           "RopeScaling", "ParamCounts", "param_counts", "total_params", "coverage", "extension_needed",
           "Quantization", "dtype_bytes"]
