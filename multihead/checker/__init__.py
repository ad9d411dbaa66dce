"""The checker: black-box probes that find the classic attention bugs in anyone's implementation.

    report = multihead.check_attention(my_attention)        # or a module class / HF function
    print(report); report.passed; report.to_dict()

See check_attention for the accepted signatures, symptoms.CATALOGUE for what each bug looks like
to a user, and docs/checker.md.
"""
from multihead.checker.adapters import CheckError
from multihead.checker.check import check_attention, resolve_signature
from multihead.checker.report import Finding, Report
from multihead.checker.symptoms import CATALOGUE

__all__ = ["check_attention", "resolve_signature", "CheckError", "Finding", "Report", "CATALOGUE"]
