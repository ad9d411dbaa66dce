"""Deprecated import path: the formulas live in ``multihead.cost`` (formulas.py, units.py).

Kept so modules not yet moved keep working; import from ``multihead.cost.formulas`` instead.
"""
from multihead.cost.formulas import (attention_flops, attention_params, causal_pairs, ceil_div,  # noqa: F401
                                     kv_cache_bytes, kv_cache_elements, linear_flops, model_attention_flops,
                                     score_matrix_bytes)
from multihead.cost.model import head_dim_of  # noqa: F401
from multihead.cost.units import DTYPE_BYTES, dtype_bytes  # noqa: F401
