"""The static scan: read a project's Python sources with `ast` and collect Warp compile-time facts.

User code is never imported or executed: files are read as bytes and parsed. A file that does not parse is listed in
`ScanFacts.parse_errors` and the scan goes on; `scan()` raises only when `root` does not exist.

Two passes: each file is scanned on its own (aliases, scopes, facts), then facts are linked across files
(which modules define kernels, what an import brings in, which launches a tape block reaches, ...).
"""

from __future__ import annotations

import ast
import keyword
import os
import re
import stat
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .scan_models import (
    CREATION_OPTIONS,
    FACT_LISTS,
    MATHDX_TILE_OPS,
    CacheOp,
    CallerRef,
    ConfigSetFact,
    FactoryCallFact,
    ImportFact,
    ImportRef,
    KernelDef,
    LaunchFact,
    LoadCallFact,
    LoopFact,
    ModuleInfo,
    ModuleOptionsFact,
    OverloadFact,
    ParseError,
    ScanFacts,
    SettingFact,
    SkippedFile,
    TapeBackwardCall,
    TapeFact,
    TileOpFact,
)

__all__ = ["scan", "SKIP_DIRS", "SETTING_NAMES", "module_name_for"]

SKIP_DIRS = frozenset({"__pycache__", "site-packages", "build", "dist", "node_modules"})
# Settings collected in ScanFacts.settings (plus every enable_mathdx_* name).
SETTING_NAMES = frozenset(
    {
        "use_precompiled_headers",
        "enable_backward",
        "max_unroll",
        "load_module_max_workers",
        "mode",
        "fast_math",
        "block_dim",
        "lineinfo",
        "optimization_level",
        "verify_fp",
        "fuse_fp",
        "deterministic",
        "compile_time_trace",
        "cuda_output",
    }
)
_TEXT_MAX = 300
_WARP_INTERNAL = frozenset({"_src", "context", "types", "tape", "utils", "builtins", "codegen", "build"})
_WARP_STAR = frozenset(
    {
        "launch",
        "launch_tiled",
        "kernel",
        "func",
        "overload",
        "config",
        "set_module_options",
        "get_module",
        "force_load",
        "load_module",
        "clear_kernel_cache",
        "clear_lto_cache",
        "Tape",
        "static",
        "constant",
        "Int",
        "Float",
        "Scalar",
    }
)
_GENERIC = frozenset(
    {"Any", "typing.Any", "typing_extensions.Any", "warp.Any", "warp.Int", "warp.Float", "warp.Scalar"}
)
_TEMP_FUNCS = frozenset(
    {
        "tempfile.mkdtemp",
        "tempfile.TemporaryDirectory",
        "tempfile.gettempdir",
        "tempfile.gettempdirb",
        "tempfile.mkstemp",
        "tempfile.NamedTemporaryFile",
    }
)
_TEMP_NAMES = frozenset({"tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory"})
_TEMP_PREFIXES = ("/tmp", "/var/tmp", "/dev/shm")
_STAMP_FUNCS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.strftime",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.localtime",
        "time.gmtime",
        "time.ctime",
        "os.getpid",
        "os.urandom",
    }
)
_STAMP_MODULES = ("uuid.", "secrets.", "random.")
_STAMP_ATTRS = frozenset({"strftime", "isoformat", "now", "utcnow", "today", "timestamp", "getpid"})
_ENV_KEYS = frozenset({"WARP_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH"})
_FORCE_LOAD_ARGS = ("device", "modules", "block_dim", "max_workers")
_LOAD_MODULE_ARGS = ("module", "device", "recursive", "block_dim", "max_workers")
_CALL_RE = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_KEYWORDS = frozenset(k.encode() for k in keyword.kwlist)
_UNKNOWN = object()  # a binding whose value is not a plain expression (parameter, loop target, tuple unpacking)
# Calls whose result is fixed when their arguments are (for the factory-argument check).
_PURE_CALLS = frozenset(
    "float int str bool complex tuple list dict set frozenset range len min max abs round pow sum sorted reversed "
    "enumerate zip".split()
)
# Names whose value comes from outside the source: an argument read from them varies from run to run.
_RUNTIME_NAMES = ("sys.argv", "sys.stdin", "os.environ", "os.getenv", "os.environ.get", "input", "open")


@dataclass
class _LoopEntry:
    """A for loop (or comprehension) being visited: its target names and whether it iterates a constant sequence."""

    targets: set[str]
    iter_node: ast.AST | None  # what it iterates (None: a while loop, never constant)
    line: int
    frame: object  # the innermost function frame it runs in (None: module scope)
    loop_line: int | None = None  # line of its LoopFact (a constant-range loop in a kernel body)
    fixed: bool | None = None  # whether iter_node is fixed by the source; worked out when first asked


@dataclass
class _CallSite:
    """A call that may be of a kernel factory; resolved against the project's factories after every file is read."""

    name: str  # last identifier of the callee
    qual: str  # the callee as a dotted name (imports resolved), e.g. "pkg.kernels.make"
    local: bool  # a bare name or self./cls. attribute: may name a def of the same file
    where: dict
    callee: str
    args: list[str]
    runtime_args: list[str]
    in_loop: bool
    decorator: bool


def _text(node: ast.AST | None) -> str:
    if node is None:
        return ""
    try:
        s = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop the scan
        s = "<?>"
    return s if len(s) <= _TEXT_MAX else s[: _TEXT_MAX - 1] + "…"


def _canon(q: str | None) -> str | None:
    """`warp._src.context.launch` -> `warp.launch`; other dotted names unchanged."""
    if q is None or not (q == "warp" or q.startswith("warp.")):
        return q
    parts = q.split(".")
    keep = [parts[0]] + [p for i, p in enumerate(parts[1:], 1) if not (p in _WARP_INTERNAL and i < len(parts) - 1)]
    return ".".join(keep)


def _last_ident(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _trivial(body: list[ast.stmt]) -> bool:
    return all(
        isinstance(s, (ast.Pass, ast.Continue)) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in body
    )


def _is_main_guard(test: ast.AST) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        _const_str(s) == "__main__" for s in sides
    )


def _is_setting(name: str) -> bool:
    return name in SETTING_NAMES or name.startswith("enable_mathdx")


# ---- files and module names ------------------------------------------------------------------------------------


def module_name_for(rel: str, root_name: str = "", root_is_package: bool = False) -> tuple[str, bool]:
    """Python module name of a root-relative posix path: (name, is_package). A leading `src/` is stripped; when the
    scanned root is itself a package (has `__init__.py`), names are prefixed with its directory name."""
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts[0] == "src" and len(parts) > 1 and not root_is_package:
        parts = parts[1:]
    if root_is_package and root_name:
        parts = [root_name, *parts]
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return (".".join(parts) if parts else (root_name or "__init__")), is_pkg


_VIRTUAL_FS = frozenset({"proc", "sys", "dev"})


def _collect_files(root: Path, max_files: int, max_bytes: int) -> tuple[list[str], list[SkippedFile], bool]:
    files: list[str] = []
    skipped: list[SkippedFile] = []
    root_real = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        keep = []
        for name in sorted(dirnames):
            sub = here / name
            try:
                if name.startswith(".") or name in SKIP_DIRS or sub.is_symlink():
                    continue
                if (sub / "pyvenv.cfg").exists() or (sub / "conda-meta").is_dir():
                    continue
                if name in _VIRTUAL_FS and os.path.ismount(sub):
                    continue  # /proc, /sys, /dev: kernel views, never a project's sources
            except OSError:  # unreadable: nothing to scan there
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = here / name
            rel = path.relative_to(root).as_posix()
            if len(files) >= max_files:
                return files, skipped, True
            try:
                if path.is_symlink():
                    path.resolve().relative_to(root_real)
                st = path.stat()
            except ValueError:
                skipped.append(SkippedFile(file=rel, reason="symlink to outside the scanned root"))
                continue
            except OSError as exc:
                skipped.append(SkippedFile(file=rel, reason=f"unreadable: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO or device named *.py would block the read forever
                skipped.append(SkippedFile(file=rel, reason="not a regular file"))
                continue
            size = st.st_size
            if size > max_bytes:
                skipped.append(SkippedFile(file=rel, reason=f"{size} bytes, over max_bytes={max_bytes}"))
                continue
            files.append(rel)
    return files, skipped, False


class _Project:
    """Module names of every scanned file, and import-name resolution against them."""

    def __init__(self, root_name: str, rels: list[str]):
        self.index: dict[str, str] = {}  # module name -> rel
        self.name_of: dict[str, tuple[str, bool]] = {}  # rel -> (name, is_package)
        root_is_package = "__init__.py" in rels
        for rel in rels:
            name, is_pkg = module_name_for(rel, root_name, root_is_package)
            self.name_of[rel] = (name, is_pkg)
            self.index.setdefault(name, rel)
        # sys.path-style names (directory of the topmost package ancestor on sys.path), e.g. lib/pkg/mod.py -> pkg.mod,
        # scripts/helpers.py -> helpers: a fallback for layouts other than flat / src.
        pkg_dirs = {rel.rpartition("/")[0] for rel in rels if rel.endswith("__init__.py") and "/" in rel}
        self.alt: dict[str, list[str]] = defaultdict(list)
        for rel in rels:
            dirparts = rel.split("/")[:-1]
            i = len(dirparts)
            while i > 0 and "/".join(dirparts[:i]) in pkg_dirs:
                i -= 1
            stem = rel.rsplit("/", 1)[-1][:-3]
            parts = dirparts[i:] + ([] if stem == "__init__" else [stem])
            alt = ".".join(parts)
            name = self.name_of[rel][0]
            if alt and alt != name and alt not in self.index:
                self.alt[alt].append(name)

    def resolve(self, dotted: str, importer_rel: str) -> str | None:
        if not dotted or dotted.startswith("."):
            return None
        if dotted in self.index:
            return dotted
        cands = self.alt.get(dotted)
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]

        def shared(name: str) -> int:
            a, b = self.index[name].split("/"), importer_rel.split("/")
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            return n

        return max(cands, key=shared)


# ---- per-file scan ----------------------------------------------------------------------------------------------


@dataclass
class _Frame:
    kind: str  # "module" | "class" | "function"
    name: str
    qualname: str
    node: ast.AST | None = None
    assigns: dict[str, list[tuple[int, object]]] = field(default_factory=lambda: defaultdict(list))
    warp_kind: str | None = None  # "kernel" | "func" when this def is a Warp kernel / function
    atexit: bool = False


class _Names:
    """Name -> fully qualified dotted name, from the file's imports (and `cfg = wp.config`-style aliases)."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self.warp_star = False

    def qual(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.map.get(node.id)
        if root is None:
            if self.warp_star and (node.id in _WARP_STAR or node.id.startswith("tile")):
                root = "warp." + node.id
            else:
                root = node.id
        return ".".join([root, *reversed(parts)])


@dataclass
class _RmtreeCandidate:
    where: dict
    arg: ast.AST
    atexit: bool
    reach_text: str
    reach_names: set[str]


def _iter_stmts(body: list[ast.stmt]):
    """Every statement, nested ones included (imports and assignments are statements: no need to walk expressions)."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody"):
            part = getattr(node, name, None)
            if isinstance(part, list):
                yield from _iter_stmts(part)
        for sub in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
            yield from _iter_stmts(sub.body)


class _FileScan(ast.NodeVisitor):
    def __init__(self, rel: str, tree: ast.Module, project: _Project, source: bytes = b""):
        self.rel = rel
        self.tree = tree
        self.source_lines = source.splitlines()
        self.project = project
        self.modname, self.is_package = project.name_of[rel]
        self.package = self.modname if self.is_package else self.modname.rpartition(".")[0]
        self.names = _Names()
        self.frames: list[_Frame] = [_Frame("module", "<module>", "")]
        self.type_checking = 0
        self.swallow = 0
        self.atexit = 0
        self.discarded: set[int] = set()  # Call nodes whose value is thrown away (expression statements)
        self.handled: set[int] = set()  # nodes already turned into a fact by their parent
        self.active_tapes: list[TapeFact] = []
        self.tape_vars: set[str] = set()
        self.backward_calls: list[tuple[str, dict]] = []
        self.rmtree: list[_RmtreeCandidate] = []
        self.cache_dir_names: set[str] = set()
        self.calls: dict[str, set[str]] = defaultdict(set)  # function qualname -> called names
        self.has_main_guard = False
        self.imports_warp = False
        self.int_consts: dict[str, int] = {}
        self.str_consts: dict[str, str] = {}
        self.imports: list[ImportFact] = []
        self.kernels: list[KernelDef] = []
        self.functions: list[KernelDef] = []
        self.overloads: list[OverloadFact] = []
        self.launches: list[LaunchFact] = []
        self.module_options: list[ModuleOptionsFact] = []
        self.config_sets: list[ConfigSetFact] = []
        self.cache_ops: list[CacheOp] = []
        self.settings: list[SettingFact] = []
        self.load_calls: list[LoadCallFact] = []
        self.tapes: list[TapeFact] = []
        self.tape_backward_calls: list[TapeBackwardCall] = []
        self.tile_ops: list[TileOpFact] = []
        self.loops: list[LoopFact] = []
        self.loop_stack: list[_LoopEntry] = []
        self.call_sites: list[_CallSite] = []
        self.decorators: set[int] = set()  # Call nodes used as decorators

    # ---- driver ------------------------------------------------------------------------------------------------

    def run(self) -> None:
        self._collect_aliases()
        self._collect_constants()
        self.visit(self.tree)
        self._finish()

    def run_light(self) -> None:
        """For files that cannot hold a Warp fact (no "warp", "CUDA_CACHE" or "rmtree" in the bytes): statements
        only, for imports, scopes, the main guard and the names each function calls."""
        self._light(self.tree.body)

    def _light(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                self.visit_Import(node)
            elif isinstance(node, ast.ImportFrom):
                self.visit_ImportFrom(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                self.frames.append(_Frame(kind, node.name, self._child_qualname(node.name), node))
                if kind == "function" and self.source_lines:  # call graph for tape blocks: names before "(" suffice
                    text = b"\n".join(self.source_lines[node.lineno : node.end_lineno or node.lineno])
                    self.calls[self.frames[-1].qualname].update(
                        m.decode("ascii") for m in _CALL_RE.findall(text) if m not in _KEYWORDS
                    )
                self._light(node.body)
                self.frames.pop()
            elif isinstance(node, ast.If):
                tc = _last_ident(node.test) == "TYPE_CHECKING"
                self.has_main_guard |= _is_main_guard(node.test)
                self.type_checking += tc
                self._light(node.body)
                self.type_checking -= tc
                self._light(node.orelse)
            else:
                for name in ("body", "orelse", "finalbody"):
                    part = getattr(node, name, None)
                    if isinstance(part, list):
                        self._light(part)
                for sub in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
                    self._light(sub.body)

    def release(self) -> None:
        """Drop every reference into the syntax tree; only the facts remain."""
        self.tree = None
        self.source_lines = []
        self.frames = []
        self.rmtree = []
        self.active_tapes = []
        self.discarded = set()
        self.handled = set()
        self.loop_stack = []
        self.decorators = set()

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        base = self.package.split(".") if self.package else []
        if level - 1 > len(base):
            return "." * level + (module or "")
        base = base[: len(base) - (level - 1)]
        if module:
            base.append(module)
        return ".".join(base)

    def _collect_aliases(self) -> None:
        m = self.names.map
        assigns: list[ast.Assign] = []
        for node in _iter_stmts(self.tree.body):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.imports_warp |= a.name == "warp" or a.name.startswith("warp.")
                    if a.asname:
                        m[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        m[top] = top
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node.module, node.level)
                self.imports_warp |= node.level == 0 and (base == "warp" or base.startswith("warp."))
                for a in node.names:
                    if a.name == "*":
                        if base == "warp":
                            self.names.warp_star = True
                        continue
                    m[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, (ast.Name, ast.Attribute))
            ):
                assigns.append(node)
        # `cfg = wp.config`, `env = os.environ`, `launch = wp.launch`: plain aliases of warp / os names
        for node in assigns:
            q = _canon(self.names.qual(node.value))
            name = node.targets[0].id
            if q and (q.startswith("warp.") or q in ("warp", "os.environ")) and name not in m:
                m[name] = q

    def _collect_constants(self) -> None:
        seen: dict[str, int] = defaultdict(int)
        values: dict[str, ast.AST] = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                name, value = node.target.id, node.value
            else:
                continue
            seen[name] += 1
            values[name] = value
        for name, value in values.items():
            if seen[name] != 1:
                continue
            if isinstance(value, ast.Call) and self._api(value.func) == "constant" and value.args:
                value = value.args[0]
            if isinstance(value, ast.Constant):
                if isinstance(value.value, bool):
                    continue
                if isinstance(value.value, int):
                    self.int_consts[name] = value.value
                elif isinstance(value.value, str):
                    self.str_consts[name] = value.value

    # ---- helpers -----------------------------------------------------------------------------------------------

    def _q(self, node: ast.AST) -> str | None:
        return _canon(self.names.qual(node))

    def _api(self, node: ast.AST) -> str | None:
        """`wp.launch` / `warp.launch` / `launch` (from warp) -> "launch"; anything else -> None."""
        q = self._q(node)
        if q and q.startswith("warp.") and q.count(".") == 1:
            return q[5:]
        return None

    def _is_warp_config(self, node: ast.AST) -> bool:
        return self._q(node) == "warp.config"

    def _fn_frame(self) -> _Frame | None:
        for fr in reversed(self.frames):
            if fr.kind == "function":
                return fr
        return None

    def _where(self, node: ast.AST) -> dict:
        fn = self._fn_frame()
        return {
            "file": self.rel,
            "line": getattr(node, "lineno", 0),
            "function": fn.qualname if fn else "<module>",
            "scope": "function" if fn else "module",
        }

    def _current_qualname(self) -> str:
        fn = self._fn_frame()
        return fn.qualname if fn else "<module>"

    def _child_qualname(self, name: str) -> str:
        parent = self.frames[-1]
        if parent.kind == "module":
            return name
        if parent.kind == "class":
            return f"{parent.qualname}.{name}"
        return f"{parent.qualname}.<locals>.{name}"

    def _bind(self, name: str, line: int, value: object) -> None:
        self.frames[-1].assigns[name].append((line, value))

    def _bind_target(self, target: ast.AST, value: ast.AST | None, line: int) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, line, value if value is not None else _UNKNOWN)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind_target(elt, None, line)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None, line)

    def _lookup(self, name: str, line: int) -> object:
        """The latest value bound to `name` before `line` (innermost scope first); None if never bound here."""
        for depth, fr in enumerate(reversed(self.frames)):
            if fr.kind == "class" and depth > 0:
                continue
            entries = fr.assigns.get(name)
            if not entries:
                continue
            before = [v for ln, v in entries if ln < line]
            if before:
                return before[-1]
            if depth > 0:
                return entries[-1][1]
        return None

    def _expr_of(self, name: str, line: int) -> ast.AST | None:
        v = self._lookup(name, line)
        return v if isinstance(v, ast.AST) else None

    def _dict_of(self, node: ast.AST | None, line: int, depth: int = 0) -> tuple[dict[str, str], str | None]:
        if node is None:
            return {}, None
        if isinstance(node, ast.Name) and depth < 3:
            v = self._expr_of(node.id, line)
            if isinstance(v, (ast.Dict, ast.Call)):
                return self._dict_of(v, getattr(v, "lineno", line), depth + 1)
        if isinstance(node, ast.Dict):
            out: dict[str, str] = {}
            rest = None
            for k, v in zip(node.keys, node.values, strict=False):
                if k is None:
                    rest = _text(node)
                    continue
                out[_const_str(k) if _const_str(k) is not None else _text(k)] = _text(v)
            return out, rest
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            out = {kw.arg: _text(kw.value) for kw in node.keywords if kw.arg}
            return out, (_text(node) if node.args or any(kw.arg is None for kw in node.keywords) else None)
        return {}, _text(node)

    def _call_args(self, node: ast.Call, positional: tuple[str, ...]) -> dict[str, ast.AST]:
        args: dict[str, ast.AST] = {}
        for name, value in zip(positional, node.args, strict=False):
            args[name] = value
        for kw in node.keywords:
            if kw.arg:
                args[kw.arg] = kw.value
        return args

    def _warp_body(self) -> _Frame | None:
        fr = self._fn_frame()
        return fr if fr is not None and fr.warp_kind else None

    def _in_atexit(self) -> bool:
        return self.atexit > 0 or any(fr.atexit for fr in self.frames)

    def _taint(self, node: ast.AST, line: int, depth: int = 0) -> tuple[bool, bool, list[str], set[str]]:
        """(temporary, timestamped, texts, names) of an expression, following local variables a few steps."""
        temp = stamp = False
        texts = [_text(node)]
        names: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                q = self._q(n.func) or ""
                last = q.rsplit(".", 1)[-1]
                if q in _TEMP_FUNCS:
                    temp = True
                if (
                    q in _STAMP_FUNCS
                    or q.startswith(_STAMP_MODULES)
                    or (isinstance(n.func, ast.Attribute) and last in _STAMP_ATTRS)
                    or q.endswith((".datetime.now", ".datetime.utcnow", ".date.today"))
                ):
                    stamp = True
            elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith(_TEMP_PREFIXES):
                temp = True
            elif isinstance(n, ast.Name):
                names.add(n.id)
                if n.id in _TEMP_NAMES:
                    temp = True
                if depth < 4:
                    v = self._expr_of(n.id, line)
                    if v is not None and v is not node:
                        t2, s2, x2, n2 = self._taint(v, getattr(v, "lineno", line), depth + 1)
                        temp, stamp = temp or t2, stamp or s2
                        texts += x2
                        names |= n2
        return temp, stamp, texts, names

    def _get_module_target(self, node: ast.AST, line: int, depth: int = 0) -> tuple[str | None, bool] | None:
        """If `node` is a Warp Module (wp.get_module(...), a name bound to one, k.module): (target, resolved)."""
        if isinstance(node, ast.Call) and self._api(node.func) == "get_module":
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            if arg is None:
                return None, False
            if _const_str(arg) is not None:
                return _const_str(arg), True
            if isinstance(arg, ast.Name) and arg.id == "__name__":
                return self.modname, True
            if isinstance(arg, ast.Name) and arg.id in self.str_consts:
                return self.str_consts[arg.id], True
            return _text(arg), False
        if isinstance(node, ast.Name) and depth < 3:
            v = self._expr_of(node.id, line)
            if v is not None:
                return self._get_module_target(v, getattr(v, "lineno", line), depth + 1)
        if isinstance(node, ast.Attribute) and node.attr == "module" and self.imports_warp:
            return _text(node), False
        return None

    def _resolve_kernel(self, node: ast.AST, line: int, depth: int = 0) -> tuple[str | None, str | None]:
        """(kernel name, factory function) for a launch's kernel expression."""
        if depth > 5:
            return None, None
        if isinstance(node, ast.Name):
            v = self._lookup(node.id, line)
            if v is None:
                return node.id, None  # a module-level def or an imported kernel
            if isinstance(v, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return v.name, None
            if isinstance(v, (ast.Call, ast.Name, ast.Attribute)):
                return self._resolve_kernel(v, getattr(v, "lineno", line), depth + 1)
            return None, None
        if isinstance(node, ast.Attribute):
            return node.attr, None
        if isinstance(node, ast.Call):
            api = self._api(node.func)
            if api == "overload" and node.args:
                return self._resolve_kernel(node.args[0], line, depth + 1)
            if api == "kernel" and node.args:
                return _last_ident(node.args[0]), None
            if isinstance(node.func, ast.Call) and self._api(node.func.func) == "kernel" and node.args:
                return _last_ident(node.args[0]), None
            return None, _last_ident(node.func)
        return None, None

    # ---- scopes ------------------------------------------------------------------------------------------------

    def _visit_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        kind: str | None = None
        call: ast.Call | None = None
        overload = False
        atexit_dec = False
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            api = self._api(target)
            if api in ("kernel", "func"):
                kind, call = api, (dec if isinstance(dec, ast.Call) else None)
            elif api == "overload":
                overload = True
            elif self._q(target) == "atexit.register":
                atexit_dec = True
        self._bind(node.name, node.lineno, node)
        self.decorators.update(id(d) for d in node.decorator_list if isinstance(d, ast.Call))
        if overload:
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            self.overloads.append(
                OverloadFact(
                    **self._where(node),
                    kernel=node.name,
                    kernel_text=node.name,
                    types=", ".join(f"{a.arg}: {_text(a.annotation)}" for a in args if a.annotation is not None),
                    form="decorator",
                )
            )
        elif kind:
            self._record_def(node, node.name, kind, call, "decorator", node)
        for dec in node.decorator_list:
            self.visit(dec)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        frame = _Frame(
            "function",
            node.name,
            self._child_qualname(node.name),
            node,
            warp_kind=None if overload else kind,
            atexit=atexit_dec,
        )
        self.frames.append(frame)
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            self._bind(a.arg, node.lineno, _UNKNOWN)
        for a in (node.args.vararg, node.args.kwarg):
            if a is not None:
                self._bind(a.arg, node.lineno, _UNKNOWN)
        for stmt in node.body:
            self.visit(stmt)
        self.frames.pop()

    visit_FunctionDef = _visit_def
    visit_AsyncFunctionDef = _visit_def

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name, node.lineno, node)
        for n in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(n)
        self.frames.append(_Frame("class", node.name, self._child_qualname(node.name), node))
        for stmt in node.body:
            self.visit(stmt)
        self.frames.pop()

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        q = self._q(test) if isinstance(test, (ast.Name, ast.Attribute)) else None
        if q and q.endswith("TYPE_CHECKING"):
            self.type_checking += 1
            for s in node.body:
                self.visit(s)
            self.type_checking -= 1
            for s in node.orelse:
                self.visit(s)
            return
        if _is_main_guard(test):
            self.has_main_guard = True
        self.generic_visit(node)

    def visit_Try(self, node: ast.AST) -> None:
        swallow = any(_trivial(h.body) for h in node.handlers)
        self.swallow += swallow
        for s in node.body:
            self.visit(s)
        self.swallow -= swallow
        for part in (node.handlers, node.orelse, node.finalbody):
            for s in part:
                self.visit(s)

    visit_TryStar = visit_Try

    def _leaf(self, node: ast.AST) -> None:  # nothing to find below these
        pass

    visit_Name = visit_Constant = visit_Pass = visit_Load = visit_Store = visit_Del = _leaf

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self.discarded.add(id(node.value))
        self.generic_visit(node)

    # ---- imports -----------------------------------------------------------------------------------------------

    def _import_fact(self, node: ast.AST, module: str, names: list[str], level: int = 0) -> None:
        self.imports.append(
            ImportFact(
                **self._where(node),
                module=module,
                names=names,
                level=level,
                project_module=self.project.resolve(module, self.rel),
                type_checking=self.type_checking > 0,
            )
        )

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name == "warp" or a.name.startswith("warp."):
                self.imports_warp = True
            self._import_fact(node, a.name, [a.asname or a.name.split(".")[0]])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module, node.level)
        if node.level == 0 and (base == "warp" or base.startswith("warp.")):
            self.imports_warp = True
        plain: list[str] = []
        for a in node.names:
            sub = f"{base}.{a.name}" if base else a.name
            if a.name != "*" and self.project.resolve(sub, self.rel) is not None:
                self._import_fact(node, sub, [a.asname or a.name], node.level)
            else:
                plain.append(a.asname or a.name)
        if plain:
            self._import_fact(node, base, plain, node.level)

    # ---- assignments -------------------------------------------------------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._bind_target(t, node.value, node.lineno)
        if isinstance(node.value, ast.Call) and self._api(node.value.func) == "Tape":
            self.handled.add(id(node.value))
            for t in node.targets:
                var = _text(t)
                self.tape_vars.add(var)
                self.tapes.append(TapeFact(**self._where(node), var=var))
        for t in node.targets:
            self._assign_effects(t, node.value, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, node.lineno)
            self._assign_effects(node.target, node.value, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._bind_target(node.target, None, node.lineno)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        fr = self._warp_body()
        fact = self._loop(node, fr) if fr is not None else None
        self._bind_target(node.target, None, node.lineno)
        targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        loop_line = fact.line if fact is not None else None
        self.loop_stack.append(_LoopEntry(targets, node.iter, node.lineno, self._fn_frame(), loop_line))
        try:
            self.generic_visit(node)
        finally:
            self.loop_stack.pop()

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> None:
        self.loop_stack.append(_LoopEntry(set(), None, node.lineno, self._fn_frame()))
        try:
            self.generic_visit(node)
        finally:
            self.loop_stack.pop()

    def _visit_comprehension(self, node: ast.AST) -> None:
        pushed = 0
        try:
            for gen in node.generators:
                self.visit(gen.iter)
                targets = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
                self.loop_stack.append(_LoopEntry(targets, gen.iter, getattr(node, "lineno", 0), self._fn_frame()))
                pushed += 1
                self.visit(gen.target)
                for cond in gen.ifs:
                    self.visit(cond)
            for name in ("key", "value", "elt"):
                part = getattr(node, name, None)
                if part is not None:
                    self.visit(part)
        finally:
            del self.loop_stack[len(self.loop_stack) - pushed :]

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension

    def _assign_effects(self, target: ast.AST, value: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute) and self._is_warp_config(target.value):
            self._config_set(target.attr, value, node, _text(target), "config")
        elif isinstance(target, ast.Subscript):
            key = _const_str(target.slice)
            base = target.value
            if key is None:
                return
            if self._q(base) == "os.environ":
                self._env_set(key, value, node, "env", _text(target))
            elif isinstance(base, ast.Attribute) and base.attr == "options":
                gm = self._get_module_target(base.value, node.lineno)
                if gm is not None:
                    self._module_options_fact(node, "get_module_options", {key: _text(value)}, None, gm)

    def _config_set(self, name: str, value: ast.AST, node: ast.AST, api: str, via: str) -> None:
        w = self._where(node)
        text = _text(value)
        self.config_sets.append(
            ConfigSetFact(**w, name=name, value=text, copied_at_module_creation=name in CREATION_OPTIONS)
        )
        if _is_setting(name):
            self.settings.append(SettingFact(**w, name=name, value=text, via="config"))
        if name == "cache_kernels" and isinstance(value, ast.Constant) and value.value in (False, 0):
            self.cache_ops.append(CacheOp(**w, kind="cache_kernels_false", api=api, value=text, via=via))
        elif name == "kernel_cache_dir":
            self._cache_dir(w, value, node, api, via, "kernel_cache_dir")

    def _cache_dir(self, w: dict, value: ast.AST, node: ast.AST, api: str, via: str, kind: str) -> None:
        temp, stamp, _texts, names = self._taint(value, getattr(node, "lineno", 0))
        self.cache_dir_names |= names
        self.cache_ops.append(
            CacheOp(**w, kind=kind, api=api, value=_text(value), via=via, temporary=temp, timestamped=stamp)
        )

    def _env_set(self, key: str, value: ast.AST | None, node: ast.AST, via: str, api: str) -> None:
        w = self._where(node)
        if key == "WARP_CACHE_PATH" and value is not None:
            self._cache_dir(w, value, node, api, via, "kernel_cache_dir")
        elif key == "CUDA_CACHE_PATH" and value is not None:
            self._cache_dir(w, value, node, api, via, "cuda_cache_path")
        elif key == "CUDA_CACHE_DISABLE":
            self.cache_ops.append(
                CacheOp(**w, kind="cuda_cache_disable", api=api, value=_text(value) if value else None, via=via)
            )

    def _module_options_fact(
        self,
        node: ast.AST,
        api: str,
        options: dict[str, str],
        options_text: str | None,
        target: tuple[str | None, bool],
        module_arg: str | None = None,
        is_get_module: bool = False,
    ) -> None:
        w = self._where(node)
        self.module_options.append(
            ModuleOptionsFact(
                **w,
                api=api,
                options=options,
                options_text=options_text,
                module_arg=module_arg,
                module_arg_is_get_module=is_get_module,
                target=target[0],
                target_resolved=target[1],
            )
        )
        for k, v in options.items():
            if _is_setting(k):
                self.settings.append(SettingFact(**w, name=k, value=v, via="module_options", target=target[0]))

    def visit_With(self, node: ast.With) -> None:
        opened: list[TapeFact] = []
        for item in node.items:
            ce = item.context_expr
            is_call = isinstance(ce, ast.Call) and self._api(ce.func) == "Tape"
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, ce, node.lineno)
            if is_call or (not isinstance(ce, ast.Call) and _text(ce) in self.tape_vars):
                if is_call:
                    self.handled.add(id(ce))
                var = _text(item.optional_vars) if item.optional_vars is not None else (None if is_call else _text(ce))
                if var:
                    self.tape_vars.add(var)
                tf = TapeFact(**self._where(node), var=var, with_block=True, end_line=node.end_lineno)
                self.tapes.append(tf)
                opened.append(tf)
        for item in node.items:
            self.visit(item)
        self.active_tapes.extend(opened)
        for s in node.body:
            self.visit(s)
        if opened:
            del self.active_tapes[-len(opened) :]

    visit_AsyncWith = visit_With

    def visit_Dict(self, node: ast.Dict) -> None:
        if id(node) not in self.handled:
            for k, v in zip(node.keys, node.values, strict=False):
                key = _const_str(k)
                if key in _ENV_KEYS:
                    self._env_set(key, v, node, "env_dict", _text(k))
        self.generic_visit(node)

    # ---- calls -------------------------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        api = self._api(node.func)
        fq = self._q(node.func)
        if api in ("launch", "launch_tiled"):
            self._launch(node, api)
        elif api == "overload" and node.args:
            self._overload_call(node)
        elif api in ("kernel", "func") and node.args:
            fn = node.args[0]
            self._kernel_call(node, api, None, fn)
        elif isinstance(node.func, ast.Call) and self._api(node.func.func) in ("kernel", "func") and node.args:
            self._kernel_call(node, self._api(node.func.func), node.func, node.args[0])
        elif api == "set_module_options":
            self._set_module_options(node)
        elif api in ("force_load", "load_module"):
            self._load_call(node, api)
        elif api in ("clear_kernel_cache", "clear_lto_cache"):
            self.cache_ops.append(CacheOp(**self._where(node), kind=api, api=_text(node.func), via="call"))
        elif api == "init_kernel_cache" and node.args:
            self._cache_dir(
                self._where(node), node.args[0], node, _text(node.func), "init_kernel_cache", "kernel_cache_dir"
            )
        elif api == "Tape" and id(node) not in self.handled:
            self.tapes.append(TapeFact(**self._where(node)))
        elif api and (api == "tile" or api.startswith("tile_")):
            fr = self._warp_body()
            if fr is not None:
                self.tile_ops.append(
                    TileOpFact(
                        **self._where(node), op=api, kernel=fr.name, kind=fr.warp_kind, mathdx=api in MATHDX_TILE_OPS
                    )
                )
        if api is None:
            self._other_call(node, fq)
            self._call_site(node, fq)
        name = _last_ident(node.func)
        if name:
            self.calls[self._current_qualname()].add(name)
            if api is None:
                for t in self.active_tapes:
                    if name not in t.calls:
                        t.calls.append(name)
        bump = fq in ("atexit.register", "weakref.finalize")
        self.atexit += bump
        self.generic_visit(node)
        self.atexit -= bump

    def _other_call(self, node: ast.Call, fq: str | None) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr" and "setattr" not in self.names.map:
            if len(node.args) >= 3 and self._is_warp_config(node.args[0]) and _const_str(node.args[1]):
                self._config_set(_const_str(node.args[1]), node.args[2], node, _text(func), "setattr")
            return
        if fq == "shutil.rmtree" and node.args:
            self._rmtree(node, node.args[0], self._in_atexit())
        elif fq == "weakref.finalize" and len(node.args) >= 3 and self._q(node.args[1]) == "shutil.rmtree":
            self._rmtree(node, node.args[2], True)
        elif len(node.args) >= 2 and self._q(node.args[0]) == "shutil.rmtree":  # atexit.register / partial
            self._rmtree(node, node.args[1], fq == "atexit.register" or self._in_atexit())
        if fq in ("os.environ.setdefault", "os.putenv") or (isinstance(func, ast.Attribute) and func.attr == "setenv"):
            key = _const_str(node.args[0]) if node.args else None
            if key in _ENV_KEYS:
                self._env_set(key, node.args[1] if len(node.args) > 1 else None, node, "env", _text(func))
            return
        if not isinstance(func, ast.Attribute):
            return
        if func.attr == "update":
            if self._q(func.value) == "os.environ":
                for a in node.args:
                    if isinstance(a, ast.Dict):
                        self.handled.add(id(a))
                        for k, v in zip(a.keys, a.values, strict=False):
                            if _const_str(k) in _ENV_KEYS:
                                self._env_set(_const_str(k), v, node, "env", _text(func))
                for kw in node.keywords:
                    if kw.arg in _ENV_KEYS:
                        self._env_set(kw.arg, kw.value, node, "env", _text(func))
            elif isinstance(func.value, ast.Attribute) and func.value.attr == "options":
                gm = self._get_module_target(func.value.value, node.lineno)
                if gm is not None:
                    options, rest = self._dict_of(node.args[0], node.lineno) if node.args else ({}, None)
                    options.update({kw.arg: _text(kw.value) for kw in node.keywords if kw.arg})
                    for a in node.args:
                        self.handled.add(id(a))
                    self._module_options_fact(node, "get_module_options", options, rest, gm)
        elif func.attr == "unload":
            gm = self._get_module_target(func.value, node.lineno)
            if gm is not None or self.imports_warp:
                self.cache_ops.append(
                    CacheOp(
                        **self._where(node),
                        kind="unload",
                        api=_text(func),
                        value=_text(func.value),
                        target=gm[0] if gm and gm[1] else None,
                        via="call",
                        certain=gm is not None,
                    )
                )
        elif func.attr == "backward":
            self.backward_calls.append((_text(func.value), self._where(node)))

    def _call_site(self, node: ast.Call, fq: str | None) -> None:
        """Keep a call that may be of a kernel factory (a project function), with how fixed its arguments are."""
        if self._warp_body() is not None:
            return
        func = node.func
        name = _last_ident(func)
        if name is None:
            return
        # only what can name a project function: a def of this file (bare or self./cls. method), or a dotted name
        # whose module part is a project module; everything else (numpy, methods of objects) is skipped cheaply
        fq = fq or name
        if isinstance(func, ast.Name) and name not in self.names.map:
            if not isinstance(self._lookup(name, node.lineno), (ast.FunctionDef, ast.AsyncFunctionDef)):
                return
            local = True
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            if not any(
                fr.kind == "class" and isinstance((fr.assigns.get(name) or [(0, None)])[-1][1], ast.FunctionDef)
                for fr in self.frames
            ):
                return
            local = True
        elif "." in fq and self.project.resolve(fq.rpartition(".")[0], self.rel) is not None:
            local = False
        else:
            return
        args: list[str] = []
        runtime: list[str] = []
        for a in node.args:
            args.append(_text(a))
            if not self._fixed_expr(a, node.lineno):
                runtime.append(_text(a))
        for kw in node.keywords:
            text = f"{kw.arg}={_text(kw.value)}" if kw.arg else f"**{_text(kw.value)}"
            args.append(text)
            if not self._fixed_expr(kw.value, node.lineno):
                runtime.append(text)
        fn = self._fn_frame()
        self.call_sites.append(
            _CallSite(
                name=name,
                qual=fq,
                local=local,
                where=self._where(node),
                callee=_text(func),
                args=args,
                runtime_args=runtime,
                in_loop=any(e.frame is fn for e in self.loop_stack),
                decorator=id(node) in self.decorators,
            )
        )

    def _fixed_expr(self, node: ast.AST | None, line: int, depth: int = 0) -> bool:
        """Whether an expression's value is fixed by the source: literals, module-level constants and what they are
        built from, imported names, functions, loop variables of loops over such values. Parameters, values read
        from sys.argv / os.environ / input(), and calls of anything but a few pure builtins, math and Warp are not."""
        if node is None:
            return True
        if depth > 6:
            return False

        def rec(n: ast.AST | None) -> bool:
            return self._fixed_expr(n, line, depth + 1)

        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return all(rec(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(rec(k) for k in node.keys if k is not None) and all(rec(v) for v in node.values)
        if isinstance(node, ast.Starred):
            return rec(node.value)
        if isinstance(node, ast.JoinedStr):
            return all(rec(v) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return rec(node.value)
        if isinstance(node, ast.UnaryOp):
            return rec(node.operand)
        if isinstance(node, ast.BinOp):
            return rec(node.left) and rec(node.right)
        if isinstance(node, ast.BoolOp):
            return all(rec(v) for v in node.values)
        if isinstance(node, ast.Compare):
            return rec(node.left) and all(rec(c) for c in node.comparators)
        if isinstance(node, ast.IfExp):
            return rec(node.test) and rec(node.body) and rec(node.orelse)
        if isinstance(node, ast.Subscript):
            return rec(node.value) and rec(node.slice)
        if isinstance(node, ast.Slice):
            return rec(node.lower) and rec(node.upper) and rec(node.step)
        if isinstance(node, ast.Lambda):
            return True
        if isinstance(node, (ast.Name, ast.Attribute)):
            q = self._q(node) or ""
            if any(q == r or q.startswith(r + ".") for r in _RUNTIME_NAMES):
                return False
        if isinstance(node, ast.Name):
            for e in reversed(self.loop_stack):
                if node.id in e.targets:
                    if e.fixed is None:
                        e.fixed = False  # a loop over itself is not fixed
                        e.fixed = e.iter_node is not None and self._fixed_expr(e.iter_node, e.line, depth + 1)
                    return e.fixed
            v = self._lookup(node.id, line)
            if v is None:
                return True  # imported, builtin, or a module global bound elsewhere
            if isinstance(v, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return True
            if isinstance(v, ast.AST):
                return self._fixed_expr(v, getattr(v, "lineno", line), depth + 1)
            return False  # a parameter, an unpacked or loop-bound name
        if isinstance(node, ast.Attribute):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in ("self", "cls"):
                return False
            if isinstance(root, ast.Name) and root.id in self.names.map:
                return True  # an attribute of an imported module (math.pi, wp.float32, cfg.GAIN)
            return rec(node.value)
        if isinstance(node, ast.Call):
            func = node.func
            q = self._q(func) or ""
            pure = (
                self._api(func) is not None
                or q.startswith("math.")
                or (isinstance(func, ast.Name) and func.id in _PURE_CALLS and self._lookup(func.id, line) is None)
            )
            return pure and all(rec(a) for a in node.args) and all(rec(k.value) for k in node.keywords)
        return False

    def _rmtree(self, node: ast.Call, arg: ast.AST, atexit: bool) -> None:
        _t, _s, texts, names = self._taint(arg, node.lineno)
        self.rmtree.append(_RmtreeCandidate(self._where(node), arg, atexit, " ".join(texts), names))

    def _launch(self, node: ast.Call, api: str) -> None:
        args = self._call_args(node, ("kernel", "dim"))
        kernel = args.get("kernel")
        name, factory = self._resolve_kernel(kernel, node.lineno) if kernel is not None else (None, None)
        bd = args.get("block_dim")
        block_dim: int | str | None = None
        if bd is not None:
            is_int = isinstance(bd, ast.Constant) and isinstance(bd.value, int) and not isinstance(bd.value, bool)
            block_dim = bd.value if is_int else _text(bd)
        fact = LaunchFact(
            **self._where(node),
            api=api,
            kernel=_text(kernel),
            kernel_name=name,
            kernel_factory=factory,
            dim=_text(args["dim"]) if "dim" in args else None,
            block_dim=block_dim,
            device=_text(args["device"]) if "device" in args else None,
            adjoint=_is_true(args.get("adjoint")),
            kwargs={k.arg: _text(k.value) for k in node.keywords if k.arg},
        )
        self.launches.append(fact)
        label = name or fact.kernel
        for t in self.active_tapes:
            if label not in t.launched_kernels:
                t.launched_kernels.append(label)

    def _overload_call(self, node: ast.Call) -> None:
        types = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg), None)
        kname, _ = self._resolve_kernel(node.args[0], node.lineno)
        self.overloads.append(
            OverloadFact(
                **self._where(node),
                kernel=kname or _text(node.args[0]),
                kernel_text=_text(node.args[0]),
                types=_text(types),
                form="call",
                retained=id(node) not in self.discarded,
            )
        )

    def _kernel_call(self, node: ast.Call, kind: str, deco: ast.Call | None, fn: ast.AST) -> None:
        """`k = wp.kernel(f)` or `wp.kernel(module=...)(f)`."""
        fdef = None
        if isinstance(fn, ast.Name):
            v = self._lookup(fn.id, node.lineno)
            if isinstance(v, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fdef = v
        name = fdef.name if fdef else (_last_ident(fn) or _text(fn))
        self._record_def(fdef, name, kind, deco if deco is not None else node, "call", node)

    def _module_arg(self, node: ast.AST) -> tuple[str | None, bool, int | None]:
        """(module name, whether it came from a factory parameter's default, the line of that default)."""
        s = _const_str(node)
        if s is not None:
            return s, False, None
        if isinstance(node, ast.Name):
            if node.id == "__name__":
                return self.modname, False, None
            for fr in reversed(self.frames):
                if fr.kind != "function" or not isinstance(fr.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                a = fr.node.args
                positional = a.posonlyargs + a.args
                pdefaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
                pairs = list(zip(positional, pdefaults, strict=False)) + list(
                    zip(a.kwonlyargs, a.kw_defaults, strict=False)
                )
                for arg, default in pairs:
                    if arg.arg == node.id:
                        d = _const_str(default)
                        return (d, True, default.lineno) if d is not None else (None, False, None)
            if node.id in self.str_consts:
                return self.str_consts[node.id], False, None
        return None, False, None

    def _is_generic(self, ann: ast.AST | None) -> bool:
        if ann is None:
            return False
        if _const_str(ann) is not None:
            try:
                ann = ast.parse(_const_str(ann), mode="eval").body
            except SyntaxError:
                return False
        for n in ast.walk(ann):
            if isinstance(n, (ast.Name, ast.Attribute)) and self._q(n) in _GENERIC:
                return True
        return False

    def _record_def(
        self,
        fdef: ast.FunctionDef | ast.AsyncFunctionDef | None,
        name: str,
        kind: str,
        call: ast.Call | None,
        form: str,
        at: ast.AST,
    ) -> None:
        w = self._where(at)
        fn = self._fn_frame()
        kw = {k.arg: k.value for k in call.keywords if k.arg} if call is not None else {}
        module_node = kw.get("module")
        module_arg, from_default, default_line = (
            self._module_arg(module_node) if module_node is not None else (None, False, None)
        )
        if module_node is None:
            warp_module: str | None = self.modname
        elif module_arg is not None and module_arg != "unique":
            warp_module = module_arg
        else:
            warp_module = None
        generic_params: list[str] = []
        if fdef is not None:
            a = fdef.args
            generic_params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if self._is_generic(p.annotation)]
        eb = kw.get("enable_backward")
        mo = kw.get("module_options")
        mo_dict, _ = self._dict_of(mo, w["line"]) if mo is not None else ({}, None)
        fact = KernelDef(
            **w,
            kind=kind,
            name=name,
            qualname=self._child_qualname(name) if fdef is not None else name,
            python_module=self.modname,
            form=form,
            nested=fn is not None,
            enclosing_function=fn.qualname if fn else None,
            module_arg=module_arg,
            module_arg_text=_text(module_node) if module_node is not None else None,
            module_from_default=from_default,
            module_default_line=default_line,
            warp_module=warp_module,
            generic=bool(generic_params),
            generic_params=generic_params,
            enable_backward=eb.value if isinstance(eb, ast.Constant) and isinstance(eb.value, bool) else None,
            enable_backward_text=_text(eb) if eb is not None else None,
            module_options=mo is not None,
            module_options_dict=mo_dict,
            decorator_kwargs={k: _text(v) for k, v in kw.items()},
        )
        (self.kernels if kind == "kernel" else self.functions).append(fact)
        if eb is not None:
            self.settings.append(
                SettingFact(**w, name="enable_backward", value=_text(eb), via="kernel_kwarg", target=name)
            )
        for k, v in mo_dict.items():
            if _is_setting(k):
                self.settings.append(SettingFact(**w, name=k, value=v, via="kernel_kwarg", target=name))

    def _set_module_options(self, node: ast.Call) -> None:
        opts = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "options"), None)
        mod = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "module"), None)
        options, rest = self._dict_of(opts, node.lineno)
        if opts is not None:
            self.handled.add(id(opts))
        if mod is None:
            target: tuple[str | None, bool] = (self.modname, True)
            is_gm = False
        else:
            target, is_gm = self._python_module_target(mod, node.lineno)
        self._module_options_fact(
            node, "set_module_options", options, rest, target, _text(mod) if mod is not None else None, is_gm
        )

    def _python_module_target(self, mod: ast.AST, line: int, depth: int = 0) -> tuple[tuple[str | None, bool], bool]:
        """set_module_options(module=...): ((target, resolved), passed a wp.get_module(...) instead)."""
        name = _const_str(mod)
        if name is not None:  # module="pkg.name": Warp looks the module up by that name (1.10.1 rejects a string)
            return (name, True), False
        if isinstance(mod, ast.Call):
            gm = self._get_module_target(mod, line)
            if gm is not None:
                return gm, True
            if self._q(mod.func) == "importlib.import_module" and _const_str(mod.args[0] if mod.args else None):
                name = _const_str(mod.args[0])
                return (self.project.resolve(name, self.rel) or name, True), False
        if isinstance(mod, ast.Subscript) and self._q(mod.value) == "sys.modules":
            if isinstance(mod.slice, ast.Name) and mod.slice.id == "__name__":
                return (self.modname, True), False
            name = _const_str(mod.slice)
            if name:
                return (self.project.resolve(name, self.rel) or name, True), False
        root = mod
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.names.map:
            q = self._q(mod)
            resolved = self.project.resolve(q, self.rel) if q else None
            if resolved:
                return (resolved, True), False
        if isinstance(mod, ast.Name) and depth < 3:
            v = self._expr_of(mod.id, line)
            if v is not None:
                return self._python_module_target(v, getattr(v, "lineno", line), depth + 1)
        return (_text(mod), False), False

    def _load_call(self, node: ast.Call, api: str) -> None:
        args = self._call_args(node, _FORCE_LOAD_ARGS if api == "force_load" else _LOAD_MODULE_ARGS)
        mods = args.get("modules" if api == "force_load" else "module")
        mw = args.get("max_workers")
        max_workers: int | str | None = None
        if mw is not None:
            is_int = isinstance(mw, ast.Constant) and isinstance(mw.value, int) and not isinstance(mw.value, bool)
            max_workers = mw.value if is_int else _text(mw)
        device = args.get("device")
        self.load_calls.append(
            LoadCallFact(
                **self._where(node),
                api=api,
                modules_none=api == "force_load"
                and (mods is None or (isinstance(mods, ast.Constant) and mods.value is None)),
                modules=_text(mods) if mods is not None else None,
                modules_list=[_text(e) for e in mods.elts] if isinstance(mods, (ast.List, ast.Tuple)) else None,
                max_workers=max_workers,
                device=_text(device) if device is not None else None,
                cpu_possible=self._cpu_possible(device, node.lineno),
                block_dim=_text(args["block_dim"]) if "block_dim" in args else None,
                recursive=_text(args["recursive"]) if "recursive" in args else None,
                swallowed=self.swallow > 0,
                kwargs={k.arg: _text(k.value) for k in node.keywords if k.arg},
            )
        )

    def _cpu_possible(self, node: ast.AST | None, line: int, depth: int = 0) -> bool:
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return True
        s = _const_str(node)
        if s is not None:
            return not s.startswith("cuda")
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return any(self._cpu_possible(e, line, depth + 1) for e in node.elts) if node.elts else True
        if isinstance(node, ast.Call):
            api = self._api(node.func)
            if api in ("get_cuda_device", "get_cuda_devices"):
                return False
            if api == "get_device" and node.args:
                return self._cpu_possible(node.args[0], line, depth + 1)
        if isinstance(node, ast.Name) and depth < 3:
            v = self._expr_of(node.id, line)
            if v is not None:
                return self._cpu_possible(v, getattr(v, "lineno", line), depth + 1)
        return True

    # ---- kernel bodies -----------------------------------------------------------------------------------------

    def _const_int(self, node: ast.AST) -> tuple[int | None, bool, bool]:
        """(value, static used, from a module constant) of a compile-time integer expression."""
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value, False, False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v, s, c = self._const_int(node.operand)
            return (-v if v is not None else None), s, c
        if isinstance(node, ast.Call) and self._api(node.func) in ("static", "constant") and len(node.args) == 1:
            v, _s, c = self._const_int(node.args[0])
            return v, self._api(node.func) == "static", c
        if isinstance(node, ast.Name) and node.id in self.int_consts:
            return self.int_consts[node.id], False, True
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            a, sa, ca = self._const_int(node.left)
            b, sb, cb = self._const_int(node.right)
            if a is None or b is None:
                return None, False, False
            if isinstance(node.op, ast.Add):
                v = a + b
            elif isinstance(node.op, ast.Sub):
                v = a - b
            elif isinstance(node.op, ast.Mult):
                v = a * b
            else:
                if b == 0:
                    return None, False, False
                v = a // b
            return v, sa or sb, ca or cb
        return None, False, False

    def _loop(self, node: ast.For, fr: _Frame) -> LoopFact | None:
        it = node.iter
        static = False
        if isinstance(it, ast.Call) and self._api(it.func) == "static" and len(it.args) == 1:
            it, static = it.args[0], True
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
            return None
        if not it.args or len(it.args) > 3 or it.keywords:
            return None
        vals = []
        from_const = False
        for a in it.args:
            v, s, c = self._const_int(a)
            if v is None:
                return None
            vals.append(v)
            static = static or s
            from_const = from_const or c
        if len(vals) == 3 and vals[2] == 0:
            return None
        around = [e for e in self.loop_stack if e.frame is fr]
        fact = LoopFact(
            **self._where(node),
            kernel=fr.name,
            kind=fr.warp_kind,
            bound=len(range(*vals)),
            bound_text=_text(node.iter),
            static=static,
            from_constant=from_const,
            outer_loop_lines=[e.loop_line for e in around if e.loop_line is not None],
            forced_unroll=self._static_on_loop_var(node, {t for e in around for t in e.targets}),
        )
        self.loops.append(fact)
        return fact

    def _static_on_loop_var(self, loop: ast.For, outer: set[str]) -> bool:
        """Whether a wp.static(...) inside `loop` reads a loop variable (this loop's, an enclosing or a nested one's).

        Warp evaluates other wp.static expressions before code generation and replaces them by their value; one that
        reads a loop variable stays, and a loop holding such a call is unrolled whatever max_unroll says.
        """

        def walk(n: ast.AST, active: frozenset[str]) -> bool:
            if isinstance(n, ast.For):
                active = active | {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
            if isinstance(n, ast.Call) and self._api(n.func) == "static":
                expr = n.args[0] if n.args else (n.keywords[0].value if n.keywords else None)
                if expr is not None and any(isinstance(x, ast.Name) and x.id in active for x in ast.walk(expr)):
                    return True
            return any(walk(c, active) for c in ast.iter_child_nodes(n))

        return walk(loop, frozenset(outer))

    # ---- end of file -------------------------------------------------------------------------------------------

    def _finish(self) -> None:
        for recv, w in self.backward_calls:
            if recv in self.tape_vars or "tape" in recv.lower():
                self.tape_backward_calls.append(TapeBackwardCall(**w, var=recv))
                for t in self.tapes:
                    if t.var == recv and w["line"] not in t.backward_lines:
                        t.backward_lines.append(w["line"])
        for c in self.rmtree:
            mentions = "cache" in c.reach_text.lower() or bool(c.reach_names & self.cache_dir_names)
            if mentions or c.atexit:
                self.cache_ops.append(
                    CacheOp(
                        **c.where,
                        kind="cache_dir_removed",
                        api="shutil.rmtree",
                        value=_text(c.arg),
                        via="atexit" if c.atexit else "call",
                        mentions_cache=mentions,
                        atexit=c.atexit,
                    )
                )
        for lst in (self.cache_ops, self.settings, self.tapes):
            lst.sort(key=lambda f: f.line)


# ---- whole project ----------------------------------------------------------------------------------------------


_RELEVANT = (b"warp", b"CUDA_CACHE", b"rmtree")


def _parse(path: Path, rel: str) -> tuple[ast.Module | None, str | None, bytes]:
    """(tree, error, source bytes)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}", b""
    try:
        return ast.parse(data, filename=rel), None, data
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return None, f"{type(exc).__name__}: {exc.msg}{where}", b""
    except Exception as exc:  # noqa: BLE001 - null bytes, bad encodings, recursion: never stop the scan
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": "), b""


def _scan_files(root: Path, rels: list[str], project: _Project, facts: ScanFacts) -> list[_FileScan]:
    scans: list[_FileScan] = []
    for rel in rels:  # one tree alive at a time: keeping them all makes the garbage collector crawl
        tree, err, data = _parse(root / rel, rel)
        if tree is None:
            facts.parse_errors.append(ParseError(file=rel, reason=err or "unknown error"))
            continue
        fs = _FileScan(rel, tree, project, data)
        try:
            fs.run() if any(k in data for k in _RELEVANT) else fs.run_light()
        except RecursionError:
            facts.parse_errors.append(
                ParseError(file=rel, reason="RecursionError: source nested too deeply to analyse")
            )
            continue
        finally:
            fs.release()
        scans.append(fs)
    return scans


def scan(root: Path | str, *, max_files: int = 5000, max_bytes: int = 2_000_000) -> ScanFacts:
    """Scan the Python sources under `root` (AST only; nothing is imported or executed)."""
    root = Path(root)
    if root.is_file():
        base = root.parent
        rels = [root.name] if root.suffix == ".py" else []
        skipped: list[SkippedFile] = []
        truncated = False
        root = base
    elif root.is_dir():
        rels, skipped, truncated = _collect_files(root, max_files, max_bytes)
    else:
        raise UsageError(f"cannot scan {root}: no such directory")
    facts = ScanFacts(root=str(root.resolve()), truncated=truncated, skipped_files=skipped)
    project = _Project(root.resolve().name, rels)
    with warnings.catch_warnings():  # SyntaxWarnings of user code are not ours to print
        warnings.simplefilter("ignore")
        scans = _scan_files(root, rels, project, facts)
    facts.files_scanned = len(scans)
    for fs in scans:
        name, is_pkg = project.name_of[fs.rel]
        is_root_level = "/" not in fs.rel
        dirname = fs.rel.rpartition("/")[0]
        in_package = (f"{dirname}/__init__.py" in project.name_of) if dirname else False
        main_alias = (
            "__main__"
            if fs.rel.endswith("__main__.py") or is_root_level or (fs.has_main_guard and not in_package and not is_pkg)
            else None
        )
        facts.modules.append(
            ModuleInfo(
                file=fs.rel,
                name=name,
                main_alias=main_alias,
                is_package=is_pkg,
                has_main_guard=fs.has_main_guard,
                imports_warp=fs.imports_warp,
            )
        )
        for attr in FACT_LISTS:
            getattr(facts, attr).extend(getattr(fs, attr))
    _link(facts, scans, project)
    return facts


def _link(facts: ScanFacts, scans: list[_FileScan], project: _Project) -> None:
    facts.uses_warp = any(m.imports_warp for m in facts.modules)
    mod_of_file = {m.file: m for m in facts.modules}

    # kernels per module
    for k in facts.kernels:
        facts.python_modules_with_kernels.setdefault(k.python_module, k.file)
        info = mod_of_file[k.file]
        info.kernel_count += 1
        info.module_scope_kernel_count += not k.nested
    for f in facts.functions:
        mod_of_file[f.file].function_count += 1
    for la in facts.launches:
        mod_of_file[la.file].launch_count += 1
    kernel_mods = set(facts.python_modules_with_kernels)
    import_time_mods = {k.python_module for k in facts.kernels if not k.nested}
    warp_mods = {k.warp_module for k in facts.kernels if k.warp_module}
    main_has_kernels = any(m.main_alias == "__main__" and m.name in warp_mods for m in facts.modules)

    # what each import executes (module-scope imports, parent packages), transitively
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in facts.imports:
        if imp.project_module and imp.scope == "module" and not imp.type_checking:
            edges[mod_of_file[imp.file].name].add(imp.project_module)
    for name in project.index:
        parent = name.rpartition(".")[0]
        while parent:
            if parent in project.index:
                edges[name].add(parent)
                break
            parent = parent.rpartition(".")[0]
    memo: dict[str, frozenset[str]] = {}

    def closure(start: str) -> frozenset[str]:
        if start not in memo:
            seen = {start}
            todo = [start]
            while todo:
                cur = todo.pop()
                for nxt in edges.get(cur, ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            memo[start] = frozenset(seen)
        return memo[start]

    def reach(start: str) -> frozenset[str]:
        return closure(start) & kernel_mods

    for imp in facts.imports:
        if imp.project_module:
            imp.defines_kernels = imp.project_module in kernel_mods
            imp.reaches_kernels = bool(reach(imp.project_module))

    # config sets after kernel imports / kernels
    imports_by_file: dict[str, list[ImportFact]] = defaultdict(list)
    for imp in facts.imports:
        imports_by_file[imp.file].append(imp)
    for cs in facts.config_sets:
        for imp in imports_by_file[cs.file]:
            if not imp.project_module or imp.type_checking or imp.line >= cs.line:
                continue
            if not (imp.scope == "module" or (cs.scope == "function" and imp.function == cs.function)):
                continue
            if imp.defines_kernels:
                cs.after_kernel_imports.append(
                    ImportRef(
                        module=imp.project_module,
                        line=imp.line,
                        kernel_modules=[imp.project_module],
                        created_at_import=imp.project_module in import_time_mods,
                    )
                )
            if imp.reaches_kernels:
                mods = sorted(reach(imp.project_module))
                cs.after_kernel_imports_transitive.append(
                    ImportRef(
                        module=imp.project_module,
                        line=imp.line,
                        kernel_modules=mods,
                        created_at_import=any(m in import_time_mods for m in mods),
                    )
                )
        cs.after_package_imports = _package_refs(
            mod_of_file[cs.file].name, project, imports_by_file, closure, kernel_mods, import_time_mods
        )
        cs.after_kernels_in_file = [
            k.name
            for k in facts.kernels
            if k.file == cs.file and not k.nested and (cs.scope == "function" or k.line < cs.line)
        ]

    # module options: ordering against launches, and whether the target has kernels
    first_launch: dict[tuple[str, str], int] = {}
    for la in facts.launches:
        key = (la.file, la.function)
        first_launch[key] = min(first_launch.get(key, la.line), la.line)
    for mo in facts.module_options:
        fl = first_launch.get((mo.file, mo.function))
        mo.before_launch_in_file = None if fl is None else mo.line < fl
        mo.target_has_kernels = bool(mo.target) and (
            mo.target in warp_mods or (mo.target == "__main__" and main_has_kernels)
        )

    # `some_kernel.module`: the Warp module of that kernel (same file first, else unique in the project)
    def module_of_kernel(expr: str, file: str) -> str | None:
        name = expr[: -len(".module")].split(".")[-1]
        cands = [k for k in facts.kernels if k.name == name]
        local = [k for k in cands if k.file == file] or cands
        mods = {k.warp_module for k in local}
        return mods.pop() if len(mods) == 1 else None

    for mo in facts.module_options:
        if not mo.target_resolved and mo.target and mo.target.endswith(".module"):
            resolved = module_of_kernel(mo.target, mo.file)
            if resolved:
                mo.target, mo.target_resolved = resolved, True
                mo.target_has_kernels = True
    for op in facts.cache_ops:
        if op.kind == "unload" and op.target is None and op.value and op.value.endswith(".module"):
            op.target = module_of_kernel(op.value, op.file)

    # launches of kernels made by a factory: name the kernel when the factory defines exactly one
    by_factory: dict[str, set[str]] = defaultdict(set)
    for k in facts.kernels:
        if k.enclosing_function:
            by_factory[k.enclosing_function.split(".")[-1]].add(k.name)
    for la in facts.launches:
        if la.kernel_name is None and la.kernel_factory and len(by_factory.get(la.kernel_factory, ())) == 1:
            la.kernel_name = next(iter(by_factory[la.kernel_factory]))

    _link_factory_calls(facts, scans, project)
    _link_option_callers(facts, scans, project)

    # tapes: kernels launched by functions called inside the with-block (matched by name, transitively)
    launched_by: dict[str, set[str]] = defaultdict(set)
    for la in facts.launches:
        launched_by[la.function.split(".")[-1]].add(la.kernel_name or la.kernel)
    calls_by: dict[str, set[str]] = defaultdict(set)
    for fs in scans:
        for qual, names in fs.calls.items():
            calls_by[qual.split(".")[-1]] |= names
    for t in facts.tapes:
        if not t.calls:
            continue
        seen: set[str] = set()
        level = list(t.calls)
        found: set[str] = set()
        for _ in range(6):
            nxt: list[str] = []
            for name in level:
                if name in seen:
                    continue
                seen.add(name)
                found |= launched_by.get(name, set())
                nxt.extend(calls_by.get(name, ()))
            level = nxt
            if not level or len(seen) > 500:
                break
        t.indirect_kernels = sorted(found)


def _link_factory_calls(facts: ScanFacts, scans: list[_FileScan], project: _Project) -> None:
    """Calls of kernel factories: a bare name (or self./cls. attribute) in the factory's own file, or a dotted name
    whose module part resolves to the factory's module. Anything else (aliases, instances) stays unmatched."""
    factories: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # last ident -> (qualname, file, module)
    for k in facts.kernels:
        if not k.enclosing_function:
            continue
        top = k.enclosing_function.split(".<locals>.")[0]
        entry = (top, k.file, k.python_module)
        last = top.split(".")[-1]
        if entry not in factories[last]:
            factories[last].append(entry)
    if not factories:
        return
    for fs in scans:
        for cs in fs.call_sites:
            for top, file, module in factories.get(cs.name, ()):
                if cs.local:
                    hit = file == fs.rel
                else:
                    modpart = cs.qual.rpartition(".")[0]
                    hit = bool(modpart) and (modpart == module or project.resolve(modpart, fs.rel) == module)
                if not hit:
                    continue
                facts.factory_calls.append(
                    FactoryCallFact(
                        **cs.where,
                        factory=top,
                        factory_file=file,
                        callee=cs.callee,
                        args=cs.args,
                        constant_args=not cs.runtime_args,
                        runtime_args=cs.runtime_args,
                        in_loop=cs.in_loop,
                        decorator=cs.decorator,
                    )
                )
    facts.factory_calls.sort(key=lambda c: (c.file, c.line))


def _link_option_callers(facts: ScanFacts, scans: list[_FileScan], project: _Project, max_depth: int = 3) -> None:
    """ModuleOptionsFact.callers: who calls the function that writes the options, and who calls that, and so on.

    Matched like factory calls; nested functions (`f.<locals>.g`) are never matched, their callers are not
    resolvable statically."""
    wanted = [mo for mo in facts.module_options if mo.scope == "function"]
    if not wanted:
        return
    module_of = {m.file: m.name for m in facts.modules}
    by_name: dict[str, list[tuple[str, _CallSite]]] = defaultdict(list)
    for fs in scans:
        for cs in fs.call_sites:
            if not cs.decorator:
                by_name[cs.name].append((fs.rel, cs))
    memo: dict[tuple[str, str], list[_CallSite]] = {}

    def direct(qual: str, file: str) -> list[_CallSite]:
        key = (qual, file)
        if key not in memo:
            out: list[_CallSite] = []
            if qual != "<module>" and "<locals>" not in qual:
                module = module_of.get(file)
                for rel, cs in by_name.get(qual.split(".")[-1], ()):
                    if cs.local:
                        hit = rel == file
                    else:
                        modpart = cs.qual.rpartition(".")[0]
                        hit = bool(modpart) and (modpart == module or project.resolve(modpart, rel) == module)
                    if hit:
                        out.append(cs)
            memo[key] = out
        return memo[key]

    for mo in wanted:
        refs: list[CallerRef] = []
        seen: set[tuple[str, str]] = set()
        level = [(mo.function, mo.file)]
        for depth in range(1, max_depth + 1):
            nxt: list[tuple[str, str]] = []
            for qual, file in level:
                if (qual, file) in seen:
                    continue
                seen.add((qual, file))
                for cs in direct(qual, file):
                    refs.append(CallerRef(**cs.where, callee=qual, callee_file=file, depth=depth))
                    if cs.where["scope"] == "function":
                        nxt.append((cs.where["function"], cs.where["file"]))
            level = nxt
            if not level or len(refs) >= 50:
                break
        mo.callers = sorted(refs[:50], key=lambda r: (r.depth, r.file, r.line))


def _package_refs(
    modname: str,
    project: _Project,
    imports_by_file: dict[str, list[ImportFact]],
    closure,
    kernel_mods: set[str],
    import_time_mods: set[str],
) -> list[ImportRef]:
    """Kernel modules that the parent packages of `modname` have imported before `modname` itself runs."""
    refs: list[ImportRef] = []
    parts = modname.split(".")
    for i in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:i])
        rel = project.index.get(parent)
        if rel is None:
            continue
        imps = [
            imp
            for imp in imports_by_file.get(rel, [])
            if imp.project_module and imp.scope == "module" and not imp.type_checking
        ]
        cutoff = next((imp.line for imp in imps if modname in closure(imp.project_module)), None)
        mods: set[str] = set(kernel_mods & {parent})
        for imp in imps:
            if cutoff is None or imp.line < cutoff:
                mods |= closure(imp.project_module) & kernel_mods
        mods.discard(modname)
        if mods:
            refs.append(
                ImportRef(
                    module=parent,
                    line=0,
                    kernel_modules=sorted(mods),
                    created_at_import=any(m in import_time_mods for m in mods),
                )
            )
    return refs
