"""`multihead demo`: runs, prints valid JSON with computed numbers, rejects bad --tokens."""
from __future__ import annotations

import json

from multihead.cli import main


def test_demo_json(capsys):
    assert main(["demo", "--json", "--tokens", "1024"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [round(x, 3) for x in out["softmax"]["softmax(2,1,0)"]] == [0.665, 0.245, 0.090]
    assert out["softmax"]["naive exp/sum of (1000,999,998)"] == [None, None, None]
    for row in out["attention"]["backends"]:
        assert row["max_abs_err_vs_fp64"] < 1e-5, row
    m = out["memory"]
    assert m["score_matrix_bytes"] == 1024 * 1024 * 4
    assert m["output_bytes"] <= m["tiled_peak_extra_bytes"] < m["score_matrix_bytes"]   # the T=8192 test shows the gap


def test_demo_bad_tokens(capsys):
    assert main(["demo", "--tokens", "0"]) == 2
    assert "argument --tokens: expected an integer in [1, 65536], got '0'" in capsys.readouterr().err


def test_demo_tables(capsys):
    assert main(["demo", "--tokens", "512"]) == 0
    text = capsys.readouterr().out
    assert "0.665, 0.245, 0.090" in text and "tiled" in text and "score matrix" in text
