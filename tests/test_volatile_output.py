"""Volatile output is not behaviour: fields and lines that differ between runs of the unchanged program (an elapsed
time, a frame rate, a date) are set aside in the behaviour check and named; anything else that changes still refuses
the fix (issue 28, item 0)."""

from __future__ import annotations

from warp_compile.probe.fix.behaviour import ArmRuns, first_difference, judge_runs, shape, volatile_fields


def _runs(*outputs: list[str]) -> ArmRuns:
    return ArmRuns(outputs=[list(o) for o in outputs], launches=[5] * len(outputs), exit_codes=[0] * len(outputs))


COLD = ["contacts 1824  energy 3.21875", "elapsed 47.5 s"]
WARM = ["contacts 1824  energy 3.21875", "elapsed 0.4 s"]


def test_the_field_that_moves_between_the_originals_runs_is_named_and_set_aside() -> None:
    v = volatile_fields([COLD, WARM])
    assert v.lines == {1: frozenset({1})}  # line 2, its number only: "elapsed" and "s" are still compared
    assert v.notes and "line 2 field 2" in v.notes[0] and "47.5" in v.notes[0]
    assert first_difference(COLD, ["contacts 1824  energy 3.21875", "elapsed 34.9 s"], v) is None
    # the words around it are not volatile
    assert first_difference(COLD, ["contacts 1824  energy 3.21875", "took 34.9 s"], v) is not None


def test_a_fix_is_accepted_with_its_own_timing_and_refused_when_anything_else_changes() -> None:
    original = _runs(COLD, WARM, COLD[:1] + ["elapsed 46.9 s"], WARM)
    fixed = _runs(["contacts 1824  energy 3.21875", "elapsed 34.9 s"], WARM)
    v = judge_runs(None, original, fixed, who="the fixed copy")
    assert v.ok and v.volatile and "set aside as volatile" in v.note
    wrong = _runs(["contacts 1700  energy 3.21875", "elapsed 34.9 s"])
    v = judge_runs(None, original, wrong, who="the fixed copy")
    assert not v.ok and "output_changed" in v.flags and "contacts 1700" in v.note


def test_a_line_only_some_runs_print_is_set_aside_whole_and_others_are_still_required() -> None:
    a = ["cache miss: compiling 3 modules", "result 0.25000"]
    b = ["result 0.25000"]
    v = volatile_fields([a, b])
    assert v.lines == {0: None}
    assert first_difference(a, ["result 0.25000"], v) is None
    assert first_difference(a, ["cache miss: compiling 1 modules", "result 0.25000"], v) is None
    assert first_difference(a, ["cache miss: compiling 3 modules"], v) is not None  # the result is missing
    assert first_difference(a, ["result 0.25000", "something new"], v) is not None  # never printed before


def test_dates_and_paths_with_numbers_fold_to_one_shape_and_a_single_run_sets_nothing_aside() -> None:
    assert shape("run at 2026-12-05 10:44:08 in /tmp/x123") == shape("run at 2026-12-06 09:01:00 in /tmp/x9")
    assert volatile_fields([COLD]).lines == {}
    assert first_difference(COLD, WARM, volatile_fields([COLD])) is not None  # nothing known to be volatile


def test_an_identical_original_masks_nothing() -> None:
    v = judge_runs(None, _runs(COLD, COLD), _runs(WARM), who="the fixed copy")
    assert not v.ok and v.volatile == []
