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
    try:
        nb = json.loads(raw)
        cells = nb.get("cells")
        if cells is None:  # nbformat 3
            cells = [c for ws in nb.get("worksheets", []) for c in ws.get("cells", [])]
    except (json.JSONDecodeError, AttributeError) as err:
        raise InputError(f"{path}: not a Jupyter notebook (invalid JSON: {err})") from None
    text: list[str] = []
    where: list[tuple[int, int] | None] = []
    notes = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", cell.get("input", ""))
        src = "".join(src) if isinstance(src, list) else str(src)
        lines = _clean_cell(src)
        try:
            ast.parse("\n".join(lines))
        except SyntaxError as err:
            notes.append(f"cell {number} skipped: {err.msg} at line {err.lineno}")
            lines = [""] * len(lines)
        except (RecursionError, ValueError) as err:
            notes.append(f"cell {number} skipped: {type(err).__name__}")
            lines = [""] * len(lines)
        for i, line in enumerate(lines, 1):
            text.append(line)
            where.append((number, i))
    return Source(path, "\n".join(text), where, notes)


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
