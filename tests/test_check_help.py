"""`multihead check --help` names the checks from the checker's own catalogue and says how many a function
and a module target run (audit docs finding 11: it listed only the basic probes, and no count)."""
from __future__ import annotations

from multihead.cli import check as cli_check


def test_the_help_names_every_check_a_function_run_reports_in_order():
    from multihead.checker import check, module_probes
    runs = [name for name, _ in check._probes("sdpa")] + ["input_mutation"]      # what a function's report lists
    from multihead.checker.symptoms import CATALOGUE
    listed = [n for n in CATALOGUE if n not in cli_check.OUTCOMES and n not in cli_check.MODULE_ONLY]
    assert listed == runs
    text = " ".join(cli_check.checks_text().split())
    assert ", ".join(n for n in CATALOGUE if n not in cli_check.OUTCOMES) in text
    assert f"runs {len(runs)}, all but head_layout" in text
    module = len(module_probes.MODULE_PROBES) + len(module_probes.not_applicable()) + 1   # + input_mutation
    assert module == cli_check.MODULE_CHECKS and f"a module runs {module}" in text
    assert set(cli_check.MODULE_ONLY) <= {p.__name__.removeprefix("probe_") for p in module_probes.MODULE_PROBES}
    assert set(cli_check.MODULE_ONLY).isdisjoint(runs)


def test_check_help_prints_the_list(capsys):
    from multihead.cli import main
    assert main(["check", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "input_mutation" in out and "gqa_masks" in out and "A function (sdpa, hf) runs 20" in out
