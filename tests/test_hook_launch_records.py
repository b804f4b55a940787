"""The launch records the hook keeps while it reads `launch`'s frame only for some launches (issue 41).

A repeat launch from a known place is counted from a frame lookup and a dict lookup; `launch`'s locals (dim,
adjoint flag, argument types) are read for the first _READ_FIRST launches of each place, for every launch of a place
where two reads disagreed, and after that for one launch in _READ_EVERY. These tests drive the hook's own wrapper
from a stand-in `launch` in a stand-in warp directory (no Warp needed, so they run in the fast suite) and check that
every record `fix` and the rules read is what reading every launch would give: the records, their first launch's
fields, their order and their counts; and that the cheap path really ran (launches counted unread), so the checks
cannot pass by reading everything.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

HOOK = Path(__file__).resolve().parents[1] / "probe" / "hook.py"

FAKE_LAUNCH = '''
def launch(kernel, dim, inputs=(), outputs=(), device="cpu", adjoint=False, block_dim=1, exec_=None):
    fwd_args = list(inputs) + list(outputs)
    return exec_.get_kernel_hooks(kernel)
'''


class _Array:
    """A stand-in Warp array: the hook names it by dtype and dimensions."""

    def __init__(self, dtype: type, ndim: int = 1) -> None:
        self.dtype, self.shape, self.ndim = dtype, (4,) * ndim, ndim


@pytest.fixture()
def hook(tmp_path: Path) -> SimpleNamespace:
    """The hook's namespace with a stand-in warp directory whose `launch` calls the wrapped get_kernel_hooks."""
    ns: dict[str, Any] = {"__file__": str(HOOK), "__name__": "hook_under_test"}
    env = os.environ.pop("WARP_COMPILE_EVENTS", None)
    try:
        exec(compile(HOOK.read_text(), str(HOOK), "exec"), ns)
    finally:
        if env is not None:
            os.environ["WARP_COMPILE_EVENTS"] = env
    warp_dir = tmp_path / "warp"
    warp_dir.mkdir()
    src = warp_dir / "context.py"
    src.write_text(FAKE_LAUNCH)
    fake: dict[str, Any] = {}
    exec(compile(FAKE_LAUNCH, str(src), "exec"), fake)
    ns["_state"]["warp_dir"] = str(warp_dir)
    ns["_dtype_name"] = ns["_load_companion"]("hook_kernels.py", "_kernels_under_test").dtype_name  # as in a run

    class Exec:
        hooks: dict[str, object] = {}

        def get_kernel_hooks(self, kernel: Any) -> object:
            return self.hooks.setdefault(kernel.key, object())

    Exec.get_kernel_hooks = ns["_make_hooks_wrapper"](Exec.get_kernel_hooks)
    ex = Exec()

    def records() -> list[tuple[str, list[int], list[str], bool, int, int]]:
        import json

        counts, total, how = ns["_launch_counts"]()
        out = []
        for rkey, lid in sorted(ns["_launch_ids"].items(), key=lambda kv: kv[1]):
            rec = json.loads(rkey)
            out.append((rec["kernel"], rec["dim"], rec["dtypes"], rec["adjoint"], rec["site"]["line"], counts[lid]))
        hook_ns.how, hook_ns.total = how, total
        return out

    # a partial adds no Python frame: the test's own line calls `launch`, as an app's line calls wp.launch
    hook_ns = SimpleNamespace(ns=ns, launch=functools.partial(fake["launch"], exec_=ex), records=records, how=None,
                              total=0)
    return hook_ns


def _kernel(key: str) -> SimpleNamespace:
    return SimpleNamespace(key=key, module=SimpleNamespace(name="app"))


def _line() -> int:
    return sys._getframe(1).f_lineno


def test_a_steady_place_is_one_record_with_its_exact_count_and_counted_mostly_unread(hook: SimpleNamespace) -> None:
    k, a = _kernel("scale"), _Array(float)
    for _ in range(5000):
        hook.launch(k, dim=8, inputs=[a]); line = _line()  # noqa: E702
    assert hook.records() == [("scale", [8], ["_Array[float;1d]"], False, line, 5000)]
    assert hook.how["unread"] > (5000 - hook.ns["_READ_FIRST"]) * 0.9  # the cheap path ran
    assert hook.how["late_changes"] == 0 and hook.total == 5000


def test_what_changes_at_one_place_from_the_start_splits_records_with_exact_counts(hook: SimpleNamespace) -> None:
    """dim, argument types (None against an array) and the adjoint flag: each value its own record, counted
    exactly, in first-seen order; such a place is read at every launch from then on."""
    k, a = _kernel("fill"), _Array(float)
    for i in range(3000):
        hook.launch(k, dim=8 if i % 2 else 4, inputs=[a if i % 3 else None], adjoint=i % 5 == 0); line = _line()  # noqa: E702
    got = hook.records()
    expect: dict[tuple[int, str, bool], int] = {}
    for i in range(3000):
        key = (8 if i % 2 else 4, "_Array[float;1d]" if i % 3 else "None", i % 5 == 0)
        expect[key] = expect.get(key, 0) + 1
    assert [(r[1][0], r[2][0], r[3]) for r in got] == list(expect)  # first-seen order
    assert [r[5] for r in got] == list(expect.values())
    assert {r[4] for r in got} == {line}
    assert hook.how["unread"] == 0 and hook.how["late_changes"] == 0


def test_a_change_within_the_first_reads_is_exact_and_a_later_one_is_found_within_a_read_interval(
        hook: SimpleNamespace) -> None:
    first, every = hook.ns["_READ_FIRST"], max(hook.ns["_READ_EVERY"])
    early, late, a = _kernel("early"), _kernel("late"), _Array(float)
    for i in range(2000):
        hook.launch(early, dim=8 if i < first - 10 else 16 if i < 1500 else 32, inputs=[a])
        hook.launch(late, dim=8 if i < 1200 else 16, inputs=[a])
    got = {(r[0], r[1][0]): r[5] for r in hook.records()}
    # a place that changed once is read at every launch from then on: its later changes are exact too
    assert (got[("early", 8)], got[("early", 16)], got[("early", 32)]) == (first - 10, 1500 - first + 10, 500)
    # the late change: both records, the total exact, at most one read interval counted into the old record
    assert got[("late", 8)] + got[("late", 16)] == 2000
    assert 1200 <= got[("late", 8)] < 1200 + every
    assert hook.how["late_changes"] == 1 and hook.total == 4000


def test_two_places_and_two_kernels_keep_their_own_records(hook: SimpleNamespace) -> None:
    """The place is the calling code and its offset: two calls on two lines, and two kernels from one helper line."""
    a, b = _Array(float), _Array(int, 2)
    k1, k2 = _kernel("k1"), _kernel("k2")

    def helper(k: Any) -> int:
        hook.launch(k, dim=8, inputs=[b])
        return _line()

    for _ in range(700):
        hook.launch(k1, dim=8, inputs=[a]); one = _line()  # noqa: E702
        hook.launch(k1, dim=8, inputs=[a]); two = _line()  # noqa: E702
        inner = helper(k1)
        helper(k2)
    assert hook.records() == [
        ("k1", [8], ["_Array[float;1d]"], False, one, 700),
        ("k1", [8], ["_Array[float;1d]"], False, two, 700),
        ("k1", [8], ["_Array[int;2d]"], False, inner - 1, 700),
        ("k2", [8], ["_Array[int;2d]"], False, inner - 1, 700),
    ]
