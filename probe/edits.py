"""Machine-applicable fixes: line edits on the project's own files, checked, applied to a copy, shown as a diff.

A rule that can say what to change emits `Edit`s (see `models.diagnosis.Edit`) through the helpers here, so every
edit is made the same way: its `old` text is read from the file it changes (an edit whose text no longer matches
is refused when applied, like a patch that does not apply), and a path outside the project or inside an installed
distribution never gets an edit (`owned_path`). Reading goes through a `SourceView`, so rules stay testable without
a file system; writing happens only in `apply_edits`, which the fix engine points at a scratch copy (or, for
`fix --write`, at the project after the copy was measured).
"""

from __future__ import annotations

import ast
import difflib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from warp_compile.probe.models import EntryPoint
from warp_compile.probe.models.diagnosis import Edit

_INSTALLED_PARTS = {"site-packages", "dist-packages"}
MAX_SOURCE_BYTES = 2_000_000


class EditConflict(Exception):
    """An edit whose `old` text is not what the file holds (the file changed since the diagnosis)."""


def owned_path(rel: str) -> bool:
    """A project-relative path the tool may edit: relative, inside the root, not an installed distribution's."""
    if not rel or os.path.isabs(rel) or rel.startswith("~"):
        return False
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    return ".." not in parts and not (_INSTALLED_PARTS & set(parts)) and not any(p.endswith(".egg") for p in parts)


class SourceView:
    """Read-only lines of the project's files, relative to its root; None for a file that is not the project's."""

    def __init__(self, root: str | Path | None = None, files: Mapping[str, str] | None = None) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self._cache: dict[str, list[str] | None] = {k: v.splitlines(keepends=True) for k, v in (files or {}).items()}
        self._trees: dict[str, ast.Module | None] = {}
        self._outside: dict[str, tuple[list[str], ast.Module] | None] = {}
        self._packages: dict[str, list[tuple[str, list[str]]]] = {}

    @property
    def has_sources(self) -> bool:
        """A root to read from, or files given: without either no edit can quote the text it replaces."""
        return self.root is not None or any(v is not None for v in self._cache.values())

    def rel(self, file: str) -> str | None:
        """`file` (absolute or relative to the root) as a project-relative posix path, or None when outside."""
        p = Path(file)
        if p.is_absolute():
            if self.root is None:
                return None
            try:
                rel = p.resolve().relative_to(self.root).as_posix()
            except ValueError:
                return None
        else:
            rel = PurePosixPath(file.replace("\\", "/")).as_posix()
        return rel if owned_path(rel) else None

    def lines(self, file: str) -> list[str] | None:
        rel = self.rel(file)
        if rel is None:
            return None
        if rel not in self._cache:
            self._cache[rel] = self._read(rel)
        return self._cache[rel]

    def tree(self, file: str) -> ast.Module | None:
        """The file's module AST, parsed once per view: several rules locate their edits in the same file. None
        when the file is not the project's, unreadable or not valid Python. Callers must not mutate it."""
        rel = self.rel(file)
        if rel is None:
            return None
        if rel not in self._trees:
            lines = self.lines(rel)
            try:
                self._trees[rel] = ast.parse("".join(lines)) if lines is not None else None
            except (SyntaxError, ValueError):
                self._trees[rel] = None
        return self._trees[rel]

    def installed(self, path: str) -> tuple[list[str], ast.Module] | None:
        """(lines, tree) of a file outside the project, e.g. an installed library's, for quoting it in a report to
        its maintainers: read only, never an edit's target. None when unreadable or not valid Python."""
        if path not in self._outside:
            try:
                p = Path(path)
                text = p.read_text(encoding="utf-8") if p.is_file() and p.stat().st_size <= MAX_SOURCE_BYTES else None
                self._outside[path] = (text.splitlines(keepends=True), ast.parse(text)) if text is not None else None
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                self._outside[path] = None
        return self._outside[path]

    def installed_package(self, path: str, limit: int = 3000) -> list[tuple[str, list[str]]]:
        """(file, lines) of every Python file of the installed top-level package that holds `path` (the directory
        right under site-packages), read only, for what a library's own code does beyond this run (its tapes)."""
        p = Path(path)
        parts = p.parts
        idx = max((i for i, part in enumerate(parts) if part in _INSTALLED_PARTS), default=-1)
        if idx < 0 or idx + 1 >= len(parts) - 1:
            return []
        top = Path(*parts[: idx + 2])
        key = f"pkg:{top}"
        if key not in self._packages:
            out: list[tuple[str, list[str]]] = []
            try:
                for f in sorted(top.rglob("*.py"))[:limit]:
                    if f.stat().st_size <= MAX_SOURCE_BYTES:
                        out.append((str(f), f.read_text(encoding="utf-8", errors="replace").splitlines()))
            except OSError:
                pass
            self._packages[key] = out
        return self._packages[key]

    def _read(self, rel: str) -> list[str] | None:
        if self.root is None:
            return None
        path = self.root / rel
        try:
            if not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
                return None
            return path.read_text(encoding="utf-8").splitlines(keepends=True)
        except (OSError, UnicodeDecodeError):
            return None


# ------------------------------------------------------------------------------------------------ making edits


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def replace_lines(src: SourceView, file: str, start: int, end: int, new: str) -> Edit | None:
    """Replace lines start..end (1-based, inclusive) of `file` by `new`; None when the file is not the project's."""
    lines = src.lines(file)
    rel = src.rel(file)
    if lines is None or rel is None or start < 1 or end < start or end > len(lines):
        return None
    return Edit(file=rel, start_line=start, end_line=end, old="".join(lines[start - 1 : end]), new=_with_newline(new))


def insert_before(src: SourceView, file: str, line: int, text: str) -> Edit | None:
    """Insert `text` before line `line` (len+1 appends)."""
    lines = src.lines(file)
    rel = src.rel(file)
    if lines is None or rel is None or line < 1 or line > len(lines) + 1:
        return None
    return Edit(file=rel, start_line=line, end_line=line - 1, old="", new=_with_newline(text))


def create_file(rel: str, text: str) -> Edit | None:
    """A new project file (e.g. a launcher); refused for a path the tool may not write."""
    if not owned_path(rel):
        return None
    return Edit(file=rel, start_line=1, end_line=0, old="", new=_with_newline(text), create=True)


def header_end(lines: list[str]) -> int:
    """The first line after the shebang, encoding line, module docstring and `from __future__` imports (1-based).

    That is where a process-wide setting goes: before the script's own imports, so a module created by any import
    copies it, yet after the lines Python requires to come first.
    """
    i = 0
    n = len(lines)
    while i < n and (lines[i].startswith("#!") or lines[i].lstrip().startswith("# -*-") or not lines[i].strip()):
        i += 1
    if i < n and lines[i].lstrip().startswith(('"""', "'''", 'r"""', "r'''")):
        quote = '"""' if '"""' in lines[i] else "'''"
        rest = lines[i].split(quote, 1)[1]
        if quote in rest:
            i += 1
        else:
            i += 1
            while i < n and quote not in lines[i]:
                i += 1
            i += 1
    j = i
    while j < n:
        s = lines[j].strip()
        if s.startswith("from __future__ import"):
            i = j + 1
        elif s and not s.startswith("#"):
            break
        j += 1
    return min(i, n) + 1


def settings_lines(settings: Mapping[str, object], comment: str = "") -> str:
    """`import warp as wp` plus one `wp.config.KEY = VALUE` line per setting."""
    tail = f"  # {comment}" if comment else ""
    body = "".join(f"wp.config.{k} = {v!r}{tail}\n" for k, v in settings.items())
    return "import warp as wp\n" + body


def settings_edit(
    src: SourceView, entry: EntryPoint | None, settings: Mapping[str, object], comment: str = ""
) -> Edit | None:
    """The process-wide settings at the top of the entry point, or a launcher file when the entry is installed.

    None when there is no entry point the tool knows, or it is neither the project's file nor an installed one.
    """
    if entry is None:
        return None
    block = settings_lines(settings, comment)
    if entry.owner == "dependency" or (entry.file and src.rel(entry.file) is None and entry.kind != "script"):
        return create_file(launcher_name(entry), launcher_text(entry, block))
    if not entry.file:
        return None
    lines = src.lines(entry.file)
    if lines is None:
        return None
    return top_insert(src, entry.file, block)


WARP_IMPORT = "import warp as wp"


def top_insert(src: SourceView, file: str, block: str) -> Edit | None:
    """`block` (which starts with `import warp as wp`) at the top of `file`, after the lines Python wants first.
    When the file's first statement there already is `import warp as wp`, the block goes after it without its own
    import line: the setting still precedes every other import, and the file does not import warp twice."""
    lines = src.lines(file)
    if lines is None:
        return None
    at = header_end(lines)
    if at <= len(lines) and lines[at - 1].strip() == WARP_IMPORT and block.startswith(WARP_IMPORT + "\n"):
        return insert_before(src, file, at + 1, block[len(WARP_IMPORT) + 1 :])
    return insert_before(src, file, at, block)


def launcher_name(entry: EntryPoint) -> str:
    tail = entry.name.split(":", 1)[-1] if entry.kind == "console_script" else entry.name.rsplit(".", 1)[-1]
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in tail) or "app"
    return f"run_{stem}.py"


def launcher_text(entry: EntryPoint, block: str) -> str:
    """A launcher of the application's own: the settings first, then the installed entry point, same arguments."""
    if entry.kind == "console_script" and ":" in entry.name:
        mod, func = entry.name.split(":", 1)
        body = f"import sys\n\nfrom {mod} import {func}\n\nsys.exit({func}())\n"
    elif entry.kind == "module" and entry.name:
        body = f'import runpy\n\nrunpy.run_module("{entry.name}", run_name="__main__", alter_sys=True)\n'
    else:
        body = f'import runpy\n\nrunpy.run_path({entry.file!r}, run_name="__main__")\n'
    head = f'"""Start {entry.name or entry.file} with Warp settings applied before it imports anything."""\n\n'
    return head + block + "\n" + body


# ------------------------------------------------------------------------------------------------ using edits


def _by_file(edits: Iterable[Edit]) -> dict[str, list[Edit]]:
    out: dict[str, list[Edit]] = {}
    for e in edits:
        out.setdefault(e.file, []).append(e)
    return out


def _overlap(edits: list[Edit]) -> bool:
    spans = sorted((e.start_line, max(e.end_line, e.start_line - 1)) for e in edits if not e.create)
    return any(b[0] <= a[1] for a, b in zip(spans, spans[1:], strict=False))


def patched(original: list[str], edits: list[Edit]) -> list[str]:
    """`original` with `edits` applied bottom-up; EditConflict when an edit's old text does not match."""
    if _overlap(edits):
        raise EditConflict(f"overlapping edits in {edits[0].file}")
    out = list(original)
    for e in sorted(edits, key=lambda e: (e.start_line, e.end_line), reverse=True):
        have = "".join(out[e.start_line - 1 : e.end_line]) if e.end_line >= e.start_line else ""
        if have != e.old:
            raise EditConflict(f"{e.file}:{e.start_line}: the file no longer holds the text this edit replaces")
        out[e.start_line - 1 : max(e.end_line, e.start_line - 1)] = e.new.splitlines(keepends=True)
    return out


def new_texts(root: Path, edits: Iterable[Edit]) -> dict[str, str]:
    """{relative path: new content} for every file the edits touch, checked against `root` (nothing is written)."""
    out: dict[str, str] = {}
    for rel, group in _by_file(edits).items():
        if not owned_path(rel):
            raise EditConflict(f"refusing to edit {rel}: not a file of the project")
        path = root / rel
        created = [e for e in group if e.create]
        if created:
            if path.exists() or len(group) > 1:
                raise EditConflict(f"{rel}: the file to create already exists")
            out[rel] = created[0].new
            continue
        try:
            original = path.read_text(encoding="utf-8").splitlines(keepends=True)
        except (OSError, UnicodeDecodeError) as exc:
            raise EditConflict(f"{rel}: cannot read it ({type(exc).__name__})") from None
        out[rel] = "".join(patched(original, group))
    return out


def apply_edits(root: Path, edits: Iterable[Edit]) -> list[str]:
    """Write the edits into the tree at `root` (all checked first: nothing is written if one does not apply)."""
    texts = new_texts(root, edits)
    for rel, text in texts.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return sorted(texts)


def unified_diff(root: Path | None, edits: Iterable[Edit], src: SourceView | None = None) -> str:
    """The edits as one unified diff (`a/` and `b/` prefixes, like git), read from `root` or a SourceView."""
    chunks: list[str] = []
    for rel, group in sorted(_by_file(edits).items()):
        if any(e.create for e in group):
            before: list[str] = []
            after = group[0].new.splitlines(keepends=True)
            a_name = "/dev/null"
        else:
            if src is not None:
                before = list(src.lines(rel) or [])
            elif root is not None:
                before = (root / rel).read_text(encoding="utf-8").splitlines(keepends=True)
            else:
                before = []
            after = patched(before, group)
            a_name = f"a/{rel}"
        diff = difflib.unified_diff(before, after, fromfile=a_name, tofile=f"b/{rel}")
        chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in diff))
    return "".join(chunks)
