"""The tree itself: no merge-conflict markers left in any tracked text file."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)


def test_no_conflict_markers_in_tracked_files():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for name in files:
        path = ROOT / name
        if path.suffix not in (".py", ".md", ".js", ".html", ".css", ".json", ".txt", ".toml", ".c", ".h", "") \
                or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in MARKER.finditer(text):
            bad.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}")
    assert not bad, f"merge-conflict markers: {bad[:10]}"
