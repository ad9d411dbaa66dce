"""How far a model's positions reach: max_position_embeddings and rope_scaling, as engines read them.

The covered length follows vLLM's rule for the longest context a config allows (its
max_model_len check): ``yarn`` covers original_max_position_embeddings * factor; other types
with a factor (``linear``, ``dynamic``) cover max_position_embeddings * factor; ``llama3``,
``longrope``/``su`` and Gemma-3 configs already state the scaled length in
max_position_embeddings. Learned absolute positions (GPT-2) cover their table and nothing more.
Beyond the covered length, RoPE angles leave the trained range: the answer is a larger factor,
said as the exact rope_scaling snippet to put in config.json.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field

from multihead.cost.spec.model import ModelSpec, Positions, RopeScaling

STATES_SCALED_LENGTH = ("llama3", "longrope", "su")


@dataclass(frozen=True)
class Coverage:
    """``covered``: tokens the positions reach (None: unknown); ``base``: the length the scaling
    starts from; ``how``: one line saying why."""
    covered: int | None
    base: int | None
    how: str
    learned: bool = False


def coverage(s: ModelSpec) -> Coverage:
    max_pos, rs = s.max_position_embeddings, s.rope_scaling
    if max_pos is None:
        return Coverage(None, None, "max_position_embeddings unknown")
    if s.positions is Positions.LEARNED:
        return Coverage(max_pos, max_pos, f"{max_pos:,} learned positions, none beyond", learned=True)
    if rs is None or rs.factor is None:
        return Coverage(max_pos, max_pos, f"max_position_embeddings {max_pos:,}"
                        + (f" (rope_scaling {rs.rope_type} states no factor)" if rs else ""))
    if rs.rope_type in STATES_SCALED_LENGTH or s.model_type.startswith("gemma3"):
        base = rs.original_max_position_embeddings or max_pos
        return Coverage(max_pos, base, f"max_position_embeddings {max_pos:,} (already scaled: "
                        f"rope_scaling {rs.rope_type} x{rs.factor:g} from {base:,})")
    if rs.rope_type == "yarn":
        base = rs.original_max_position_embeddings or max_pos
        return Coverage(int(base * rs.factor), base, f"rope_scaling yarn: original {base:,} x factor "
                        f"{rs.factor:g} = {int(base * rs.factor):,}")
    return Coverage(int(max_pos * rs.factor), max_pos, f"rope_scaling {rs.rope_type}: max_position_embeddings "
                    f"{max_pos:,} x factor {rs.factor:g} = {int(max_pos * rs.factor):,}")


@dataclass(frozen=True)
class Extension:
    """What T needs beyond the covered length, built from the model's OWN rope_scaling: a factor
    over ``base`` (the length the model was trained at before scaling), the config keys to set
    (``overrides``: what vLLM's --hf-overrides and SGLang's --json-model-override-args carry; empty
    when the type cannot be grown), ``snippet`` (their JSON) and a ``note`` on quality."""
    tokens: int
    covered: int
    base: int
    factor: float
    snippet: str
    rope_type: str = "yarn"
    overrides: dict = field(default_factory=dict, compare=False)
    note: str = ""


def _factor(tokens: int, base: int) -> float:
    """The smallest factor, in steps of 0.01, with base * factor >= tokens."""
    f = math.ceil(tokens / base * 100) / 100
    while base * f < tokens:
        f = round(f + 0.01, 2)
    return f


def extension_needed(s: ModelSpec, tokens: int) -> Extension | None:
    """None when T is covered (or coverage is unknown, or positions are learned and cannot scale);
    else the change that makes the engines accept T (vLLM's derived max_model_len, the rule in
    ``coverage``; SGLang's context length, which ignores the factor when original_max_position_embeddings
    is stated, or for llama3), keeping the model's own scaling type and original length:

    - no rope_scaling: YaRN over max_position_embeddings;
    - yarn: the factor grows over its original_max_position_embeddings;
    - linear / dynamic: the factor grows over max_position_embeddings (which they scale);
    - llama3 (and Gemma-3's linear, which already states the scaled length): the factor grows over
      the original length, and max_position_embeddings is set to the new length;
    - longrope / su: per-dimension factors searched for one length cannot grow by one number: only
      max_position_embeddings is raised, the factors are kept (positions past it are extrapolated);
    - any other type: no override (``overrides`` empty): chunk, or serve a shorter length.
    For yarn and llama3 max_position_embeddings is set to base * factor as well, so that every
    reader (vLLM, SGLang, transformers) derives the same length."""
    c = coverage(s)
    if c.covered is None or tokens <= c.covered or c.learned:
        return None
    rs = s.rope_scaling
    kind = rs.rope_type if rs is not None else "yarn"
    raw = {k: v for k, v in (rs.raw if rs is not None else {}).items() if k != "type"}
    max_pos = s.max_position_embeddings
    already = kind in ("llama3",) or (s.model_type.startswith("gemma3") and rs is not None and rs.factor)
    if rs is None or kind == "yarn":
        base = (rs.original_max_position_embeddings if rs is not None else None) or max_pos
        f = _factor(tokens, base)
        over = {"max_position_embeddings": max(tokens, int(base * f)),
                "rope_scaling": {**raw, "rope_type": "yarn", "factor": f, "original_max_position_embeddings": base}}
    elif already:
        base = rs.original_max_position_embeddings or round(max_pos / rs.factor)
        f = _factor(tokens, base)
        over = {"max_position_embeddings": max(tokens, int(base * f)), "rope_scaling": {**raw, "rope_type": kind,
                                                                                          "factor": f}}
    elif kind in ("linear", "dynamic") and rs.factor:
        base = max_pos
        f = _factor(tokens, base)
        over = {"rope_scaling": {**raw, "rope_type": kind, "factor": f}}
    elif kind in ("longrope", "su"):
        base, f = c.base or max_pos, round(tokens / (c.base or max_pos), 2)
        over = {"max_position_embeddings": tokens}
    else:
        return Extension(tokens, c.covered, c.base or max_pos, round(tokens / c.covered, 2), "", kind, {},
                         f"rope_scaling {kind}: no known way to extend it; serve <= {c.covered:,} tokens or chunk")
    trained = c.covered
    note = (f"past the {trained:,} positions the model covers ({c.how}) the {kind} scaling is stretched to "
            f"{tokens:,}: quality there is not guaranteed (a longer scaling usually wants a short fine-tune); "
            f"measure it on your task")
    if kind in ("longrope", "su"):
        note = (f"longrope's per-dimension factors were searched for {max_pos:,} positions and are kept: "
                f"positions {max_pos:,}..{tokens:,} are extrapolated, quality untested; measure it on your task")
    return Extension(tokens, c.covered, base, f, json.dumps(over), kind, over, note)


def engine_max_len(s: ModelSpec, engine: str = "vllm", overrides: dict | None = None) -> int | None:
    """The longest --max-model-len (SGLang: --context-length) the engine accepts for this config with
    ``overrides`` applied: vLLM's derived max_model_len (``coverage``'s rule) or SGLang's context
    length (the factor counts unless the rope_scaling states original_max_position_embeddings or
    is llama3). None: unknown (no max_position_embeddings)."""
    raw = dict(s.rope_scaling.raw) if s.rope_scaling is not None else None
    max_pos = s.max_position_embeddings
    if overrides:
        max_pos = overrides.get("max_position_embeddings", max_pos)
        raw = overrides.get("rope_scaling", raw)
    if max_pos is None:
        return None
    rs = rope_scaling_of(raw)
    if engine == "sglang":
        if rs is None or rs.factor is None or rs.rope_type == "llama3" or "original_max_position_embeddings" in raw:
            return int(max_pos)
        return int(max_pos * rs.factor)
    spec = dataclasses.replace(s, max_position_embeddings=max_pos, rope_scaling=rs)
    return coverage(spec).covered


def rope_scaling_of(raw) -> RopeScaling | None:
    """A RopeScaling from a config's rope_scaling dict ('type' is the older spelling of 'rope_type')."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"rope_scaling: expected an object, got {raw!r}")
    kind = str(raw.get("rope_type", raw.get("type", "default")))
    factor = raw.get("factor")
    if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float))
                               or not math.isfinite(factor) or factor <= 0):
        raise ValueError(f"rope_scaling.factor: expected a positive number, got {factor!r}")
    original = raw.get("original_max_position_embeddings")
    if original is not None and (isinstance(original, bool) or not isinstance(original, int) or original <= 0):
        raise ValueError(f"rope_scaling.original_max_position_embeddings: expected a positive integer, got {original!r}")
    if kind == "default":
        return None
    return RopeScaling(kind, float(factor) if factor is not None else None, original, dict(raw))
