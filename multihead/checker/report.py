"""What check_attention returns: one Finding per check, gathered in a Report."""
from __future__ import annotations

import io
import math
from dataclasses import asdict, dataclass, field

from multihead.checker.symptoms import symptom

# status -> passed: a skipped check neither passes nor fails.
_PASSED = {"pass": True, "info": True, "fail": False, "skip": None}

# A failing check on the left makes the checks on the right fail as a consequence (they compare
# the output under a mask, a causal mask or GQA with fn's own unmasked rows, or with the float64
# reference): heads in the wrong place or weights that do not sum to 1 break every comparison.
# The path checks compare with the float64 reference, so a wrong scale or a basic failure shows
# in them too; among the paths, a long-key or mask bug also shows at decode and in other dtypes.
# The relation is acyclic: a root cause is never explained away by its own consequence.
_PATHS = {"gqa_masks", "long_keys", "decode", "padding", "additive_mask", "dtypes"}
# A target that answers differently to the same input, or NaN on plain inputs, fails every check
# that compares outputs: both come first, and explain everything else that compares outputs.
_EVERY = {"reference", "scale", "overflow", "causal_mask", "causal_alignment", "mask_polarity", "fully_masked_rows",
          "head_independence", "head_layout", "gqa_grouping", "batch_independence", "normalization"} | _PATHS
_CONSEQUENCES = {
    "determinism": _EVERY,
    "finite_output": _EVERY,
    "head_layout": {"causal_mask", "mask_polarity", "fully_masked_rows", "normalization", "reference"},
    "head_independence": {"causal_mask", "mask_polarity", "fully_masked_rows", "normalization", "gqa_grouping",
                          "causal_alignment", "reference"} | _PATHS,
    "normalization": {"causal_mask", "causal_alignment", "mask_polarity", "fully_masked_rows", "reference"} | _PATHS,
    "scale": _PATHS,
    "overflow": _PATHS,          # the path patterns reach logits of ~12: exp() overflows fp16 without the max
    "causal_mask": {"causal_alignment", "reference"} | _PATHS,
    "causal_alignment": {"gqa_masks", "decode", "dtypes"},
    "mask_polarity": {"fully_masked_rows", "gqa_masks", "decode", "padding", "additive_mask", "dtypes"},
    "gqa_grouping": _PATHS,
    "batch_independence": _PATHS,
    "gqa_masks": {"decode", "dtypes"},
    "long_keys": {"decode", "padding", "additive_mask", "dtypes"},
    # a mask applied to the wrong sequence shows wherever masks differ per sequence
    "padding": {"fully_masked_rows", "decode", "dtypes"},
    "additive_mask": {"decode"},
    "decode": {"dtypes"},
}


def stage(probe: str) -> str:
    """How a timeout or exit finding names where the check was: "probe long_keys", or the setup
    (the target's first calls, made to learn what it accepts, before any probe)."""
    if probe in ("", "setup"):
        return "setup (the target's first calls, which find out what it accepts, before any probe)"
    return f"probe {probe}"


@dataclass
class Finding:
    """The outcome of one probe.

    status: "pass", "fail", "info" (passes, with something worth knowing) or "skip" (not
    applicable to this target). evidence: one or two sentences with the numbers. metrics: the
    same numbers, machine-readable. symptom / fix: from the catalogue (checker.symptoms).
    """
    check: str
    status: str
    evidence: str
    metrics: dict = field(default_factory=dict)
    title: str = ""
    symptom: str = ""
    fix: str = ""

    def __post_init__(self):
        if self.status not in _PASSED:
            raise ValueError(f"status: expected one of {sorted(_PASSED)}, got {self.status!r}")
        s = symptom(self.check)
        self.title = self.title or s.title
        self.symptom = self.symptom or s.user_sees
        self.fix = self.fix or s.fix

    @property
    def passed(self) -> bool | None:
        return _PASSED[self.status]


def _json_safe(x):
    """inf and NaN (e.g. an error measured on a NaN output) become the strings "inf" / "nan" so
    that the dict serializes to strict JSON."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _relation(failures: list[Finding]) -> dict[str, set[str]]:
    """_CONSEQUENCES, adjusted to what this report's evidence shows. Weights that sum to 1
    without is_causal but not with it (a causal mask that hides the diagonal leaves row 0 with no
    key) point at the causal mask: then normalization is its consequence, not its cause, and
    explains nothing itself (the checks without is_causal are not touched by it)."""
    relation = dict(_CONSEQUENCES)
    by = {f.check: f for f in failures}
    if "causal_mask" in by and by.get("normalization") and by["normalization"].metrics.get("causal_only"):
        relation["normalization"] = set()
        relation["causal_mask"] = relation["causal_mask"] | {"normalization"}
    return relation


@dataclass
class Report:
    target: str
    signature: str
    dtype: str
    device: str
    findings: list[Finding]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    coverage: list[dict] = field(default_factory=list)    # checker.coverage.Coverage.rows()
    refusals: dict[str, str] = field(default_factory=dict)   # call -> what the target raised

    @classmethod
    def from_dict(cls, d: dict) -> "Report":
        """The inverse of to_dict (the CLI's child process sends its report this way)."""
        keys = {"check", "status", "evidence", "metrics", "title", "symptom", "fix"}
        findings = [Finding(**{k: v for k, v in f.items() if k in keys}) for f in d["findings"]]
        return cls(d["target"], d["signature"], d["dtype"], d["device"], findings, d.get("notes", []),
                   d.get("seconds", 0.0), d.get("coverage", []), d.get("refusals", {}))

    @property
    def passed(self) -> bool:
        return all(f.passed is not False for f in self.findings)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.passed is False]

    @property
    def causes(self) -> list[Finding]:
        """The failures to fix first: those not explained as consequences of another failure.
        `reference` (plain accuracy) is a consequence of any other failure."""
        failed = {f.check for f in self.failures}
        relation = _relation(self.failures)
        explained = set()
        for check in failed:
            explained |= relation.get(check, set())
            if check != "reference":
                explained.add("reference")
        return [f for f in self.failures if f.check not in explained]

    def finding(self, check: str) -> Finding:
        for f in self.findings:
            if f.check == check:
                return f
        raise KeyError(check)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["passed"] = self.passed
        d["failed_checks"] = [f.check for f in self.failures]
        d["causes"] = [f.check for f in self.causes]
        for f, fd in zip(self.findings, d["findings"]):
            fd["passed"] = f.passed
        return _json_safe(d)

    def render(self, console=None) -> None:
        """Print the report with rich: a table of checks, then what users see and the fix for
        every failure."""
        from rich.console import Console
        from rich.table import Table

        console = console or Console()
        style = {"pass": "green", "fail": "bold red", "info": "yellow", "skip": "dim"}
        table = Table(title=f"multihead check: {self.target}  ({self.signature}, {self.dtype}, "
                            f"{self.device})", title_justify="left")
        table.add_column("check", no_wrap=True)
        table.add_column("result", no_wrap=True)
        table.add_column("evidence")
        for f in self.findings:
            table.add_row(f.check, f"[{style[f.status]}]{f.status.upper()}[/]", f.evidence)
        console.print(table)
        for note in self.notes:
            console.print(f"[dim]note: {note}[/]")
        self._render_coverage(console)
        causes = self.causes
        for f in causes:
            console.print(f"\n[bold red]FAIL {f.check}[/]: {f.title}")
            console.print(f"  [bold]What users see:[/] {f.symptom}")
            console.print(f"  [bold]Fix:[/] {f.fix}")
        rest = [f.check for f in self.failures if f not in causes]
        if rest:
            console.print(f"\n[red]Also failing, as consequences of the above:[/] {', '.join(rest)} "
                          f"(recheck after the fix)")
        n_fail = len(self.failures)
        verdict = "[green]all checks passed[/]" if not n_fail else f"[bold red]{n_fail} check(s) failed[/]"
        console.print(f"\n{verdict} ({len(self.findings)} checks, {self.seconds:.1f} s)")
        missing = [f"{r['dimension']} {m['value']}" for r in self.coverage for m in r["not_tried"]]
        if missing:
            console.print(f"[yellow]not tried (see the coverage table): {', '.join(missing)}[/]")

    def _render_coverage(self, console) -> None:
        from rich.table import Table

        if not self.coverage:
            return
        table = Table(title="coverage: what the probes tried (calls) and what they could not try",
                      title_justify="left")
        table.add_column("dimension", no_wrap=True)
        table.add_column("tried")
        table.add_column("not tried (why)")
        for row in self.coverage:
            by_why = {}
            for m in row["not_tried"]:
                by_why.setdefault(m["why"], []).append(m["value"])
            missing = "; ".join(f"{', '.join(values)}: {why}" for why, values in by_why.items()) or "-"
            table.add_row(row["dimension"], ", ".join(row["tried"]) or "-", missing)
        console.print(table)
        for call, why in list(self.refusals.items())[:6]:
            console.print(f"[dim]refused: {call} -> {why}[/]")

    def __str__(self) -> str:
        from rich.console import Console

        buf = io.StringIO()
        self.render(Console(file=buf, width=110, no_color=True, highlight=False))
        return buf.getvalue()
