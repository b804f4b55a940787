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

from ..models import EntryPoint
from ..models.diagnosis import Edit
from .placement import Placement, place, warp_bound_before

_INSTALLED_PARTS = {"site-packages", "dist-packages"}
MAX_SOURCE_BYTES = 2_000_000


def split_lines(text: str) -> list[str]:
    """Lines as Python counts them (ends kept): split at newlines only, not at the form feeds and other separators
    `str.splitlines` also breaks at, so line numbers agree with `ast` and tracebacks."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    return out + [parts[-1]] if parts[-1] else out


def read_source(path: Path) -> tuple[str, str, bool]:
    """(the text as stored, BOM left out; the file's dominant newline; whether it starts with a UTF-8 BOM). Edits
    are written back with the file's own line endings and BOM, so a CRLF file stays CRLF."""
    raw = path.read_bytes().decode("utf-8")
    bom = raw.startswith("\ufeff")
    raw = raw.removeprefix("\ufeff")
    crlf = raw.count("\r\n")
    return raw, "\r\n" if crlf and crlf * 2 >= raw.count("\n") else "\n", bom


def source_text(path: Path) -> str:
    """The file's text as rules and diffs see it: `\n` newlines, no BOM."""
    return read_source(path)[0].replace("\r\n", "\n")


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
        self._cache: dict[str, list[str] | None] = {k: split_lines(v) for k, v in (files or {}).items()}
        self._given = bool(files)
        self._trees: dict[str, ast.Module | None] = {}
        self._outside: dict[str, tuple[list[str], ast.Module] | None] = {}
        self._packages: dict[str, list[tuple[str, list[str]]]] = {}

    @property
    def available(self) -> bool:
        """Project sources were given (a root or files): without them no edit can quote what it replaces."""
        return self.root is not None or self._given

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
            return split_lines(source_text(path))
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
    """The line a process-wide setting goes before (1-based): after the shebang, encoding line, leading comments,
    module docstring and `from __future__` imports, or right after the file's own `import warp` when that comes
    first (see `placement`). Without a parse, the first line."""
    p = place("".join(lines))
    return p.line if p is not None else 1


def settings_lines(settings: Mapping[str, object], comment: str = "") -> str:
    """`import warp as wp` plus one `wp.config.KEY = VALUE` line per setting."""
    tail = f"  # {comment}" if comment else ""
    body = "".join(f"wp.config.{k} = {v!r}{tail}\n" for k, v in settings.items())
    return "import warp as wp\n" + body


def settings_edits(
    src: SourceView, entry: EntryPoint | None, settings: Mapping[str, object], comment: str = ""
) -> list[Edit]:
    """The process-wide settings at the top of the entry point, or a launcher file when the entry is installed.

    Empty when there is no entry point the tool knows, it is neither the project's file nor an installed one, or
    its file does not parse.
    """
    if entry is None:
        return []
    block = settings_lines(settings, comment)
    if entry.owner == "dependency" or (entry.file and src.rel(entry.file) is None and entry.kind != "script"):
        e = create_file(launcher_name(entry, src), launcher_text(entry, block))
        return [e] if e is not None else []
    if not entry.file or src.lines(entry.file) is None:
        return []
    return top_insert(src, entry.file, block)


WARP_IMPORT = "import warp as wp"


def _body(block: str) -> str:
    return block[len(WARP_IMPORT) + 1 :] if block.startswith(WARP_IMPORT + "\n") else block


def top_insert(src: SourceView, file: str, block: str) -> list[Edit]:
    """`block` (`import warp as wp` and lines written against `wp`) where `placement.place` puts a process-wide
    setting in `file`: after the header Python wants first, reusing the file's own import of warp (its alias; the
    import moves up when it came after something that could create a kernel module). Empty when the file is not
    the project's or does not parse."""
    lines = src.lines(file)
    if lines is None:
        return []
    p = place("".join(lines))
    if p is None:
        return []
    add = insert_before(src, file, p.line, p.block(_body(block)))
    if add is None:
        return []
    if p.move is None:
        return [add]
    drop = replace_lines(src, file, p.move[0], p.move[1], p.move[2])
    return [add, drop] if drop is not None else []


def settings_place(src: SourceView, file: str) -> Placement | None:
    """Where `top_insert` puts a setting in `file` (None when the file cannot be read or parsed)."""
    lines = src.lines(file)
    return place("".join(lines)) if lines is not None else None


def reuse_warp_import(src: SourceView, file: str, line: int, block: str) -> str:
    """`block` for insertion at `file:line`: without its `import warp as wp` when a top-level import of warp above
    that line already binds it (its alias used), else as it is."""
    lines = src.lines(file)
    alias = warp_bound_before("".join(lines), line) if lines is not None else None
    if alias is None or not block.startswith(WARP_IMPORT + "\n"):
        return block
    return Placement(line=line, alias=alias, import_line="").block(_body(block))


def launcher_name(entry: EntryPoint, src: SourceView | None = None) -> str:
    """run_<entry>.py, or run_<entry>_2.py (and so on) when the project already has a file of that name: a launcher
    never overwrites one of the user's files (their own launcher from earlier advice, say)."""
    tail = entry.name.split(":", 1)[-1] if entry.kind == "console_script" else entry.name.rsplit(".", 1)[-1]
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in tail) or "app"
    name, n = f"run_{stem}.py", 1
    while src is not None and _taken(src, name):
        n += 1
        name = f"run_{stem}_{n}.py"
    return name


def _taken(src: SourceView, name: str) -> bool:
    return src.lines(name) is not None or (src.root is not None and (src.root / name).exists())


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


def _blank_ends(text: str) -> tuple[list[str], list[str], list[str]]:
    lines = split_lines(text)
    i, j = 0, len(lines)
    while i < j and not lines[i].strip():
        i += 1
    while j > i and not lines[j - 1].strip():
        j -= 1
    return lines[:i], lines[i:j], lines[j:]


def merge_edits(edits: Iterable[Edit]) -> list[Edit]:
    """Several findings' edits as one set that applies together: an edit given twice counts once, and insertions
    at the same line of a file become one block in which a line another insertion there already adds (the
    `import warp as wp` that two settings edits both bring) appears once."""
    out: list[Edit] = []
    for e in edits:
        if e in out:
            continue
        insert = not e.create and not e.old and e.end_line == e.start_line - 1
        i = next((k for k, x in enumerate(out) if insert and not x.create and not x.old and x.file == e.file
                  and (x.start_line, x.end_line) == (e.start_line, e.end_line)), None)
        if i is None:
            out.append(e)
            continue
        lead, core, trail = _blank_ends(out[i].new)
        have = {tuple(ln for ln in c if ln.strip()) for c in _statements(core)}
        for chunk in _statements(_blank_ends(e.new)[1]):
            body = tuple(ln for ln in chunk if ln.strip())
            if body in have:
                continue
            have.add(body)
            last = _statements(core)[-1] if core else []
            if core and (_is_block(body) or _is_block(tuple(ln for ln in last if ln.strip()))):
                while core and not core[-1].strip():
                    core.pop()
                core += ["\n", "\n"]  # a definition stands apart, as the file's others do
            core += chunk
        out[i] = out[i].model_copy(update={"new": "".join(lead + core + trail)})
    return _imports_once(out)


def _statements(lines: list[str]) -> list[list[str]]:
    """Lines cut into top-level statements: a line at column 0 starts one, unless the one before is a decorator
    (it goes with its definition); indented and blank lines belong to the statement above."""
    out: list[list[str]] = []
    for ln in lines:
        starts = bool(ln.strip()) and not ln[0].isspace() and not (out and _last_code(out[-1]).startswith("@"))
        if starts or not out:
            out.append([ln])
        else:
            out[-1].append(ln)
    return out


def _last_code(chunk: list[str]) -> str:
    return next((ln for ln in reversed(chunk) if ln.strip()), "")


def _is_block(body: tuple[str, ...]) -> bool:
    """A definition (decorated or not), which stands apart from the statements around it."""
    return bool(body) and body[0].startswith(("@", "def ", "async def ", "class "))


def _is_insert(e: Edit) -> bool:
    return not e.create and not e.old and e.end_line == e.start_line - 1


def _imports_once(edits: list[Edit]) -> list[Edit]:
    """A module-level import line that an insertion higher up the same file already adds is left out of a lower one
    (two findings on one entry point each bring `import warp as wp`): the name is bound before the lower lines run."""
    added: dict[str, set[str]] = {}
    out = list(edits)
    for i in sorted(range(len(out)), key=lambda k: (out[k].file, out[k].start_line)):
        e = out[i]
        if not _is_insert(e):
            continue
        have = added.setdefault(e.file, set())
        lines = e.new.splitlines(keepends=True)
        kept = [ln for ln in lines if not (ln.startswith(("import ", "from ")) and ln.strip() in have)]
        have |= {ln.strip() for ln in lines if ln.startswith(("import ", "from "))}
        if len(kept) != len(lines) and any(ln.strip() for ln in kept):
            out[i] = e.model_copy(update={"new": "".join(kept)})
    return out


def patched(original: list[str], edits: list[Edit], eol: str = "\n") -> list[str]:
    """`original` with `edits` applied bottom-up; EditConflict when an edit's old text does not match. The lines
    an edit adds end with `eol` (the file's own newline); old text is compared whatever its line endings."""
    if _overlap(edits):
        raise EditConflict(f"overlapping edits in {edits[0].file}")
    out = list(original)
    for e in sorted(edits, key=lambda e: (e.start_line, e.end_line), reverse=True):
        have = "".join(out[e.start_line - 1 : e.end_line]) if e.end_line >= e.start_line else ""
        if have.replace("\r\n", "\n") != e.old.replace("\r\n", "\n"):
            raise EditConflict(f"{e.file}:{e.start_line}: the file no longer holds the text this edit replaces")
        new = split_lines(e.new.replace("\r\n", "\n"))
        if eol != "\n":
            new = [ln[:-1] + eol if ln.endswith("\n") else ln for ln in new]
        if new and e.start_line > len(out) and out and not out[-1].endswith("\n"):
            out[-1] += eol  # appending after a last line that has no newline
        out[e.start_line - 1 : max(e.end_line, e.start_line - 1)] = new
    return out


def new_texts(root: Path, edits: Iterable[Edit]) -> dict[str, str]:
    """{relative path: new content} for every file the edits touch, checked against `root` (nothing is written).
    Each file keeps its own line endings and BOM."""
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
            text, eol, bom = read_source(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise EditConflict(f"{rel}: cannot read it ({type(exc).__name__})") from None
        original = split_lines(text)
        out[rel] = ("\ufeff" if bom else "") + "".join(patched(original, group, eol))
    return out


def apply_edits(root: Path, edits: Iterable[Edit]) -> list[str]:
    """Write the edits into the tree at `root` (all checked first: nothing is written if one does not apply)."""
    texts = new_texts(root, edits)
    for rel, text in texts.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    return sorted(texts)


def unified_diff(root: Path | None, edits: Iterable[Edit], src: SourceView | None = None) -> str:
    """The edits as one unified diff (`a/` and `b/` prefixes, like git), read from `root` or a SourceView."""
    chunks: list[str] = []
    for rel, group in sorted(_by_file(edits).items()):
        if any(e.create for e in group):
            before: list[str] = []
            after = split_lines(group[0].new)
            a_name = "/dev/null"
        else:
            if src is not None:
                before = list(src.lines(rel) or [])
            elif root is not None:
                before = split_lines(source_text(root / rel))
            else:
                before = []
            after = patched(before, group)
            a_name = f"a/{rel}"
        diff = difflib.unified_diff(before, after, fromfile=a_name, tofile=f"b/{rel}")
        chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in diff))
    return "".join(chunks)
