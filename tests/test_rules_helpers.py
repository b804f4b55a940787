"""The shared rule helpers: Warp's key, option truth by Warp's own test (Python truthiness), first load."""

from __future__ import annotations

import pytest

from tests.helpers import synth_build
from warp_compile.probe.rules.helpers import first_load, is_false, literal_dict, pch_off, warp_key


def test_warp_key_matches_warps_qualified_name() -> None:
    assert warp_key("make.<locals>.heater") == "make__locals__heater"
    assert warp_key("Cls.k") == "Cls__k"


@pytest.mark.parametrize("text", ["False", "0", "None", "", "0.0", "''", "[]", " False "])
def test_values_that_turn_an_option_off(text: str) -> None:
    assert is_false(text)


@pytest.mark.parametrize("text", ["True", "1", "'off'", "off", "no", "'no'", "flag", "get_flag()", None])
def test_values_that_do_not_turn_an_option_off(text: str | None) -> None:
    """Warp tests `if options[...]`: a non-empty string is on, and a name is not known to be false."""
    assert not is_false(text)


def test_pch_off_reads_the_recorded_option_and_defaults_to_on() -> None:
    assert pch_off(synth_build(1, "m", "a", ms=10.0, options={"use_precompiled_headers": "False"}))
    assert not pch_off(synth_build(2, "m", "b", ms=10.0, options={"use_precompiled_headers": "off"}))
    assert not pch_off(synth_build(3, "m", "c", ms=10.0, options={}))


def test_first_load_is_the_earliest_build_of_that_module_and_device() -> None:
    builds = [
        synth_build(5, "m", "a", ms=10.0),
        synth_build(2, "m", "b", ms=10.0),
        synth_build(1, "other", "c", ms=10.0),
        synth_build(3, "m", "d", ms=10.0, device="cuda:0"),
    ]
    got = first_load(builds, "m", "cpu")
    assert got is not None and got.seq == 2
    assert first_load(builds, "absent", "cpu") is None


def test_literal_dict_quotes_string_values_like_keys() -> None:
    assert literal_dict({"fast_math": "True", "mode": "'release'"}) == '{"fast_math": True, "mode": "release"}'
