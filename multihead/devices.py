"""Deprecated import path: devices now live in ``multihead.cost``.

GPU roofline and catalog: ``cost/device.py``; a measured profile's kernel terms and its JSON file:
``cost/cpu_profile.py``; seconds of attention calls and decode steps: ``cost/attention_time.py``.
"""
from multihead.cost.attention_time import (SPILL_BYTES_PER_SCORE, attention_prefill_seconds,  # noqa: F401
                                           attention_seconds, decode_attention_seconds, decode_step_seconds,
                                           spills)
from multihead.cost.cpu_profile import (PROFILE_SCHEMA, DecodeCosts, PrefillCosts, backend_for,  # noqa: F401
                                        decode_costs, decode_rows_class, device_to_profile, load_device,
                                        prefill_costs, write_profile)
from multihead.cost.device import (DEFAULT_BANDWIDTH_EFFICIENCY, DEFAULT_FLOPS_EFFICIENCY, DeviceSpec,  # noqa: F401
                                   compute_seconds, dtype_key, gpu_catalog, memory_seconds)
