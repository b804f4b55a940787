"""Which `if` guards a line, which function holds it, who calls that function: an index built in the scan's one walk.

A rule that must keep a documented switch working (a cache clear behind `--rebuild`, a tape behind `--grad`) asks
which command-line switches decide whether a line runs (`rules/argv_flags.py`). Answering that by walking every
file's syntax tree per question made a large project's diagnosis take minutes; the call walk the scan already
makes over every file (`calls.collect_calls`) records the few spans the question needs instead, so each question
is a lookup. Spans are line ranges: a line is guarded by an `if` when it lies in that `if`'s body or `else` block
(or in a conditional expression), inside the innermost function that holds the line.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

SWITCH_ACTIONS = frozenset({"store_true", "store_false", "store_const", "count", "append_const"})

# (first line, last line, the names the guarding test reads)
Region = tuple[int, int, tuple[str, ...]]


def test_tokens(test: ast.AST) -> tuple[str, ...]:
    """What a test reads that may name a switch: attribute and variable names, and `"--flag"` string constants."""
    out: list[str] = []
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute):
            out.append(n.attr)
        elif isinstance(n, ast.Name):
            out.append(n.id)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("--"):
            if n.value.lstrip("-") and " " not in n.value:
                out.append(n.value)
    return tuple(dict.fromkeys(out))


def _span(block: list[ast.stmt]) -> tuple[int, int] | None:
    if not block:
        return None
    return block[0].lineno, getattr(block[-1], "end_lineno", None) or block[-1].lineno


@dataclass
class FileGuards:
    """One file's function spans, guarded spans and declared switches (filled by the scan's call walk)."""

    functions: list[tuple[int, int, str]] = field(default_factory=list)  # (def line, last line, name)
    regions: list[Region] = field(default_factory=list)
    switches: list[tuple[str, str]] = field(default_factory=list)  # (dest, "--flag")

    def add_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append((node.lineno, getattr(node, "end_lineno", None) or node.lineno, node.name))

    def add_test(self, node: ast.If | ast.IfExp) -> None:
        tokens = test_tokens(node.test)
        if not tokens:
            return
        if isinstance(node, ast.IfExp):
            self.regions.append((node.lineno, getattr(node, "end_lineno", None) or node.lineno, tokens))
            return
        for span in (_span(node.body), _span(node.orelse)):
            if span is not None:
                self.regions.append((span[0], span[1], tokens))

    def add_switch(self, node: ast.Call) -> None:
        longs = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        longs = [s for s in longs if s.startswith("--")]
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        action = kw.get("action")
        if not longs or not (isinstance(action, ast.Constant) and action.value in SWITCH_ACTIONS):
            return
        dest = kw.get("dest")
        name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
        self.switches.append((name or longs[0][2:].replace("-", "_"), longs[0]))

    def function_at(self, line: int) -> tuple[int, int, str] | None:
        """The innermost function whose span holds `line`."""
        best = None
        for f in self.functions:
            if f[0] <= line <= f[1] and (best is None or f[0] >= best[0]):
                best = f
        return best


class GuardIndex:
    """The project's guards and callers, queried by line; built once per scan (or from given trees in tests)."""

    def __init__(self) -> None:
        self.files: dict[str, FileGuards] = {}
        self.callers: dict[str, list[tuple[str, int]]] = defaultdict(list)  # function name -> (file, call line)
        self._switches: dict[str, str] | None = None
        self._starts: dict[str, list[int]] = {}

    def add_file(self, rel: str, guards: FileGuards, calls: Iterable[tuple[int, str, str]]) -> None:
        guards.regions.sort()
        self.files[rel] = guards
        self._starts[rel] = [r[0] for r in guards.regions]
        for line, _fn, name in calls:
            self.callers[name].append((rel, line))
        self._switches = None

    def keep_callers_of(self, names: set[str]) -> None:
        """Forget calls of names no project function has: a large tree makes hundreds of thousands of calls."""
        self.callers = defaultdict(list, {k: v for k, v in self.callers.items() if k in names})

    def switches(self) -> dict[str, str]:
        """{dest: "--flag"} of every switch (no value) the project's files declare; the first declaration wins."""
        if self._switches is None:
            out: dict[str, str] = {}
            for rel in sorted(self.files):
                for dest, flag in self.files[rel].switches:
                    out.setdefault(dest, flag)
            self._switches = out
        return self._switches

    def guards_at(self, rel: str, line: int) -> tuple[list[str], str | None]:
        """(the tokens of every test guarding `rel:line` inside its function, that function's name or None)."""
        fg = self.files.get(rel)
        if fg is None:
            return [], None
        fn = fg.function_at(line)
        lo = fn[0] if fn is not None else 0
        tokens: list[str] = []
        starts = self._starts[rel]
        for start, end, toks in fg.regions[: bisect_right(starts, line)]:
            if start > lo and start <= line <= end:
                tokens.extend(toks)
        return tokens, (fn[2] if fn is not None else None)


def flags_guarding(index: GuardIndex, rel: str, line: int, max_depth: int = 2) -> list[str]:
    """The switches whose value decides whether `rel:line` runs: tested by an enclosing `if`, or, when nothing
    guards it there, tested around a call of the function that holds it (up to `max_depth` calls up)."""
    dests = index.switches()
    seen: list[str] = []
    todo: list[tuple[str, int, int]] = [(rel, line, 0)]
    visited: set[tuple[str, int]] = set()
    while todo:
        fl, ln, depth = todo.pop()
        if (fl, ln) in visited:
            continue
        visited.add((fl, ln))
        tokens, func = index.guards_at(fl, ln)
        found = [dests[t] if t in dests else t for t in tokens if t in dests or t.startswith("--")]
        for s in found:
            if s not in seen:
                seen.append(s)
        if found or func is None or depth >= max_depth:
            continue
        for other, call_line in index.callers.get(func, ()):
            todo.append((other, call_line, depth + 1))
    return seen
