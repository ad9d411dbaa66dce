"""The two pages in a real headless Chromium (Debian's package, driven by Playwright).

What a user does: change model / GPU / context and read the decision and the charts (checked
against `multihead plan --json` run in a separate process, tests/cli_process.py), drop a config.json (good and bad),
answer the quiz right and wrong, switch the language. Skipped, loudly, only where no Chromium or
no Playwright can be had.
"""
from __future__ import annotations

import json
from pathlib import Path

import cli_process
import pytest

from multihead.web.serve import find_chromium

ROOT = Path(__file__).resolve().parents[1]
import playwright.sync_api as _playwright  # noqa: E402  (a [test] dependency: missing = broken setup)

if find_chromium() is None:
    pytest.skip("NO BROWSER TESTS: no Chromium at /usr/bin/chromium (apt-get install chromium; .ci/run does it as "
                "root) and MULTIHEAD_CHROMIUM is unset", allow_module_level=True)

# One worker runs them all (pyproject: --dist loadgroup): one Chromium and one server.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]
SMOL_CONFIG = {"model_type": "llama", "hidden_size": 576, "num_hidden_layers": 30, "num_attention_heads": 9,
               "num_key_value_heads": 3, "intermediate_size": 1536, "vocab_size": 49152,
               "max_position_embeddings": 8192, "tie_word_embeddings": True}


def cli_plan(*args: str, cwd: Path = ROOT) -> dict:
    r = cli_process.run(["plan", *args, "--json"], cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def cli_error(*args: str, cwd: Path = ROOT) -> str:
    r = cli_process.run(["plan", *args, "--json"], cwd)
    assert r.returncode == 2
    return r.stderr.strip().splitlines()[-1].split(": error: ", 1)[1]


@pytest.fixture(scope="module")
def server():
    from multihead.web.serve import Background
    with Background() as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One Chromium profile for the module: its code cache spares each later page load compiling
    plotly.js again (~1 s of CPU a load). Each test still gets its own page and empty storage."""
    from multihead.web.serve import chromium_with_profile
    with _playwright.sync_playwright() as pw:
        context = chromium_with_profile(pw, tmp_path_factory.mktemp("chromium-profile"),
                                        viewport={"width": 1360, "height": 900})
        yield context
        context.close()


@pytest.fixture
def page(browser, server):
    p = browser.new_page()
    cdp = browser.new_cdp_session(p)           # what a test leaves (the language choice) is not the next one's
    cdp.send("Storage.clearDataForOrigin", {"origin": server, "storageTypes": "local_storage"})
    cdp.detach()
    errors = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    yield p
    p.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def ready_after(page, action) -> None:
    """Do action and wait until the planner has drawn the answer to it (plan and curve)."""
    before = page.evaluate("document.body.dataset.ready || '0'")
    action()
    page.wait_for_function(f"(document.body.dataset.ready || '0') !== '{before}'", timeout=60_000)


def drawn(page) -> dict:
    """What the planner shows: the decision, the memory bar's segments (bytes) and the curve's points."""
    return page.evaluate("""() => {
      const rows = [...document.querySelectorAll('#breakdown .membar-row')];
      const seg = (row, key) => Number(row.querySelector(`.seg[data-key="${key}"]`).dataset.bytes);
      const curve = document.getElementById('curve').data, mine = curve.find(t => t.name.endsWith('◀'));
      return {decision: document.getElementById('decision-text').dataset.decision,
              headline: document.getElementById('decision-text').textContent,
              rows: rows.map(r => r.dataset.row), weights: seg(rows[0], 'weights'), kv: seg(rows[0], 'kv'),
              chunked_kv: rows.length > 1 ? seg(rows[1], 'kv') : null, tokens: mine.x, total: mine.y};
    }""")


def assert_shows(page, plan: dict) -> None:
    d = drawn(page)
    assert d["decision"] == plan["decision"]
    assert d["rows"][0] == "one pass"
    assert d["weights"] == plan["weights_bytes"] and d["kv"] == plan["kv_cache_bytes"]
    if plan["decision"] == "chunked":
        assert d["rows"][1] == f"{plan['chunked']['chunks']} chunks"
        assert d["chunked_kv"] == plan["chunked"]["kv_cache_bytes"]
    i = d["tokens"].index(plan["tokens"])
    assert d["total"][i] == pytest.approx(plan["total_memory_bytes"] / 1e9, rel=1e-12)


def test_planner_follows_model_gpu_and_context(server, page):
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready]")
    assert_shows(page, cli_plan("example-13b-gqa8", "--gpu", "A100-80GB", "--tokens", "128000"))
    assert page.evaluate("window.__firstChartMs") > 0

    ready_after(page, lambda: page.select_option("#model", "Llama-3.1-8B"))
    ready_after(page, lambda: page.select_option("#gpu", "RTX-4090"))
    ready_after(page, lambda: page.fill("#tokens", "131072"))
    plan = cli_plan("Llama-3.1-8B", "--gpu", "RTX-4090", "--tokens", "131072")
    assert plan["decision"] != "single_pass"            # 16 GB of weights on a 24 GB card: no 128k pass
    assert_shows(page, plan)

    ready_after(page, lambda: page.select_option("#gpu", "H200-SXM"))
    plan = cli_plan("Llama-3.1-8B", "--gpu", "H200-SXM", "--tokens", "131072")
    assert plan["decision"] == "single_pass"
    assert_shows(page, plan)
    assert "ONE FULL PASS" in drawn(page)["headline"]


def test_bad_number_shows_the_cli_message_next_to_the_field(server, page):
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready]")
    ready_after(page, lambda: page.fill("#tokens", "0"))
    shown = page.text_content('.err[data-field="tokens"]')
    # the page and the CLI check with one rule (multihead.values); the CLI says "argument --tokens"
    cli_words = cli_error("example-13b-gqa8", "--gpu", "A100-80GB", "--tokens", "0")
    assert shown == "tokens: " + cli_words.removeprefix("argument --tokens: ").removesuffix(" (see multihead plan --help)")


def _drop(page, text: str, name: str = "config.json") -> None:
    """A real drop event carrying a file, as a desktop drag-and-drop delivers it."""
    dt = page.evaluate_handle("""([text, name]) => { const dt = new DataTransfer();
        dt.items.add(new File([text], name, {type: 'application/json'})); return dt; }""", [text, name])
    page.dispatch_event("#drop", "drop", {"dataTransfer": dt})


def test_drop_a_config_json(server, page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready]")
    ready_after(page, lambda: page.fill("#tokens", "16384"))
    ready_after(page, lambda: _drop(page, json.dumps(SMOL_CONFIG)))
    (tmp_path / "uploaded").mkdir()
    (tmp_path / "uploaded" / "config.json").write_text(json.dumps(SMOL_CONFIG))
    plan = cli_plan("uploaded/config.json", "--gpu", "A100-80GB", "--tokens", "16384", cwd=tmp_path)
    assert_shows(page, plan)
    assert page.is_visible("#dropped") and "config.json" in page.text_content("#dropped-name")

    bad = '{"model_type": "llama", "hidden_size": 576'
    ready_after(page, lambda: _drop(page, bad, "broken.json"))
    (tmp_path / "uploaded" / "config.json").write_text(bad)
    expected = cli_error("uploaded/config.json", "--gpu", "A100-80GB", "--tokens", "16384", cwd=tmp_path)
    assert page.text_content('.err[data-field="model"]') == expected
    assert "not valid JSON" in expected


def test_quiz_right_and_wrong(server, page):
    page.goto(server + "/lesson")
    page.wait_for_selector("body[data-ready]")
    page.fill("#a-q1", "0.867")
    page.click("#check-q1")
    page.wait_for_selector("#q-q1 .verdict.right")
    assert "0.866813" in page.text_content("#q-q1 .result")          # the expected value, computed
    page.fill("#a-q2", "88.7")
    page.click("#check-q2")
    page.wait_for_selector("#q-q2 .verdict.wrong")
    assert "65504" in page.text_content("#q-q2 .explain")
    assert page.text_content("#quiz-score") == "1 / 3"
    page.fill("#a-q3", "not a number")
    page.click("#check-q3")
    page.wait_for_selector("#q-q3 .err")
    assert "answer: expected a number" in page.text_content("#q-q3 .err")
    page.click("#check-ex1")                                             # an open question: our answer
    page.wait_for_selector("#q-ex1 .explain")


def test_switch_language(server, page):
    page.goto(server + "/lesson?lang=en")
    page.wait_for_selector("body[data-ready]")
    assert page.text_content("h1").startswith("Softmax")
    page.click("#lang")
    page.wait_for_function("document.documentElement.lang === 'zh-CN'")
    assert "练习场" in page.text_content("h1")
    assert "温度" in page.text_content("#q-q1 .qtext")
    page.goto(server + "/")                                              # the choice is remembered
    page.wait_for_selector("body[data-ready]")
    assert page.text_content('[data-i18n="nav.planner"]') == "部署规划"
    page.click("#lang")
    assert page.text_content('[data-i18n="nav.planner"]') == "Planner"


def test_softmax_playground_is_live(server, page):
    page.goto(server + "/lesson")
    page.wait_for_selector("body[data-ready]")
    assert page.text_content("#softmax-sum") == "1"
    page.fill("#temp", "0.5")
    page.dispatch_event("#temp", "input")
    page.wait_for_function("document.getElementById('temp-value').textContent === '0.5' && "
                           "document.getElementById('softmax-chart').data[0].y[0] > 0.86")
    y = page.evaluate("document.getElementById('softmax-chart').data[0].y")
    assert [round(v, 3) for v in y] == [0.867, 0.117, 0.016]
    page.check("#ov-submax")
    page.wait_for_function("!document.querySelector('#overflow-nums .bad-num')")
    page.uncheck("#ov-submax")
    page.wait_for_selector("#overflow-nums .bad-num")


def _with_serving(plan: dict) -> dict:
    """The plan JSON with a `serving` block: the plan's own when it has one, else `multihead serving
    --json` for a catalog config grafted on (the page must show whichever the JSON carries)."""
    if "serving" in plan:
        return plan
    r = cli_process.run(["serving", "Qwen/Qwen3-8B", "--gpu", "H100-SXM", "--emit", "vllm", "--json"])
    assert r.returncode == 0, r.stderr
    return {**plan, "serving": json.loads(r.stdout)["serving"]}


def test_serving_block_and_engine_command_are_shown(server, page):
    plan = _with_serving(cli_plan("example-13b-gqa8", "--gpu", "A100-80GB", "--tokens", "128000"))
    page.route("**/api/plan", lambda route: route.fulfill(status=200, content_type="application/json",
                                                          body=json.dumps(plan)))
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready]")
    serving = plan["serving"]
    assert page.is_visible("#serving")
    for key, value in serving.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert page.locator(f'#serving td[data-key="{key}"]').count() == 1, key
    command = serving.get("command")
    text = command if isinstance(command, str) else (command or {}).get("text")
    if text:
        assert page.is_visible("#command") and text in page.text_content("#command pre")
