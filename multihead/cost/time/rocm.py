"""The matmul efficiency of ROCm engines on AMD Instinct GPUs, apart from CUDA engines' on NVIDIA GPUs (no torch).

The compute side of the model is peak x the GPU's measured matmul ceiling (MAMF: MI300X 60.1% of its
datasheet peak, measured by ml-engineering's benchmark on hipBLASLt) x eta_f, eta_f fitted on all rows.
The measured prefills of vLLM on MI300X run slower than that product (LLM-Inference-Bench, 2024: 16 prompts
of 1024 tokens take 2.3-2.5 s, 2.3x an A100's; vllm-project/recipes #431, 2026: TTFT 645 ms at concurrency
32 for an 8B model), because the engines' ROCm kernels (attention, fused MoE, the GEMM shapes of a serving
step) reach less of the MAMF ceiling than a benchmark GEMM, while their CUDA kernels reach about what the
ceiling shows. So ROCm engines on AMD GPUs get one more fitted factor on eta_f, ``flops_efficiency_rocm``
(timing.Constants; 0 = none, the session-6 model). Memory-bound decode is not affected by it.
"""
from __future__ import annotations

AMD_PREFIXES = ("MI",)      # AMD Instinct parts in the catalog: MI250, MI300X, MI325X, MI355X
ROCM_EFFICIENCY = True      # False: no factor (every GPU's kernels reach eta_f of its ceiling)


def is_amd(gpu_name: str) -> bool:
    return gpu_name.split("@")[0].startswith(AMD_PREFIXES)


def flops_factor(constants, gpu_name: str) -> float:
    """The factor on eta_f for this GPU: the fitted ROCm factor on an AMD GPU when fitted (> 0), else 1."""
    f = getattr(constants, "flops_efficiency_rocm", 0.0)
    return f if ROCM_EFFICIENCY and f and is_amd(gpu_name) else 1.0
