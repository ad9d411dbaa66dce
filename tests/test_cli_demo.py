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


def test_ratio_below_one_is_printed_not_rounded_to_zero(capsys):
    """At T=256 tiled's block buffers outweigh the 256 KiB score matrix: the ratio is ~0.17, once printed '0x'."""
    from multihead.cli.demo import ratio_text
    assert main(["demo", "--json", "--tokens", "256"]) == 0
    m = json.loads(capsys.readouterr().out)["memory"]
    r = m["score_matrix_bytes"] / m["tiled_peak_extra_bytes"]
    assert r < 1                                              # the case this test is about
    text = ratio_text(m["score_matrix_bytes"], m["tiled_peak_extra_bytes"])
    assert text.startswith(f"{r:.2g}x") and f"{1 / r:.1f}x more" in text and not text.startswith("0x"), text
    assert ratio_text(268435456, 3908608) == "69x" and ratio_text(4 << 20, 2 << 20) == "2.0x"
    assert main(["demo", "--tokens", "256"]) == 0
    assert f"{r:.2g}x" in capsys.readouterr().out
