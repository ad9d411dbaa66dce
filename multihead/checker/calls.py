"""Every call of the target goes through one place: Recorder.

It hands the target copies of q, k, v and the mask (so a target that writes into its inputs
cannot change what a probe compares next, and the write itself is reported once, as
input_mutation), records the call in the coverage table, and remembers the call in flight (a
probe that hangs is reported with the call it hung in). An exception raised by the target is
re-raised as TargetRaised, which says whether it looks like a deliberate refusal of an input
(ValueError, TypeError, NotImplementedError, AssertionError: the function checks its input) or a
crash inside it (IndexError, RuntimeError from a shape mismatch, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from multihead.checker.adapters import CheckError, Unsupported
from multihead.checker.coverage import Coverage, call_tags

REFUSAL_TYPES = (ValueError, TypeError, NotImplementedError, AssertionError)


class TargetRaised(Exception):
    """The target raised `error` on the call described by `call`."""

    def __init__(self, error: Exception, call: str):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error, self.call = error, call

    @property
    def deliberate(self) -> bool:
        return isinstance(self.error, REFUSAL_TYPES + (Unsupported,))


class TargetExited(BaseException):
    """The target called sys.exit() / raised SystemExit: the check stops here."""


def describe(q, k, mask, is_causal) -> str:
    B, H, Tq, d = q.shape
    kinds = call_tags(q, k, mask, is_causal, "")["mask"]
    return (f"B={B}, H={H}, H_kv={k.shape[1]}, Tq={Tq}, Tk={k.shape[2]}, d={d}, {str(q.dtype).replace('torch.', '')}, "
            f"mask: {' + '.join(kinds)}")


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


@dataclass
class Recorder:
    target: object                              # FunctionTarget
    coverage: Coverage = field(default_factory=Coverage)
    in_flight: str = ""                         # the call running now (for a timeout report)
    mutated: list[str] = field(default_factory=list)
    watch: object = None                        # watch(call), if set, is told each call before it starts

    def __getattr__(self, name):                # kind, gqa, scale_arg, ... of the wrapped target
        return getattr(self.target, name)

    def __call__(self, q, k, v, mask=None, is_causal=False, scale=None, pattern: str = "random"):
        tags = call_tags(q, k, mask, is_causal, pattern)
        call = describe(q, k, mask, is_causal)
        args = [t.clone() for t in (q, k, v)] + [mask.clone() if mask is not None else None]
        self.in_flight = call
        if self.watch:
            self.watch(call)
        try:
            out, w = self.target(*args, is_causal=is_causal, scale=scale)
        except Unsupported as err:
            self.coverage.refuse(call, tags, str(err))
            raise
        except (CheckError, TargetExited):
            raise
        except SystemExit as err:
            raise TargetExited(f"the target called sys.exit({err.code!r}) on {call}") from None
        except Exception as err:   # noqa: BLE001 - the target's own exception: a refusal or a crash
            self.coverage.refuse(call, tags, f"{type(err).__name__}: {str(err)[:120]}")
            raise TargetRaised(err, call) from None
        finally:
            self.in_flight = ""
        self.coverage.record(tags, tk=k.shape[2])
        names = [n for n, a, b in zip(("q", "k", "v", "mask"), args, (q, k, v, mask)) if b is not None and not _same(a, b)]
        if names and len(self.mutated) < 3:
            self.mutated.append(f"{', '.join(names)} changed by the call on {call}")
        return out, w


@dataclass
class ModuleRecorder:
    """The module counterpart of Recorder: x [B, T, D] -> y, recorded as Tq = Tk = T."""
    target: object                              # ModuleTarget
    dtype: torch.dtype
    coverage: Coverage = field(default_factory=Coverage)
    in_flight: str = ""
    mutated: list[str] = field(default_factory=list)
    watch: object = None

    def __getattr__(self, name):
        return getattr(self.target, name)

    def __call__(self, x, mask=None, is_causal=False):
        B, T, D = x.shape
        t = self.target
        q = torch.empty(B, t.n_heads, T, 0, dtype=self.dtype)          # shapes only, for the tags
        k = torch.empty(B, t.n_kv_heads, T, 0)
        tags = call_tags(q, k, mask, is_causal, "random")
        call = f"x [{B}, {T}, {D}], mask: {' + '.join(tags['mask'])}"
        x_in = x.clone()
        self.in_flight = call
        if self.watch:
            self.watch(call)
        try:
            y = t(x_in, mask=mask, is_causal=is_causal)
        except Exception as err:   # noqa: BLE001
            self.coverage.record(tags, f"{type(err).__name__}: {str(err)[:120]}")
            raise
        finally:
            self.in_flight = ""
        self.coverage.record(tags, tk=T)
        if not _same(x_in, x) and len(self.mutated) < 3:
            self.mutated.append(f"x changed by the call on {call}")
        return y
