"""The search page ("find a configuration") in headless Chromium: its numbers are the search JSON's
(`multihead plan --search --json` for the same request), its plot draws the Pareto front, bad input
shows beside its field. Also the /api/search endpoint itself (same answer as the library)."""
from __future__ import annotations

import json

import pytest

from multihead.web.serve import find_chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]
QUESTION = {"model": "Llama-3.1-70B", "input_len": "8192", "output_len": "1024", "concurrency": "16",
            "slo": "tpot=50ms", "gpu": "H100-SXM", "gpus_max": "8", "objective": "gpus"}


def library_answer() -> dict:
    from multihead.planner.request import PlanRequest
    from multihead.planner.search import search_report
    return search_report(PlanRequest.from_json({**QUESTION, "search": True}))["search"]


def test_api_search_is_the_librarys_answer():
    from fastapi.testclient import TestClient

    from multihead.web.app import create_app
    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as client:
        got = client.post("/api/search", json={"options": QUESTION})
        assert got.status_code == 200, got.text
        mine, lib = got.json()["search"], library_answer()
        for k in ("candidates", "feasible", "meeting_slo"):
            assert mine[k] == lib[k]
        assert [r["command"]["text"] for r in mine["results"]] == [r["command"]["text"] for r in lib["results"]]
        bad = client.post("/api/search", json={"options": {**QUESTION, "slo": "tpot=5parsecs"}})
        assert bad.status_code == 400 and bad.json()["field"] == "slo"
        bad = client.post("/api/search", json={"options": {**QUESTION, "model": "/etc/passwd"}})
        assert bad.status_code == 400 and bad.json()["field"] == "model"
        none = client.post("/api/search", json={"options": {k: v for k, v in QUESTION.items() if k != "concurrency"}})
        assert none.status_code == 400 and none.json()["field"] == "concurrency"
        cat = client.get("/api/search/catalog").json()
        assert "H100-SXM" in cat["gpus"] and cat["default_model"] in cat["models"]


@pytest.mark.skipif(find_chromium() is None, reason="NO BROWSER TESTS: no Chromium at /usr/bin/chromium")
def test_the_search_page_shows_the_search_json(tmp_path):
    import playwright.sync_api as pw_api

    from multihead.web.serve import Background, chromium_with_profile
    lib = library_answer()
    with Background() as url, pw_api.sync_playwright() as pw:
        context = chromium_with_profile(pw, tmp_path / "profile", viewport={"width": 1360, "height": 900})
        page = context.new_page()
        page.goto(url + "/search")
        page.select_option("#s-model", "Llama-3.1-70B")
        for box in page.query_selector_all("#s-gpus input"):
            if box.is_checked() != (box.get_attribute("value") == "H100-SXM"):
                box.click()
        page.fill("#s-load", "16")
        page.fill("#s-gpus_max", "8")
        page.wait_for_function("document.body.dataset.searchDone === '1'", timeout=60000)    # the first answer
        page.click("#s-go")
        page.wait_for_function("document.body.dataset.searchDone === '2'", timeout=60000)
        page.wait_for_selector("#s-plot .main-svg", timeout=30000)
        first = page.query_selector_all("#s-ranked tr")[1].inner_text().split("\t")
        best = lib["results"][0]
        assert first[1] == best["gpu"] and first[2] == str(best["gpus"])
        assert first[3] == str(best["tensor_parallel_size"]) and first[5] == str(best["data_parallel_size"])
        assert page.text_content("#s-command") == best["command"]["text"]
        times = page.text_content("#s-best-times")                # issue 28: each time with its 80% interval
        assert times.count("(80%: ") == 3 and "tokens/s" in times
        assert page.locator("#s-cautions p.caution").all_text_contents() == \
            (best["at"].get("interval") or {}).get("cautions", [])
        traces = page.evaluate("document.getElementById('s-plot').data.map(t => t.x.length)")
        assert traces[0] == len(lib["pareto"])
        page.screenshot(path=str(tmp_path / "search.png"), full_page=True)
        # bad input: the server's message beside its field
        page.fill("#s-gpus_max", "0")
        page.click("#s-go")
        page.wait_for_function("document.body.dataset.searchDone === '3'", timeout=60000)
        assert "gpus_max" in page.text_content(".err[data-field=gpus_max]")
        # Chinese: the page's words, and the server's error line through the message catalogue (session 17's
        # audit: the search page showed it in English)
        page.click("#lang")
        assert "配置" in page.text_content("h1")
        page.click("#s-go")
        page.wait_for_function("document.body.dataset.searchDone === '4'", timeout=60000)
        said = page.text_content(".err[data-field=gpus_max]")
        assert "gpus_max" in said and any("\u4e00" <= ch <= "\u9fff" for ch in said), said
        context.close()


def test_a_wide_interval_is_said_under_the_best_answer_in_both_languages(tmp_path):
    """Issue 28: MoE prefill on SGLang has an interval over 10x wide (6 documents); the best answer's times carry the
    search JSON's cautions, and in Chinese the message catalogue's translation (/api/messages)."""
    import json

    import playwright.sync_api as pw_api

    from multihead.planner.request import PlanRequest
    from multihead.planner.search import search_report
    from multihead.web.serve import Background, chromium_with_profile
    res = search_report(PlanRequest.from_json({
        "model": "Qwen/Qwen3-235B-A22B-FP8", "input_len": "2048", "output_len": "512", "concurrency": "16",
        "gpu": "H200-SXM", "gpus_max": "8", "engine": "sglang", "search": True}))["search"]
    cautions = res["results"][0]["at"]["interval"]["cautions"]
    assert res["results"][0]["meets_slo"] and len(cautions) == 1 and "194x" in cautions[0]
    with Background() as url, pw_api.sync_playwright() as pw:
        context = chromium_with_profile(pw, tmp_path / "profile", viewport={"width": 1360, "height": 900})
        page = context.new_page()
        page.route("**/api/search", lambda route: route.fulfill(status=200, content_type="application/json",
                                                                body=json.dumps({"search": res})))
        page.goto(url + "/search")
        page.wait_for_function("document.body.dataset.searchDone === '1'", timeout=60000)
        assert page.locator("#s-cautions p.caution").all_text_contents() == cautions
        page.click("#lang")
        page.wait_for_function("(document.querySelector('#s-cautions p.caution') || {}).textContent?.includes('倍')")
        zh = page.locator("#s-cautions p.caution").all_text_contents()
        assert len(zh) == 1 and "194 倍" in zh[0] and "moe/prefill/sglang" in zh[0] and "rough" not in zh[0]
        context.close()
