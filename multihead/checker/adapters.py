"""Adapters: one calling convention for every kind of target the checker accepts.

Attention functions (signature "sdpa" or "hf") are wrapped in FunctionTarget, whose __call__ is

    target(q, k, v, mask=None, is_causal=False, scale=None) -> (out, weights or None)
    q [B, H, Tq, d], k/v [B, H_kv, Tk, d], mask bool broadcastable to [B, 1, Tq, Tk], True =
    attend; out [B, H, Tq, d] (HF's [B, Tq, H, d] is transposed back); weights [B, H, Tq, Tk]
    when the function returns them.

Modules (signature "module") are wrapped in ModuleTarget: target(x, mask=None, is_causal=False)
-> y, x and y [B, T, D].
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

import torch


class CheckError(ValueError):
    """The target cannot be checked at all (wrong signature, crashes on plain inputs). The CLI
    prints the message and exits with status 2."""


class Unsupported(Exception):
    """The target does not take an argument a probe needs (e.g. no attn_mask): skip the probe."""


# Parameter names by role; the first of each group found in the signature is used.
_MASK_NAMES = ("attn_mask", "mask", "attention_mask")
_CAUSAL_NAMES = ("is_causal", "causal")
_SCALE_NAMES = ("scale", "softmax_scale", "sm_scale", "scaling")


def _param_names(fn) -> tuple[list[str], bool]:
    """(parameter names, takes **kwargs). Builtins without a signature (torch's SDPA) are read
    from the first line of their docstring, "name(query, key, value, attn_mask=None, ...)"."""
    try:
        params = inspect.signature(fn).parameters.values()
        names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        return names, any(p.kind == p.VAR_KEYWORD for p in params)
    except (TypeError, ValueError):
        doc = (getattr(fn, "__doc__", None) or "").strip()
        m = re.match(r"[\w.]+\((.*?)\)", doc, re.S)
        if not m:
            return [], True   # unknown: assume SDPA's keywords and let the probe call decide
        names = [re.split(r"[=:\s]", a.strip())[0] for a in m.group(1).split(",")]
        return [n.lstrip("*") for n in names if n and n not in ("*", "/")], "**" in m.group(1)


def _first(names: list[str], var_kw: bool, candidates: tuple[str, ...]) -> str | None:
    for c in candidates:
        if c in names:
            return c
    return candidates[0] if var_kw else None


def _split_output(result, kind: str):
    """fn's return value -> (out, weights or None)."""
    weights, returned = None, type(result).__name__
    if isinstance(result, (tuple, list)):
        if not result:
            raise CheckError(f"the {kind} function returned an empty {type(result).__name__}")
        if len(result) > 1 and isinstance(result[1], torch.Tensor) and result[1].dim() == 4:
            weights = result[1]
        returned = f"a {type(result).__name__} whose first item is {type(result[0]).__name__}"
        result = result[0]
    if not isinstance(result, torch.Tensor):
        raise CheckError(f"the {kind} function returned {returned}, expected a tensor "
                         f"(or a tuple whose first item is one)")
    return result, weights


class _HFModule(torch.nn.Module):
    """The stand-in `module` handed to an HF-style attention function: the attributes
    transformers' attention functions read (num_key_value_groups, scaling, is_causal, ...)."""

    def __init__(self, n_heads: int, n_kv_heads: int, head_dim: int):
        super().__init__()
        self.num_key_value_groups = n_heads // n_kv_heads
        self.head_dim = head_dim
        self.scaling = head_dim ** -0.5
        self.is_causal = False        # causality always arrives as an explicit mask
        self.layer_idx = 0
        self.attention_dropout = 0.0
        self.eval()


@dataclass
class FunctionTarget:
    """An attention function with the SDPA signature or the HF attention-function signature."""
    fn: object
    kind: str                              # "sdpa" or "hf"
    mask_arg: str | None = None
    causal_arg: str | None = None
    scale_arg: str | None = None
    gqa: str = "native"                    # "native", "enable_gqa" or "repeat" (fn needs H_kv == H)
    returns_weights: bool = False
    accepts_enable_gqa: bool = False
    notes: list[str] = field(default_factory=list)
    watch: object = None                   # watch(call) is told each setup call before it starts

    @classmethod
    def build(cls, fn, kind: str, watch=None) -> "FunctionTarget":
        """Read fn's parameters, then call it on plain inputs (and GQA-shaped K/V) to learn what it
        accepts. watch(call), when given, is told each of those calls before it starts (the
        checker runs this setup under its watchdog and names the call in flight)."""
        if not callable(fn):
            raise CheckError(f"expected a callable, got {type(fn).__name__}")
        names, var_kw = _param_names(fn)   # names == [] when unknown: let the probe call decide
        if kind == "sdpa":
            if names and len(names) < 3 and not var_kw:
                raise CheckError(f"an sdpa-style function takes (q, k, v, attn_mask=None, is_causal=False, "
                                 f"scale=None); this one takes ({', '.join(names)})")
            t = cls(fn, kind, _first(names, var_kw, _MASK_NAMES), _first(names, var_kw, _CAUSAL_NAMES),
                    _first(names, var_kw, _SCALE_NAMES))
            t.accepts_enable_gqa = "enable_gqa" in names or var_kw
        elif kind == "hf":
            if names and len(names) < 5 and not var_kw:
                raise CheckError(f"an HF attention function takes (module, query, key, value, attention_mask, "
                                 f"scaling=..., dropout=..., **kwargs); this one takes ({', '.join(names)})")
            t = cls(fn, kind, "attention_mask", None, "scaling")
        else:
            raise ValueError(f"kind: expected 'sdpa' or 'hf', got {kind!r}")
        t.watch = watch
        t._validate()
        return t

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, q, k, v, mask=None, is_causal=False, scale=None):
        with torch.no_grad():
            if self.kind == "hf":
                return self._call_hf(q, k, v, mask, is_causal, scale)
            return self._call_sdpa(q, k, v, mask, is_causal, scale)

    def _call_sdpa(self, q, k, v, mask, is_causal, scale, gqa=None):
        kwargs = {}
        if mask is not None:
            if not self.mask_arg:
                raise Unsupported("the function takes no attn_mask argument")
            kwargs[self.mask_arg] = mask
        if is_causal:
            if not self.causal_arg:
                raise Unsupported("the function takes no is_causal argument")
            kwargs[self.causal_arg] = True
        if scale is not None:
            if not self.scale_arg:
                raise Unsupported("the function takes no scale argument")
            kwargs[self.scale_arg] = scale
        gqa = gqa or self.gqa
        if k.shape[1] != q.shape[1]:
            if gqa == "repeat":      # the caller's job when fn only takes H_kv == H: do it right
                g = q.shape[1] // k.shape[1]
                k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
            elif gqa == "enable_gqa":
                kwargs["enable_gqa"] = True
        out, w = _split_output(self.fn(q, k, v, **kwargs), "sdpa")
        return self._check_shape(out, q, v), w

    def _call_hf(self, q, k, v, mask, is_causal, scale):
        B, H, Tq, d = q.shape
        Tk = k.shape[2]
        keep = None
        if is_causal:
            i = torch.arange(Tq, device=q.device)[:, None]
            keep = torch.arange(Tk, device=q.device)[None, :] <= i + (Tk - Tq)   # bottom-right, as HF's cache masks
        if mask is not None and mask.dim() == 4 and mask.shape[1] > 1:
            raise Unsupported("HF attention masks are [B, 1, Tq, Tk]: a per-head mask is not part of the convention")
        bias = None
        if mask is not None and mask.dtype != torch.bool:
            bias = mask.to(q.dtype).expand(B, 1, Tq, Tk)
        elif mask is not None:
            keep = mask if keep is None else mask & keep
        additive = bias
        if keep is not None:   # HF convention: a float mask added to the scores, 0 = attend, finfo.min = masked
            keep = keep.expand(B, 1, Tq, Tk)
            zero = torch.zeros((), dtype=q.dtype, device=q.device) if bias is None else bias
            additive = torch.where(keep, zero, torch.finfo(q.dtype).min)
        module = _HFModule(H, k.shape[1], d)
        scaling = module.scaling if scale is None else float(scale)
        result = self.fn(module, q, k, v, additive, scaling=scaling, dropout=0.0)
        out, w = _split_output(result, "hf")
        if out.dim() != 4 or tuple(out.shape) != (B, Tq, H, v.shape[-1]):
            raise CheckError(f"the hf function returned shape {tuple(out.shape)}, expected [B, Tq, H, d] = "
                             f"{[B, Tq, H, v.shape[-1]]} (HF attention functions return out.transpose(1, 2))")
        return out.transpose(1, 2), w                                    # (B, H, Tq, d)

    @staticmethod
    def _check_shape(out, q, v):
        want = (q.shape[0], q.shape[1], q.shape[2], v.shape[-1])
        if tuple(out.shape) != want:
            raise CheckError(f"the function returned shape {tuple(out.shape)}, expected [B, H, Tq, d] = {list(want)}")
        return out

    # -- one-off probing of what the function accepts ----------------------------------------------
    def _validate(self) -> None:
        g = torch.Generator().manual_seed(1234)
        q, k, v = (torch.randn(1, 2, 3, 8, generator=g) for _ in range(3))
        self._announce(q, k)
        try:
            out, w = self(q, k, v)
        except CheckError:
            raise
        except Exception as err:   # noqa: BLE001 - any crash on plain inputs makes fn unusable
            raise CheckError(f"calling the function on plain float32 inputs q, k, v [1, 2, 3, 8] raised "
                             f"{type(err).__name__}: {err}") from None
        self.returns_weights = w is not None
        if self.kind == "sdpa":
            self._detect_gqa()

    def _announce(self, q, k, what: str = "") -> None:
        if self.watch:
            from multihead.checker.calls import describe      # calls imports this module
            self.watch(describe(q, k, None, False) + what)

    def _detect_gqa(self) -> None:
        """Does fn take GQA-shaped K/V ([B, H_kv, T, d] with H_kv < H)? Try plain, then
        enable_gqa=True; otherwise the checker repeats heads itself (and says so)."""
        g = torch.Generator().manual_seed(4321)
        q = torch.randn(1, 4, 3, 8, generator=g)
        k, v = (torch.randn(1, 2, 3, 8, generator=g) for _ in range(2))
        for mode in ["native", "enable_gqa"] if self.accepts_enable_gqa else ["native"]:
            self._announce(q, k, f" ({'enable_gqa=True' if mode == 'enable_gqa' else 'GQA-shaped k/v'})")
            try:
                self._call_sdpa(q, k, v, None, False, None, gqa=mode)
                self.gqa = mode
                return
            except Exception:   # noqa: BLE001 - a refusal is an answer here
                continue
        self.gqa = "repeat"
        self.notes.append("the function does not take GQA-shaped K/V (H_kv < H); the checker expands K/V "
                          "with repeat_interleave before calling it")


# -- modules ----------------------------------------------------------------------------------------
_D_NAMES = ("d_model", "dim", "embed_dim", "hidden_size", "n_embd", "model_dim", "hidden_dim", "d")
_H_NAMES = ("n_heads", "num_heads", "n_head", "num_attention_heads", "heads")
_HKV_NAMES = ("n_kv_heads", "num_kv_heads", "num_key_value_heads", "n_kv_head", "kv_heads")


def _attr(obj, names):
    for n in names:
        value = getattr(obj, n, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def instantiate(cls, d_model: int = 64, n_heads: int = 4, n_kv_heads: int = 2) -> torch.nn.Module:
    """Build a module class with small sizes, matching its constructor's parameter names."""
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError) as err:
        raise CheckError(f"cannot read the constructor of {cls.__name__}: {err}") from None
    sizes = [(_D_NAMES, d_model), (_H_NAMES, n_heads), (_HKV_NAMES, n_kv_heads)]
    kwargs, missing = {}, []
    for name, p in params.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        value = next((v for names, v in sizes if name in names), None)
        if value is not None:
            kwargs[name] = value
        elif p.default is p.empty:
            missing.append(name)
    if missing:
        raise CheckError(f"cannot construct {cls.__name__}: no value for its required parameter(s) "
                         f"{', '.join(missing)} (the checker fills d_model/n_heads/n_kv_heads and their "
                         f"usual aliases); pass an instance instead")
    try:
        return cls(**kwargs)
    except Exception as err:   # noqa: BLE001
        raise CheckError(f"constructing {cls.__name__}({', '.join(f'{k}={v}' for k, v in kwargs.items())}) "
                         f"raised {type(err).__name__}: {err}") from None


@dataclass
class ModuleTarget:
    """A module with the MultiHeadAttention interface: forward(x, *, attn_mask=None,
    is_causal=False), x and the result [B, T, D]; n_heads / n_kv_heads attributes."""
    module: torch.nn.Module
    d_model: int
    n_heads: int
    n_kv_heads: int
    notes: list[str] = field(default_factory=list)
    takes_mask: bool = True
    takes_causal: bool = True
    was_training: bool = False             # the module was in training mode before the checker's .eval()

    @classmethod
    def build(cls, obj, dtype: torch.dtype, device, sizes: tuple[int, int, int] = (64, 4, 2),
              watch=None) -> "ModuleTarget":
        """Build (a class) or copy (an instance) the module, put it in eval mode and find its width
        with dry forwards; watch(call), when given, is told each call of the target's code first."""
        import copy

        watch = watch or (lambda call: None)
        if isinstance(obj, type):
            if not issubclass(obj, torch.nn.Module):
                raise CheckError(f"{obj.__name__} is a class but not a torch.nn.Module")
            watch(f"constructing {obj.__name__} (d_model, n_heads, n_kv_heads = {', '.join(map(str, sizes))})")
            module = instantiate(obj, *sizes)
        elif isinstance(obj, torch.nn.Module):
            module = copy.deepcopy(obj)   # we change dtype/device and mode; the caller's stays as it was
        else:
            raise CheckError(f"signature 'module' expects an nn.Module class or instance, got {type(obj).__name__}")
        n_heads = _attr(module, _H_NAMES) or 1
        n_kv = _attr(module, _HKV_NAMES) or n_heads
        was_training = module.training
        module = module.to(device=device, dtype=dtype).eval()
        names, var_kw = _param_names(module.forward)
        # The model width D: every interpretation the module suggests (a width attribute, e.g. `d`
        # may be the head width rather than the model's; the first Linear's in_features), tried in
        # that order with a dry forward on x [2, 3, D]; the first that maps x to its own shape is D.
        cands = {}
        for n in _D_NAMES:
            value = getattr(module, n, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                cands.setdefault(value, f"attribute {n}")
        linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
        if linears:
            cands.setdefault(linears[0].in_features, "the first Linear's in_features")
        if not cands:
            raise CheckError(f"cannot tell the model width of {type(module).__name__}: give it a d_model "
                             f"(or dim / embed_dim / hidden_size) attribute")
        tried, errors = [], []
        for d_model, why in cands.items():
            t = cls(module, d_model, n_heads, n_kv, was_training=was_training)
            t.takes_mask, t.takes_causal = var_kw or "attn_mask" in names, var_kw or "is_causal" in names
            x = torch.randn(2, 3, d_model, generator=torch.Generator().manual_seed(99)).to(device=device, dtype=dtype)
            watch(f"x [2, 3, {d_model}], mask: none (finding the model width: {why})")
            try:
                y = t(x)
            except Exception as err:   # noqa: BLE001
                errors.append((d_model, why, err))
                tried.append(f"D={d_model} ({why}): {type(err).__name__}")
                continue
            if not isinstance(y, torch.Tensor) or tuple(y.shape) != tuple(x.shape):
                shape = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
                errors.append((d_model, why, f"maps x [2, 3, {d_model}] to {shape}"))
                tried.append(f"D={d_model} ({why}): output {shape}")
                continue
            if len(cands) > 1:
                t.notes.append(f"model width D={d_model}, from {why}" + (f" (tried first: {'; '.join(tried)})"
                                                                          if tried else f" (other candidates: "
                               f"{', '.join(f'D={v} ({w})' for v, w in cands.items() if v != d_model)})"))
            return t
        d_model, why, err = errors[0]
        if len(errors) == 1 and isinstance(err, Exception):
            hint = ("; the module interface is forward(x, *, attn_mask=None, is_causal=False): wrap a module that "
                    "takes (query, key, value), such as nn.MultiheadAttention (docs/checker.md)"
                    if isinstance(err, TypeError) else "")
            raise CheckError(f"calling the module on x [2, 3, {d_model}] raised {type(err).__name__}: {err}"
                             f"{hint}") from None
        if len(errors) == 1:
            raise CheckError(f"the module {err}; expected the same shape")
        raise CheckError(f"no model width works for {type(module).__name__}: "
                         + "; ".join(f"D={v} ({w}): {e if isinstance(e, str) else f'{type(e).__name__}: {e}'}"
                                     for v, w, e in errors))

    def __call__(self, x, mask=None, is_causal=False):
        kwargs = {}
        if mask is not None:
            if not self.takes_mask:
                raise Unsupported("the module's forward takes no attn_mask argument")
            kwargs["attn_mask"] = mask
        if is_causal:
            if not self.takes_causal:
                raise Unsupported("the module's forward takes no is_causal argument")
            kwargs["is_causal"] = True
        with torch.no_grad():
            y = self.module(x, **kwargs)
        if isinstance(y, (tuple, list)):
            y = y[0]
        return y

