"""The static scan's facts: what the project's Python source says, read with `ast` only (user code never runs).

`probe.scan.scan(root)` fills a `ScanFacts`; the diagnosis rules read it next to a measured `Report`.
Field names are part of the contract with the rule authors: add fields, never rename them.

Conventions for every fact:
- `file` is relative to the scanned root, posix form; `line` is 1-based.
- `function` is the qualname of the innermost enclosing `def` (Python's `__qualname__` form, e.g.
  `make_scale.<locals>.scale`, `Solver.step`), or `"<module>"` when the code runs at import time.
- `scope` is `"function"` inside a `def`, `"module"` otherwise (class bodies run at import time: `"module"`).
- `*_text` / `value` / `types` / `dim` ... fields hold source text as `ast.unparse` prints it (strings in single
  quotes, e.g. `"'unique'"`), cut to 300 characters.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr

from .base import Model as _Model

Scope = Literal["module", "function"]

# Options a Warp module copies from wp.config when it is created (at the first kernel registration, usually import).
CREATION_OPTIONS = frozenset(
    {"enable_backward", "max_unroll", "lineinfo", "deterministic", "deterministic_max_records", "compile_time_trace"}
)
# Tile ops that go through MathDx / LTO on CUDA (CS-7).
MATHDX_TILE_OPS = frozenset(
    {
        "tile_matmul",
        "tile_fft",
        "tile_ifft",
        "tile_cholesky",
        "tile_cholesky_solve",
        "tile_lower_solve",
        "tile_upper_solve",
    }
)


class Fact(_Model):
    """Where a fact sits in the user's source."""

    file: str
    line: int
    function: str = "<module>"
    scope: Scope = "module"


class ImportRef(_Model):
    """An earlier import that (directly or through its own imports) brings in modules that define kernels."""

    module: str  # the project module the import names
    line: int
    kernel_modules: list[str] = Field(default_factory=list)  # project modules with kernels it executes
    created_at_import: bool = False  # one of them defines a kernel at module scope: its Warp module exists after it


class ImportFact(Fact):
    """One imported module. `from pkg import a, b` gives one fact per submodule and one for `pkg` itself."""

    module: str  # absolute dotted name (relative imports resolved), e.g. "pkg.solver", "warp", "os"
    names: list[str] = Field(default_factory=list)  # the names bound in the importing file
    level: int = 0  # leading dots of a relative import
    project_module: str | None = None  # the scanned module it resolves to (None: not in the project)
    type_checking: bool = False  # under `if TYPE_CHECKING:` (never runs)
    defines_kernels: bool = False  # project_module itself defines a @wp.kernel
    reaches_kernels: bool = False  # it or anything it imports at module scope (or a parent package) defines one
    # The physical source line at `line` as written (the first line of a multi-line import): what a fix quotes when it
    # says "move X above `from pkg import solver`", so a rule never reads the file back.
    source_line: str | None = None


class ModuleInfo(_Model):
    """One scanned Python file and its module name."""

    file: str
    name: str  # "pkg.sub"; leading "src/" stripped; pkg/__init__.py -> "pkg"; pkg/__main__.py -> "pkg.__main__"
    main_alias: str | None = None  # "__main__" for __main__.py, root-level scripts, guarded non-package scripts
    is_package: bool = False
    has_main_guard: bool = False  # `if __name__ == "__main__":`
    imports_warp: bool = False
    kernel_count: int = 0
    module_scope_kernel_count: int = 0
    function_count: int = 0  # @wp.func
    launch_count: int = 0


class KernelDef(Fact):
    """A @wp.kernel (kind="kernel", in ScanFacts.kernels) or @wp.func (kind="func", in ScanFacts.functions)."""

    kind: Literal["kernel", "func"] = "kernel"
    name: str
    qualname: str
    python_module: str  # module name of the file it is defined in
    form: Literal["decorator", "call"] = "decorator"  # @wp.kernel, or k = wp.kernel(f) / wp.kernel(...)(f)
    nested: bool = False  # defined inside a function (created each call, at call time)
    enclosing_function: str | None = None  # qualname of that function
    module_arg: str | None = None  # literal module= value ("unique", "pkg.name"), or resolved default (see below)
    module_arg_text: str | None = None  # module= source text whenever module= is given
    module_arg_line: int | None = None  # line of that module= value (the decorator or call line to edit)
    module_from_default: bool = False  # module= is an enclosing factory's parameter whose default is module_arg
    module_default_line: int | None = None  # line of that parameter default (where a factory-wide fix goes)
    module_param: str | None = None  # module= is this parameter of the outermost enclosing function
    module_param_index: int | None = None  # its positional index (None: keyword-only, or a method's)
    module_from_callers: bool = False  # module_arg is what every scanned call of it ends with (passed or default)
    warp_module: str | None = None  # the Warp module it joins: module_arg, else python_module; None if unique/unknown
    generic: bool = False
    generic_params: list[str] = Field(default_factory=list)
    enable_backward: bool | None = None  # literal enable_backward= kwarg
    enable_backward_text: str | None = None  # its source text whenever given
    module_options: bool = False  # module_options= kwarg present
    module_options_dict: dict[str, str] = Field(default_factory=dict)  # option -> value text when a dict literal
    decorator_kwargs: dict[str, str] = Field(default_factory=dict)  # every keyword of the decorator/call


class OverloadFact(Fact):
    """wp.overload(kernel, [types] | {...}) call, or a @wp.overload-decorated def."""

    kernel: str  # kernel name (last identifier of the expression)
    kernel_text: str = ""
    types: str = ""  # the types argument, or "a: T, b: U" for the decorator form
    form: Literal["call", "decorator"] = "call"
    retained: bool = True  # call form: the returned overload object is kept (not a bare expression statement)


class LaunchFact(Fact):
    """wp.launch / wp.launch_tiled."""

    api: Literal["launch", "launch_tiled"] = "launch"
    kernel: str  # source text of the kernel argument
    kernel_name: str | None = None  # resolved name: kernel def, overload's kernel, or the variable's name
    kernel_factory: str | None = None  # the kernel came from calling this function (directly or via a variable)
    dim: str | None = None
    block_dim: int | str | None = None  # int if literal, else source text; None if absent
    device: str | None = None
    adjoint: bool = False  # adjoint=True literal
    kwargs: dict[str, str] = Field(default_factory=dict)


class CallerRef(Fact):
    """A call of the project function that holds a fact: `function`/`line` are the caller's, `callee` the function
    it calls. depth 1 calls the fact's own function; depth 2 calls a function that calls it, and so on. Calls are
    matched like factory calls (a bare name or self./cls. method of the same file, or a dotted name whose module part
    is the callee's module); calls through aliases, instances or files the scan only skims are not seen."""

    callee: str  # qualname of the called function
    callee_file: str
    depth: int = 1


class ModuleOptionsFact(Fact):
    """wp.set_module_options({...}[, module=...]) or wp.get_module(name).options[...] = / .options.update(...)."""

    api: Literal["set_module_options", "get_module_options"] = "set_module_options"
    options: dict[str, str] = Field(default_factory=dict)  # option -> value text
    options_text: str | None = None  # the argument when not a literal dict (after following a local variable)
    module_arg: str | None = None  # set_module_options(module=...) source text
    module_arg_is_get_module: bool = False  # module=wp.get_module(...): a misuse per the Warp docs
    target: str | None = None  # Python module name (calling file's, or the module= one), or the get_module string
    target_resolved: bool = True  # False when the target expression could not be resolved statically
    before_launch_in_file: bool | None = None  # precedes the first launch of the same function/module body
    target_has_kernels: bool = False  # the target (Python or named Warp module) defines any kernel in the project
    # Where the enclosing function is called from (transitively, up to 3 calls up; empty at module scope): with a
    # build's trigger stack this orders the write against the module's first load across functions and files.
    callers: list[CallerRef] = Field(default_factory=list)


class ConfigSetFact(Fact):
    """wp.config.X = value (also warp.config.X, config.X, cfg.X, setattr(wp.config, "X", v))."""

    name: str
    value: str
    copied_at_module_creation: bool = False  # X in CREATION_OPTIONS
    after_kernel_imports: list[ImportRef] = Field(default_factory=list)  # earlier imports of kernel modules
    after_kernel_imports_transitive: list[ImportRef] = Field(default_factory=list)  # also through their imports
    after_kernels_in_file: list[str] = Field(default_factory=list)  # module-scope kernels of this file already defined
    # Parent packages run before this file does (`python -m pkg` imports pkg/__init__.py first); those whose earlier
    # imports reach kernel modules (line = 0). When the parent imports this file, only its imports before that count.
    after_package_imports: list[ImportRef] = Field(default_factory=list)


class CacheOp(Fact):
    """Something that defeats cache reuse (CS-2). Query with ScanFacts.cache_ops_of(kind)."""

    kind: Literal[
        "clear_kernel_cache",
        "clear_lto_cache",
        "unload",
        "cache_kernels_false",
        "kernel_cache_dir",
        "cache_dir_removed",
        "cuda_cache_disable",
        "cuda_cache_path",
    ]
    api: str = ""  # the callee or assignment target as written
    value: str | None = None  # assigned value / rmtree argument / unload receiver
    target: str | None = None  # unload: the get_module name when known
    via: str | None = None  # "config" | "setattr" | "env" | "env_dict" | "init_kernel_cache" | "call" | "atexit"
    temporary: bool = False  # tempfile.mkdtemp/TemporaryDirectory/gettempdir, "/tmp...", tmp_path
    timestamped: bool = False  # time/datetime/uuid/getpid/strftime/random: unique per run
    mentions_cache: bool = False  # cache_dir_removed: the argument names a cache dir
    atexit: bool = False  # cache_dir_removed: runs at exit (atexit.register / @atexit.register)
    certain: bool = True  # unload: receiver is a known Warp module (get_module(...), x.module, ...)


class SettingFact(Fact):
    """A compile-relevant setting (see SETTING_NAMES) set via wp.config, module options, or a kernel kwarg."""

    name: str
    value: str
    via: Literal["config", "module_options", "kernel_kwarg"]
    target: str | None = None  # module_options: target module; kernel_kwarg: kernel name


class LoadCallFact(Fact):
    """wp.force_load(...) / wp.load_module(...)."""

    api: Literal["force_load", "load_module"]
    modules_none: bool = False  # force_load without modules= or with modules=None: loads every registered module
    modules: str | None = None  # force_load modules= / load_module module= text
    modules_list: list[str] | None = None  # element texts when a literal list/tuple
    max_workers: int | str | None = None
    device: str | None = None
    cpu_possible: bool = True  # device absent/None/"cpu"/mixed/non-literal: only literal CUDA devices are safe
    block_dim: str | None = None
    recursive: str | None = None  # load_module
    swallowed: bool = False  # inside a try whose handler only passes (hides a bad module name)
    kwargs: dict[str, str] = Field(default_factory=dict)


class TapeFact(Fact):
    """wp.Tape() constructed (with_block=False) or `with wp.Tape() as t:` / `with t:` (with_block=True)."""

    var: str | None = None  # the name it is bound to ("tape", "self.tape")
    with_block: bool = False
    end_line: int | None = None  # last line of the with-block
    launched_kernels: list[str] = Field(default_factory=list)  # kernel names of launches inside the with-block
    calls: list[str] = Field(default_factory=list)  # functions called inside the with-block (last identifier)
    indirect_kernels: list[str] = Field(default_factory=list)  # launched by those functions (by name, transitive)
    backward_lines: list[int] = Field(default_factory=list)  # .backward( calls on this tape's name, same file


class TapeBackwardCall(Fact):
    var: str  # receiver text, e.g. "tape"


class TileOpFact(Fact):
    op: str  # "tile_matmul", "tile_load", ...
    kernel: str  # the kernel (or wp.func) whose body holds the call
    kind: Literal["kernel", "func"] = "kernel"
    mathdx: bool = False  # op in MATHDX_TILE_OPS


class LoopFact(Fact):
    """for ... in range(<compile-time constant>) inside a kernel or wp.func body (unroll candidate, CS-11)."""

    kernel: str
    kind: Literal["kernel", "func"] = "kernel"
    bound: int  # trip count
    bound_text: str = ""
    static: bool = False  # wp.static(...) in the bound (Warp replaces it by its value: max_unroll still applies)
    from_constant: bool = False  # a module-level NAME = int / wp.constant(int)
    # Lines of the constant-range loops (LoopFacts of the same kernel) this one sits in, outermost first. Warp decides
    # per loop (trip count <= max_unroll, or forced); an unrolled outer loop repeats everything inside it, so the
    # body of this loop is written out once per iteration of every unrolled loop around it.
    outer_loop_lines: list[int] = Field(default_factory=list)
    # The loop (its body or a loop inside it) holds a wp.static(...) that reads a loop variable: Warp unrolls it
    # whatever max_unroll says.
    forced_unroll: bool = False


class FactoryCallFact(Fact):
    """A call of a kernel factory: a project function whose body creates a kernel (a nested @wp.kernel/wp.kernel()).

    Each call creates the factory's kernels again; with module="unique" each distinct version gets a module of its own.
    Whether those versions are fixed in the source (constant arguments) or come from run-time data is what tells a
    stable set of kernels from one that really varies. Calls from files the scan only skims (no "warp" in them) and
    calls through aliases are not seen, except a module-scope name that binds a method or a closure an object keeps
    (`make = _Factory().make`, scan/bound.py): those calls are recorded under that function's own qualname.
    """

    factory: str  # qualname of the called factory, e.g. "make_phase_kernel", "Registry.make"
    factory_file: str  # the file that defines it
    callee: str = ""  # the call's function as written, e.g. "kernels.make_phase_kernel"
    args: list[str] = Field(default_factory=list)  # argument texts (keywords as "name=value")
    constant_args: bool = True  # every argument is fixed in the source (literals, module constants, constant loops)
    runtime_args: list[str] = Field(default_factory=list)  # those that are not (parameters, run-time data, calls)
    in_loop: bool = False  # inside a for/while loop or a comprehension of the calling scope
    decorator: bool = False  # used as a decorator: @factory(...)


class CallFact(Fact):
    """A call `name(...)` or `obj.name(...)` on the way to a function-scope wp.overload registration: a call of the
    function that holds one, of a function that calls that, and so on (scan.link.CALL_LEVELS names deep).
    `function`/`scope` are the caller's. Unlike FactoryCallFact and CallerRef nothing is resolved: calls are matched
    by the callee's last identifier, in every file (also those the scan only skims). Calls in class bases and return
    annotations are not listed."""

    name: str  # last identifier of the callee

    @property
    def function_name(self) -> str:
        """The caller's own name, as a frame's co_name shows it ("<module>" at module scope)."""
        return self.function.rsplit(".", 1)[-1]


class ParseError(_Model):
    file: str
    reason: str


class SkippedFile(_Model):
    file: str
    reason: str


class ScanFacts(_Model):
    """Everything the static scan found. Lists are in file order, then line order."""

    root: str = ""  # the scanned directory, absolute
    files_scanned: int = 0  # Python files read and parsed
    truncated: bool = False  # stopped at max_files
    parse_errors: list[ParseError] = Field(default_factory=list)
    skipped_files: list[SkippedFile] = Field(default_factory=list)  # over max_bytes, unreadable
    uses_warp: bool = False
    python_modules_with_kernels: dict[str, str] = Field(default_factory=dict)  # module name -> file
    modules: list[ModuleInfo] = Field(default_factory=list)
    imports: list[ImportFact] = Field(default_factory=list)
    kernels: list[KernelDef] = Field(default_factory=list)
    functions: list[KernelDef] = Field(default_factory=list)
    overloads: list[OverloadFact] = Field(default_factory=list)
    launches: list[LaunchFact] = Field(default_factory=list)
    module_options: list[ModuleOptionsFact] = Field(default_factory=list)
    config_sets: list[ConfigSetFact] = Field(default_factory=list)
    cache_ops: list[CacheOp] = Field(default_factory=list)
    settings: list[SettingFact] = Field(default_factory=list)
    load_calls: list[LoadCallFact] = Field(default_factory=list)
    tapes: list[TapeFact] = Field(default_factory=list)
    tape_backward_calls: list[TapeBackwardCall] = Field(default_factory=list)
    tile_ops: list[TileOpFact] = Field(default_factory=list)
    loops: list[LoopFact] = Field(default_factory=list)
    factory_calls: list[FactoryCallFact] = Field(default_factory=list)  # linked across files after the per-file scan
    # Calls that lead to function-scope overload registrations (see CallFact): file order, then walk order.
    calls: list[CallFact] = Field(default_factory=list)
    # not part of the schema: the scan's guard and caller index (probe.scan.guards.GuardIndex), None when the facts
    # were not made by a scan of files
    _guard_index: Any = PrivateAttr(default=None)

    _groups: dict[tuple[str, str], tuple[int, dict[str, list[Any]]]] = PrivateAttr(default_factory=dict)

    def _grouped(self, attr: str, key: str) -> dict[str, list[Any]]:
        """`getattr(self, attr)` grouped by each item's `key`, built once: rules ask these per fact, and a large
        project has thousands of facts. Rebuilt when the list changed length (facts made by hand in tests)."""
        items = getattr(self, attr)
        hit = self._groups.get((attr, key))
        if hit is None or hit[0] != len(items):
            groups: dict[str, list[Any]] = {}
            for it in items:
                groups.setdefault(getattr(it, key), []).append(it)
            hit = (len(items), groups)
            self._groups[(attr, key)] = hit
        return hit[1]

    def set_guard_index(self, index: Any) -> None:
        self._guard_index = index

    @property
    def guard_index(self) -> Any:
        return self._guard_index

    # ---- pure queries -------------------------------------------------------------------------------------------

    def kernel_by_name(self, name: str) -> list[KernelDef]:
        return list(self._grouped("kernels", "name").get(name, ()))

    def function_by_name(self, name: str) -> list[KernelDef]:
        return list(self._grouped("functions", "name").get(name, ()))

    def functions_in(self, file: str) -> list[KernelDef]:
        """The @wp.func definitions of one file."""
        return list(self._grouped("functions", "file").get(file, ()))

    def kernels_in_module(self, modname: str) -> list[KernelDef]:
        """Kernels of a Python module (also "__main__" via main_alias) or of a named Warp module (module="x")."""
        files = {m.file for m in self.modules if m.name == modname or m.main_alias == modname}
        return [
            k
            for k in self.kernels
            if k.python_module == modname or k.warp_module == modname or (k.file in files and k.module_arg is None)
        ]

    def launches_of(self, kernel_name: str) -> list[LaunchFact]:
        return list(self._grouped("launches", "kernel_name").get(kernel_name, ()))

    def launches_in(self, file: str, function: str | None = None) -> list[LaunchFact]:
        return [la for la in self.launches if la.file == file and (function is None or la.function == function)]

    def module_info(self, modname: str) -> ModuleInfo | None:
        hit = self._grouped("modules", "name").get(modname)
        return hit[0] if hit else None

    def module_of_file(self, file: str) -> ModuleInfo | None:
        hit = self._grouped("modules", "file").get(file)
        return hit[0] if hit else None

    def imports_in(self, file: str) -> list[ImportFact]:
        return list(self._grouped("imports", "file").get(file, ()))

    def source_line(self, file: str, line: int) -> str | None:
        """The source line an import fact of `file` recorded at `line` (None when no import starts there)."""
        return next((i.source_line for i in self.imports if i.file == file and i.line == line), None)

    def calls_named(self, name: str) -> list[CallFact]:
        """Every call of a function or method named `name`, in file and walk order."""
        return [c for c in self.calls if c.name == name]

    def module_options_in(self, file: str, function: str | None = None) -> list[ModuleOptionsFact]:
        """Module-option writes of one file (and one function of it)."""
        return [m for m in self.module_options if m.file == file and (function is None or m.function == function)]

    def config_sets_named(self, name: str) -> list[ConfigSetFact]:
        return [c for c in self.config_sets if c.name == name]

    def settings_named(self, name: str) -> list[SettingFact]:
        return [s for s in self.settings if s.name == name or (name.endswith("*") and s.name.startswith(name[:-1]))]

    def cache_ops_of(self, kind: str) -> list[CacheOp]:
        return [c for c in self.cache_ops if c.kind == kind]

    def overloads_of(self, kernel_name: str) -> list[OverloadFact]:
        return list(self._grouped("overloads", "kernel").get(kernel_name, ()))

    def tile_ops_in(self, kernel_name: str) -> list[TileOpFact]:
        return [t for t in self.tile_ops if t.kernel == kernel_name]

    def tapes_launching(self, kernel_name: str, *, indirect: bool = True) -> list[TapeFact]:
        return [
            t
            for t in self.tapes
            if kernel_name in t.launched_kernels or (indirect and kernel_name in t.indirect_kernels)
        ]

    def factory_kernels(self, factory: str) -> list[KernelDef]:
        """Kernels defined inside a function whose qualname is `factory` or ends with `.factory`."""
        return [
            k
            for k in self.kernels
            if k.enclosing_function
            and (k.enclosing_function == factory or k.enclosing_function.split(".")[-1] == factory)
        ]

    def calls_of_factory(self, factory: str, file: str | None = None) -> list[FactoryCallFact]:
        """Calls of the kernel factory `factory` (a qualname; with `file`, the one defined in that file)."""
        return [c for c in self.factory_calls if c.factory == factory and (file is None or c.factory_file == file)]

    def loop_at(self, file: str, line: int, kernel: str | None = None) -> LoopFact | None:
        for lp in self.loops:
            if lp.file == file and lp.line == line and (kernel is None or lp.kernel == kernel):
                return lp
        return None


# the list-valued fact fields of ScanFacts that every file's scan contributes to
FACT_LISTS = (
    "imports",
    "kernels",
    "functions",
    "overloads",
    "launches",
    "module_options",
    "config_sets",
    "cache_ops",
    "settings",
    "load_calls",
    "tapes",
    "tape_backward_calls",
    "tile_ops",
    "loops",
)
