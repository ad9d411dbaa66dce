"""The checker: black-box probes that find the classic attention bugs in anyone's implementation.

    report = multihead.check_attention(my_attention)        # or a module class / HF function
    print(report); report.passed; report.to_dict()

See check_attention for the accepted signatures, symptoms.CATALOGUE for what each bug looks like
to a user, and docs/checker.md.
"""
from __future__ import annotations

import importlib

# Names load on first use (PEP 562), so that `multihead check` can validate its target spec with
# checker/load.py at parse time without importing torch.
_EXPORTS = {"CheckError": "multihead.checker.adapters", "check_attention": "multihead.checker.check",
            "resolve_signature": "multihead.checker.check", "Finding": "multihead.checker.report",
            "Report": "multihead.checker.report", "CATALOGUE": "multihead.checker.symptoms"}

__all__ = ["check_attention", "resolve_signature", "CheckError", "Finding", "Report", "CATALOGUE"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'multihead.checker' has no attribute {name!r}")
