"""The one reader of config.json files and texts (plan, serving, the web page's uploads).

Every config the planner sees comes through here, from a path or as content, so the same bounds
hold everywhere:

- a path must name a regular file (or a folder holding config.json), checked with ``os.stat``
  before it is opened; a FIFO, a device such as /dev/zero or a socket is refused by name without
  being opened. The file is opened non-blocking and checked again on the open descriptor (a file
  swapped for a FIFO in between is refused too), then read with a size cap;
- at most ``MAX_CONFIG_BYTES`` of text, nested at most ``MAX_CONFIG_DEPTH`` deep (checked on the
  text, before parsing: json's recursive parser would otherwise raise RecursionError), integers of
  at most ``MAX_INT_DIGITS`` digits (a longer one is named by its field), no NaN / Infinity
  (not JSON);
- the top level is an object, and ``text_config`` / ``language_config`` / ``vision_config`` are
  objects where present (``check_structure``);
- every field that sizes something within its bounds (``hf_config.check_config``, the check
  ``read_config`` starts with), so a bad field is named with its file before any per-layer work.

Errors are ValueErrors that name the file (and the field).
"""
from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from pathlib import Path

MAX_CONFIG_BYTES = 4 << 20     # 4 MiB: published config.json files are a few KB (well under 1 MB)
MAX_CONFIG_DEPTH = 64          # HF configs nest 2-4 deep (text_config.rope_scaling, quantization groups)
MAX_INT_DIGITS = 30            # no count in a config needs more (2**64 has 20 digits)
NESTED_OBJECTS = ("text_config", "language_config", "vision_config")

_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)     # JSON strings (brackets in them do not nest)
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


class _HugeInt:
    """An integer literal too long to convert (named by its field after parsing)."""
    def __init__(self, digits: int):
        self.digits = digits


def _parse_int(text: str):
    digits = len(text.lstrip("-"))
    return _HugeInt(digits) if digits > MAX_INT_DIGITS else int(text)


def _no_constant(name: str):
    raise ValueError(f"holds {name}, which is not JSON (a number must be finite)")


def nesting_depth(text: str) -> int:
    """How deep the arrays/objects of a JSON text nest, from the text itself (no recursion)."""
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def _find_huge(value, where: str = "") -> tuple[str, int] | None:
    """(field path, digits) of the first over-long integer in a parsed config, or None."""
    stack = [(value, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _HugeInt):
            return path or "(top level)", node.digits
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))
    return None


def parse_json_text(text, label: str, *, what: str = "model", max_bytes: int = MAX_CONFIG_BYTES):
    """A JSON text (str or bytes) -> its value, bounded in size, depth and digits, NaN refused.
    ``label`` names the file in errors; ``what`` is the argument it came from."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > max_bytes:
            raise ValueError(f"{what}: {label} is {len(text):,} bytes, more than the {max_bytes:,} it may have")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{what}: {label} is not text (a binary file?); expected a JSON file") from None
    if not isinstance(text, str):
        raise ValueError(f"{what}: {label}: expected the text of a JSON file, got {type(text).__name__}")
    if len(text) > max_bytes:
        raise ValueError(f"{what}: {label} is {len(text):,} characters, more than the {max_bytes:,} it may have")
    depth = nesting_depth(text)
    if depth > MAX_CONFIG_DEPTH:
        raise ValueError(f"{what}: {label} nests {depth:,} levels deep, more than the {MAX_CONFIG_DEPTH} a config "
                         f"may (published configs nest 2-4)")
    try:
        value = json.loads(text, parse_int=_parse_int, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what}: {label} is not valid JSON ({err})") from None
    except ValueError as err:           # _no_constant
        raise ValueError(f"{what}: {label} {err}") from None
    huge = _find_huge(value)
    if huge is not None:
        raise ValueError(f"{what}: {label}: field {huge[0]!r} is an integer of {huge[1]:,} digits "
                         f"(at most {MAX_INT_DIGITS})")
    return value


def parse_config_text(text, label: str = "the uploaded config.json", *, what: str = "model",
                      max_bytes: int = MAX_CONFIG_BYTES) -> dict:
    """A config.json's content (str or bytes) -> its JSON object, bounded in size, depth and digits,
    its structure and sizing fields checked (hf_config.check_config)."""
    config = parse_json_text(text, label, what=what, max_bytes=max_bytes)
    from multihead.cost.spec.hf_config import check_config       # the fields' bounds are hf_config's
    check_config(config, label)
    return config


def check_structure(config, label: str = "config.json") -> None:
    """The top level is an object; text_config / language_config / vision_config are objects (or null)."""
    if not isinstance(config, dict):
        raise ValueError(f"{label}: expected a JSON object with HF config fields, got {_kind(config)}")
    for key in NESTED_OBJECTS:
        if config.get(key) is not None and not isinstance(config[key], dict):
            raise ValueError(f"{label}: {key}: expected an object (the {key.split('_')[0]} model's fields), "
                             f"got {_kind(config[key])}")


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"{what}: config file {str(path)!r} does not exist") from None
    except OSError as err:
        raise ValueError(f"{what}: cannot read {path} ({err.strerror})") from None


def read_json_file(path: str | os.PathLike, *, what: str = "model", max_bytes: int = MAX_CONFIG_BYTES,
                   folder_file: str | None = "config.json"):
    """(parsed JSON, the file read) from a path (a folder: its ``folder_file``). A path that is missing,
    not a regular file, too large, binary or too deep is refused by name; nothing is opened that
    could block."""
    path = Path(path)
    st = _stat(path, what)
    if stat.S_ISDIR(st.st_mode) and folder_file:
        path = path / folder_file
        st = _stat(path, what)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what}: {path} is not a regular file ({_file_kind(st.st_mode)}); expected a JSON file")
    if st.st_size > max_bytes:
        raise ValueError(f"{what}: {path} is {st.st_size:,} bytes, more than the {max_bytes:,} it may have")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise ValueError(f"{what}: cannot read {path} ({err.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode                  # the file opened, not the name stat'ed
        if not stat.S_ISREG(mode):
            raise ValueError(f"{what}: {path} is not a regular file ({_file_kind(mode)}); expected a JSON file")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as err:
        raise ValueError(f"{what}: cannot read {path} ({err.strerror})") from None
    finally:
        os.close(fd)
    return parse_json_text(b"".join(chunks), str(path), what=what, max_bytes=max_bytes), path


def read_config_file(path: str | os.PathLike, *, what: str = "model",
                     max_bytes: int = MAX_CONFIG_BYTES) -> tuple[dict, Path]:
    """(config dict, the file read) from a config.json path or a folder holding one: read_json_file,
    then the structure and sizing fields checked (hf_config.check_config)."""
    config, path = read_json_file(path, what=what, max_bytes=max_bytes)
    from multihead.cost.spec.hf_config import check_config
    check_config(config, str(path))
    return config, path
