"""Promises of docs/layout.md that a change could silently break."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path


def test_every_command_parser_is_built_without_torch():
    """`multihead CMD --help` or a bad argument must not load torch (seconds per process): each
    command's parser reads only torch-free modules (hf/shipped.py for the shipped models' facts),
    and `multihead check` refuses a malformed target spec before importing anything."""
    code = ("import sys; from multihead.cli import COMMANDS, build_parser, main; p = build_parser();"
            " rc = main(['check', 'no_colon']);"
            " print(len(COMMANDS), rc, sorted(m for m in ('torch', 'transformers', 'multihead.kernels') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = r.stdout.split(" ", 2)
    assert int(out[0]) >= 12 and out[1] == "2" and out[2].strip() == "[]"
    assert "argument target: expected package.module:name" in r.stderr


def test_hf_attention_names_load_on_first_use():
    """`import multihead.hf` is light; its attention names still work (PEP 562 module __getattr__).

    The lightness needs a fresh interpreter; the names are resolved here, through the module's
    __getattr__ itself (a fresh interpreter loading torch for them cost ~1.5 s of CPU)."""
    code = "import sys, multihead.hf; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    import pytest

    import multihead.hf as hf
    from multihead.hf import attention
    assert hf.__getattr__("NAME") == attention.NAME == "multihead"
    for name in ("register", "registered_names", "multihead_attention_forward"):
        assert hf.__getattr__(name) is getattr(attention, name) and callable(getattr(hf, name))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        hf.__getattr__("nope")


def test_library_modules_never_import_the_cli():
    """docs/layout.md's arrows point down: cli/ imports the library, never the other way; web/ is the
    other front end and calls the planner as a library too (issue 27), never the CLI; __main__ is `python -m`."""
    import ast
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[1] / "multihead"
    offenders = []
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg).as_posix()
        if rel.startswith("cli/") or rel == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{rel}:{node.lineno} {n}" for n in names if n == "multihead.cli" or n.startswith("multihead.cli.")]
    assert offenders == []


# -- the rooms of cost/ and the nevers (issue 27; docs/layout.md "cost/ by room") ----------------------
PKG = Path(__file__).resolve().parents[1] / "multihead"
ROOMS = ("spec", "counts", "time", "serving")          # arrows point down this list only
NEVER_IN_COST = ("torch", "numpy", "scipy", "multihead.functional", "multihead.kernels", "multihead.planner",
                 "multihead.engines", "multihead.fits", "multihead.cli", "multihead.web")


def _imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, imported module, at module top) of every import in a file, lazy ones included."""
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names] if node.module in ("multihead", "multihead.cost") \
                else [node.module]
            out += [(node.lineno, n, id(node) in top) for n in names]
    return out


def _room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["multihead", "cost"] and parts[2] in ROOMS else None


def test_cost_is_in_rooms_and_its_arrows_point_down():
    """Every module of cost/ sits in a room; a room imports only itself and the rooms below it."""
    loose = sorted(p.name for p in (PKG / "cost").glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"cost/ modules outside a room: {loose}"
    up = []
    for room in ROOMS:
        for path in (PKG / "cost" / room).glob("*.py"):
            for line, name, _ in _imports(path):
                other = _room_of(name)
                if other is not None and ROOMS.index(other) > ROOMS.index(room):
                    up.append(f"cost/{room}/{path.name}:{line} -> {name}")
    assert up == []


def test_cost_never_imports_torch_or_anything_above_it():
    """cost/ is torch-free and imports nothing of ours above it, not even lazily: no functional,
    kernels, planner, engines, fits (the offline fitting), cli or web."""
    bad = [f"{path.relative_to(PKG)}:{line} {name}" for path in (PKG / "cost").rglob("*.py")
           for line, name, _ in _imports(path) if any(name == n or name.startswith(n + ".") for n in NEVER_IN_COST)]
    assert bad == []


def test_nothing_at_runtime_imports_fits():
    """fits/ (fitting and validation) is offline: no library module imports it; the CLI's offline
    commands (gpu-time --fit, serving --validate) load it inside their functions only."""
    bad = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith("fits/"):
            continue
        for line, name, at_top in _imports(path):
            if name == "multihead.fits" or name.startswith("multihead.fits."):
                if not rel.startswith("cli/") or at_top:
                    bad.append(f"{rel}:{line} {name}")
    assert bad == []


def test_layout_doc_lists_every_room_and_module():
    """docs/layout.md's rooms table is checked against the tree: each room's row names exactly the
    modules in that folder (a moved or new module fails here until the doc says where it went)."""
    import re
    doc = (PKG.parent / "docs" / "layout.md").read_text()
    for room in (*ROOMS, "fits"):
        folder = PKG / "cost" / room if room != "fits" else PKG / "fits"
        row = re.search(rf"^\| `{'cost/' if room != 'fits' else ''}{room}/` \|[^|]*\| ([^|]*) \|", doc, re.M)
        assert row, f"docs/layout.md has no row for {room}/"
        listed = sorted(re.findall(r"`(\w+)`", row.group(1)))
        actual = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
        assert listed == actual, room


# -- one class per concept, one door per catalog (issue 27's last duplicated facts) -----------------
GPU_FIELDS = {"bandwidth", "bandwidth_bytes_per_s", "matmul_flops", "alu_flops", "link_bandwidth", "mamf_share",
              "memory_bytes", "reported_memory_bytes"}
GPU_FILES = {"gpus.json", "gpu_memory.json", "interconnect.json", "gpu_matmul.json"}


def _classes():
    """(module path under multihead/, class name, its annotated field names) of every class."""
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
                yield rel, node.name, fields


def test_one_gpu_record_and_one_setup():
    """One record per device (cost/time/device.DeviceSpec: the planner, the GPU-time model, the
    serving account and the fits read the same one) and one Setup class (cost/time/timing.Setup,
    the deployment the time model times; the planner's Accounts holds one)."""
    classes = list(_classes())
    assert [f"{rel}:{name}" for rel, name, fields in classes if fields & GPU_FIELDS] == ["cost/time/device.py:DeviceSpec"]
    assert [rel for rel, name, _ in classes if name == "Setup"] == ["cost/time/timing.py"]


def test_the_gpu_catalog_files_have_one_door():
    """The GPU catalog files are opened by cost/time/device.py only (catalog_gpu builds the record
    from them; gpu_catalog lists the names): no second reader of the same rows."""
    readers = sorted({path.relative_to(PKG).as_posix() for path in PKG.rglob("*.py")
                      for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, ast.Constant) and node.value in GPU_FILES})
    assert readers == ["cost/time/device.py"]


MODEL_FILES = {"models.json", "index.json"}


def test_the_model_catalogs_have_one_door():
    """The model catalogs (multihead/catalog/models.json, cost/catalog/configs/index.json) are opened
    by cost/spec/lookup.py only: find_model is the one door from a name to its spec and raw config
    (the planner, `serving`, `gpu-time`, the page and the search all call it)."""
    readers = sorted({path.relative_to(PKG).as_posix() for path in PKG.rglob("*.py")
                      for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, ast.Constant) and node.value in MODEL_FILES})
    assert readers == ["cost/spec/lookup.py"]


def test_no_two_catalog_doors_share_a_name():
    """One door, one name: a catalog or model door of cost/, planner/ or web/ (a top-level function
    named *catalog* or *_model) is defined once: two `gpu_catalog()`s returning different tables and
    two `resolve_model`s doing different things were issue 27's findings."""
    import re
    seen: dict[str, list[str]] = {}
    for folder in ("cost", "planner", "web"):
        for path in (PKG / folder).rglob("*.py"):
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.FunctionDef) and re.search(r"catalog|_model$", node.name):
                    seen.setdefault(node.name, []).append(path.relative_to(PKG).as_posix())
    twice = {name: where for name, where in seen.items() if len(where) > 1}
    assert twice == {}
