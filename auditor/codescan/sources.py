"""Reading what the code scan analyses: ``.py`` scripts and ``.ipynb`` notebooks (code cells
concatenated, IPython magics blanked, every line mapped back to its cell)."""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from auditor.errors import InputError


# -- sources ----------------------------------------------------------------------------------
@dataclass
class Source:
    path: Path
    text: str
    cells: list[tuple[int, int] | None]   # per line of text: (cell number, line in cell)
    notes: list[str] = field(default_factory=list)

    @property
    def is_notebook(self) -> bool:
        return self.path.suffix.lower() == ".ipynb"

    def where(self, line: int) -> dict[str, Any]:
        if not self.is_notebook:
            return {"line": line}
        cell, cl = self.cells[line - 1] or (0, line)
        return {"cell": cell, "line": cl}

    def snippet(self, line: int) -> str:
        lines = self.text.splitlines()
        s = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return s if len(s) <= 160 else s[:159] + "…"


_CELL_MAGIC_PY = {"time", "timeit", "capture", "prun", "debug"}
_SHELL_ASSIGN = re.compile(r"^(\s*[\w\s,]+=)\s*[!%].*$")


def _clean_cell(src: str) -> list[str]:
    lines = src.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split()[0] if lines[0].strip() != "%%" else ""
        if magic not in _CELL_MAGIC_PY:
            return [""] * len(lines)
        lines = ["", *lines[1:]]
    out = []
    for line in lines:
        s = line.lstrip()
        indent = line[: len(line) - len(s)]
        if s.startswith(("%", "!")) or (s.endswith("?") and not s.startswith("#")):
            out.append(indent + "pass" if indent else "")
        elif _SHELL_ASSIGN.match(line):
            out.append(_SHELL_ASSIGN.sub(r"\1 None", line))
        else:
            out.append(line)
    return out


def load_source(path: Path) -> Source:
    """Read a script or notebook into one Python text with a line -> cell map."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read: {getattr(err, 'strerror', None) or err}") \
            from None
    if path.suffix.lower() != ".ipynb":
        return Source(path, raw, [None] * (raw.count("\n") + 1))
    cells = _notebook_cells(path, raw)
    text: list[str] = []
    where: list[tuple[int, int] | None] = []
    notes = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", cell.get("input", ""))
        if isinstance(src, list) and all(isinstance(s, str) for s in src):
            src = "".join(src)
        elif not isinstance(src, str):
            raise InputError(f"{path}: not a Jupyter notebook: the source of cell {number} is "
                             f"{_json_type(src)}; expected a string or a list of strings")
        lines = _clean_cell(src)
        try:
            ast.parse("\n".join(lines))
        except SyntaxError as err:
            notes.append(f"cell {number} skipped: {err.msg} at line {err.lineno}")
            lines = [""] * len(lines)
        except (RecursionError, MemoryError, ValueError) as err:  # nested too deeply, NUL
            why = str(err)[:80] if isinstance(err, ValueError) else "nested too deeply to parse"
            notes.append(f"cell {number} skipped: {why}")
            lines = [""] * len(lines)
        for i, line in enumerate(lines, 1):
            text.append(line)
            where.append((number, i))
    return Source(path, "\n".join(text), where, notes)


def _json_type(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def _notebook_cells(path: Path, raw: str) -> list[Any]:
    """The cells of a notebook (nbformat 4 ``cells``, or nbformat 3 ``worksheets``); anything
    else is one InputError: ``<path>: not a Jupyter notebook: <what is wrong>``."""
    def bad(why: str) -> InputError:
        return InputError(f"{path}: not a Jupyter notebook: {why}")

    try:
        nb = json.loads(raw)
    except json.JSONDecodeError as err:
        raise bad(f"invalid JSON ({err})") from None
    except RecursionError:
        raise bad("its JSON is nested too deeply to read") from None
    if not isinstance(nb, dict):
        raise bad(f"the file holds {_json_type(nb)}; expected a JSON object with a 'cells' list")
    if "cells" in nb:
        if not isinstance(nb["cells"], list):
            raise bad(f"'cells' is {_json_type(nb['cells'])}; expected a list of cells")
        return nb["cells"]
    sheets = nb.get("worksheets")  # nbformat 3
    if not isinstance(sheets, list) or not all(
            isinstance(ws, dict) and isinstance(ws.get("cells", []), list) for ws in sheets):
        raise bad("no 'cells' list (nbformat 4) and no 'worksheets' list of objects with "
                  "'cells' lists (nbformat 3)")
    return [c for ws in sheets for c in ws.get("cells", [])]


def expand_paths(paths: Iterable[Path | str]) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.suffix.lower() in (".py", ".ipynb")
                          and f.is_file()  # not a FIFO (would block), socket or device
                          and not any(part.startswith(".") or part in ("__pycache__",
                                                                      "site-packages")
                                      for part in f.relative_to(p).parts))
        elif not p.exists():
            raise InputError(f"{p}: file not found")
        elif p.suffix.lower() not in (".py", ".ipynb"):
            raise InputError(f"{p}: unsupported file type {p.suffix or '(no extension)'!r}; "
                             "expected a Python script (.py) or a Jupyter notebook (.ipynb)")
        else:
            out.append(p)
    return out
