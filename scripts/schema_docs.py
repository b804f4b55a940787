"""Print docs/report.md: the Report, Comparison, Diagnosis (and fix) schemas, read from the pydantic models.

The page is generated so it cannot drift from the code: field names and types come from each model's source
(its annotations as written), the descriptions from the model's docstring and each field's comment.
`tests/test_docs.py` fails when the checked-in page differs from what this prints.

    python scripts/schema_docs.py > docs/report.md
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import sys
import tokenize
from typing import Any, get_args, get_origin

from pydantic import BaseModel

# (title, import path of the root model, one line on what it is); every model a root reaches is documented below it
ROOTS: list[tuple[str, str, str]] = [
    ("Report", "warp_compile.probe.models:Report", "what `measure --json` writes"),
    ("Comparison", "warp_compile.probe.models:Comparison", "what `compare` and `try` judge"),
    ("Diagnosis", "warp_compile.probe.models:Diagnosis", "what `diagnose --json` writes"),
    ("FixResult", "warp_compile.probe.models:FixResult", "what `fix --json` writes"),
]


def _load(path: str) -> type[BaseModel] | None:
    mod, _, name = path.partition(":")
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError):
        return None


def _comments(source: str) -> dict[int, str]:
    """{line: comment text} for every comment in `source` (1-based lines)."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string.lstrip("#").strip()
    return out


def _fields(cls: type[BaseModel]) -> list[tuple[str, str, str]]:
    """(name, annotation as written, comment) for the fields the class itself declares, in source order."""
    source = inspect.getsource(cls)
    tree = ast.parse(source)
    node = tree.body[0]
    assert isinstance(node, ast.ClassDef)
    notes = _comments(source)
    rows: list[tuple[str, str, str]] = []
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        name = item.target.id
        if name not in cls.model_fields:
            continue
        ann = ast.get_source_segment(source, item.annotation) or ""
        comment = notes.get(item.end_lineno or item.lineno, "")
        above, line = [], item.lineno - 1
        lines = source.splitlines()
        while line in notes and lines[line - 1].lstrip().startswith("#"):
            above.insert(0, notes[line])
            line -= 1
        text = " ".join([*above, comment]).strip()
        rows.append((name, " ".join(ann.split()), text))
    return rows


def _nested(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation refers to (through lists, dicts, unions)."""
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    if get_origin(annotation) is not None or get_args(annotation):
        for arg in get_args(annotation):
            out.extend(_nested(arg))
    return out


def _reached(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []
    todo = [root]
    while todo:
        cls = todo.pop(0)
        if cls in seen:
            continue
        seen.append(cls)
        for f in cls.model_fields.values():
            todo.extend(m for m in _nested(f.annotation) if m not in seen)
    return seen


def _doc(cls: type[BaseModel]) -> str:
    doc = inspect.getdoc(cls) or ""
    return "" if doc.startswith("Usage docs:") or doc == inspect.getdoc(BaseModel) else doc


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    out = [
        "# The report schemas",
        "",
        "Generated from the pydantic models by `python scripts/schema_docs.py > docs/report.md`; do not edit by hand",
        "(`tests/test_docs.py` fails when this page and the models differ). Every duration is in milliseconds.",
        "Unknown keys are ignored when a file is loaded, so a report from a newer tool still loads; fields are added,",
        "never renamed (`schema_version`).",
        "",
    ]
    documented: set[type[BaseModel]] = set()
    for title, path, what in ROOTS:
        root = _load(path)
        if root is None:
            continue
        out += [f"## {title}", "", f"{what[0].upper()}{what[1:]}: `{path.replace(':', '.')}`.", ""]
        for cls in _reached(root):
            if cls in documented:
                continue
            documented.add(cls)
            out += [f"### {cls.__name__}", ""]
            doc = _doc(cls)
            if doc:
                out += [doc, ""]
            rows = _fields(cls)
            if rows:
                out += ["| field | type | meaning |", "| --- | --- | --- |"]
                out += [f"| `{n}` | `{_cell(t)}` | {_cell(c)} |" for n, t, c in rows]
                out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
