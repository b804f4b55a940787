"""The hook's call site for a load reached through a deep library call: when every one of the frames it keeps is an
installed library's (site-packages), it also records the program's own caller beyond them (`outer`), so a finding
owned by the library can still point at the application line that led into it (newton's Kamino: more than six of
its frames between the driver's step and the load). Frames are made by code compiled under chosen file names."""

from __future__ import annotations

import sys

from warp_compile.probe import hook
from warp_compile.probe.events import _trigger
from warp_compile.probe.rules.helpers import own_frame


def _chain(app: str, lib: str, depth: int):  # type: ignore[no-untyped-def]
    """app.py's `main()` calls lib's f0 -> f1 -> ... -> f{depth-1}, which returns its own frame."""
    ns: dict = {"sys": sys}
    lib_src = "\n".join([f"def f{i}():\n    return f{i + 1}()" for i in range(depth - 1)]
                        + [f"def f{depth - 1}():\n    return sys._getframe(0)"])
    exec(compile(lib_src, lib, "exec"), ns)
    exec(compile("\n\ndef main():\n    return f0()\n", app, "exec"), ns)
    return ns["main"]()


def test_a_deep_library_call_records_the_programs_own_caller_beyond_the_kept_frames(tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = str(tmp_path / "project" / "drop.py")
    lib = str(tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "physlib" / "solver.py")
    site, _api = hook._user_site(_chain(app, lib, 9), 6)
    assert site is not None and len(site["stack"]) == 6 and all(s["file"] == lib for s in site["stack"])
    assert site["outer"] == {"file": app, "line": 4, "function": "main"}
    t = _trigger(site)
    assert t is not None and t.outer is not None and t.outer.file == app
    shallow, _api = hook._user_site(_chain(app, lib, 3), 6)  # the program's frame is among the kept ones already
    assert "outer" not in shallow and any(s["file"] == app for s in shallow["stack"])


def test_own_frame_takes_the_outer_caller_when_the_kept_frames_are_all_the_librarys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    class Ctx:
        pass

    from warp_compile.probe.rules import helpers

    app = str(tmp_path / "project" / "drop.py")
    lib = str(tmp_path / "site-packages" / "physlib" / "solver.py")
    t = _trigger(hook._user_site(_chain(app, lib, 9), 6)[0])
    assert t is not None
    original = helpers.dependency_of
    helpers.dependency_of = lambda ctx, file: "physlib" if file and "site-packages" in file else None  # type: ignore[assignment]
    try:
        at = own_frame(Ctx(), t)  # type: ignore[arg-type]
    finally:
        helpers.dependency_of = original  # type: ignore[assignment]
    assert (at.file, at.line) == (app, 4)
