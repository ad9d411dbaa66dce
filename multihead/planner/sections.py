"""Optional plan sections (``serving``, ...): a registry, so adding one touches no planner code.

A section is built after the core plan from the same Accounts and numbers::

    from multihead.planner import sections

    def build_serving(ctx: sections.Context):          # return None to leave the section out
        return ServingAccount(...)                     # any object with to_dict(); optional render(console)
                                                       # and explain() -> list[str]
    sections.register("serving", build_serving)

``plan(..., options={"serving": {...}})`` hands each builder its own options (ctx.options). The
section appears in ``Plan.sections[name]``, in the JSON under ``name``, in the tables after the
fallbacks (``render``) and in --explain (``explain``). ``BUILTIN`` lists modules imported before
building, so their ``register`` calls run; append a module there to add a section.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

BUILTIN: list[str] = ["multihead.planner.serving"]     # issue 13: always computed
_BUILDERS: dict[str, Callable[["Context"], Any]] = {}


@dataclass
class Context:
    """What a section builder reads: the plan so far (numbers, inputs) and its Accounts (spec, device,
    precision, batch, gpus; ``accounts.setup`` the time model's Setup), plus the options given for this section."""
    plan: Any
    accounts: Any
    options: dict = field(default_factory=dict)


def register(name: str, build: Callable[[Context], Any]) -> None:
    _BUILDERS[name] = build


def build_all(plan, accounts, options: dict | None) -> dict:
    for module in BUILTIN:
        importlib.import_module(module)
    out = {}
    for name, build in _BUILDERS.items():
        section = build(Context(plan, accounts, dict((options or {}).get(name) or {})))
        if section is not None:
            out[name] = section
    return out
