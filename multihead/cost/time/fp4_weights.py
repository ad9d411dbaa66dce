"""MXFP4 weights on GPUs with and without FP4 tensor cores: who pays for unpacking them (no torch).

gpt-oss ships its routed experts in MXFP4 (4-bit e2m1 values, one e8m0 scale per 32). A GPU whose tensor
cores take FP4 operands (NVIDIA Blackwell: B200, B300, GB200; AMD CDNA 4: MI355X) multiplies them as stored;
on a GPU without them (Hopper H100/H200/GH200, CDNA 3 MI300X/MI325X, Ampere, Ada) the engines run a mixed
weight-only kernel (vLLM's Marlin / Triton ``matmul_ogs`` MXFP4 paths, ROCm's Triton path) that unpacks
every weight it reads into 16 bits on the ALUs before the 16-bit MMA, as GPTQ/AWQ int4 kernels do.

So the dequantization term of the step (timing._phase: weight elements read / (rate x fp32 FLOP/s of the
GPU)) applies to MXFP4 only where the GPU lacks FP4 tensor cores, with its own fitted rate ("fp4" in
Constants.dequant): its unpacking (an exponent-scaled e2m1 lookup, a shared e8m0 scale) is not the
integer unpack-and-scale of GPTQ/AWQ or gpt-fast's int4 whose rate is "int4". The elements read are the
touched experts' share of each GPU, so the term shrinks with tensor parallelism and grows with the tokens a
step routes (E(1 - (1 - k/E)^N) experts touched).

Sources: NVIDIA Blackwell architecture technical brief (FP4 Tensor Cores, 2024); AMD CDNA 4 architecture
white paper (MXFP4/MXFP6 matrix ops, MI350 series, 2025); NVIDIA H100 and AMD CDNA 3 white papers list
no FP4 matrix type.
"""
from __future__ import annotations

FP4_TENSOR_CORES = ("B200", "B300", "GB200", "MI355X")
# Session 7 refitted the model with and without this term and compared them by 5-fold cross-validation by
# document on every fitted row (reports/gpu-time/session7_cv.py): with it the fit sets the "fp4" rate at its
# upper bound (100 weights per fp32 FLOP: free) and frees int4's, and the out-of-document median |error| is
# worse (all 13.0% -> 13.1%, dense 8.0% -> 8.9%; MoE 20.0% -> 19.5%). So it stays off: a tested variant.
FP4_KIND = False       # True: MXFP4 unpacking at its own rate where no FP4 tensor cores; False: int4's rate everywhere


def base_name(gpu_name: str) -> str:
    """A measured GPU's catalog name without its variant suffix ("A100-80GB@330W" -> "A100-80GB")."""
    return gpu_name.split("@")[0]


def has_fp4_tensor_cores(gpu_name: str) -> bool:
    return base_name(gpu_name) in FP4_TENSOR_CORES


def is_mxfp4(quantization) -> bool:
    return quantization is not None and quantization.method == "mxfp4"


def dequant_kind(quantization, gpu_name: str) -> str | None:
    """'fp4' for MXFP4 weights on a GPU without FP4 tensor cores, None on one with them (consumed as stored).
    Only for MXFP4: other formats are the caller's (timing.dequant_kind)."""
    if not is_mxfp4(quantization):
        raise ValueError(f"fp4_weights: expected MXFP4 weights, got {getattr(quantization, 'method', None)!r}")
    return None if has_fp4_tensor_cores(gpu_name) else "fp4"
