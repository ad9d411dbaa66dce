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

import json
import math
from dataclasses import dataclass

from multihead.cost.model import ModelSpec, Positions, RopeScaling

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
    """What T needs beyond the covered length: a factor over ``base`` and the config snippet."""
    tokens: int
    covered: int
    base: int
    factor: float
    snippet: str


def extension_needed(s: ModelSpec, tokens: int) -> Extension | None:
    """None when T is covered (or coverage is unknown, or positions are learned and cannot scale);
    else the smallest YaRN factor (rounded up to 0.01) that covers T, over the model's base length."""
    c = coverage(s)
    if c.covered is None or tokens <= c.covered or c.learned:
        return None
    rs = s.rope_scaling
    # a yarn config scales its original length again; anything else is extended from what it covers now
    base = c.base if (rs is not None and rs.rope_type == "yarn") else c.covered
    factor = math.ceil(tokens / base * 100) / 100
    snippet = json.dumps({"rope_scaling": {"rope_type": "yarn", "factor": factor,
                                           "original_max_position_embeddings": base}})
    return Extension(tokens, c.covered, base, factor, snippet)


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
