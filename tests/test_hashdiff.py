"""hashdiff: every cause kind on synthetic reports, the closest-previous-load choice, the text line, and real runs."""

from __future__ import annotations

import pytest

from tests.helpers import synth_build
from warp_compile.probe.hashdiff import (
    diff_builds,
    explain_changes,
    module_family,
    unique_family,
)
from warp_compile.probe.models import ApiCall, Build, KernelInfo, Report, Site, Trigger
from warp_compile.probe.render.diagnosis import render_change, render_changes

CWD = "/proj"
OPTS = {"fast_math": "False", "mode": "release", "block_dim": "1", "enable_backward": "True"}


def K(key: str, h: str = "k0", line: int = 10, sig: str | None = None, parent: str | None = None) -> KernelInfo:
    return KernelInfo(key=key, hash=h, file=f"{CWD}/app/kernels.py", line=line, signature=sig, generic_parent=parent)


def B(
    seq: int,
    h: str,
    kernels: list[KernelInfo],
    module: str = "app.kernels",
    device: str = "cpu",
    bd: int | None = 1,
    status: str = "compiled",
    ms: float = 100.0,
    options: dict[str, str] | None = None,
    functions: dict[str, str] | None = None,
    line: int = 16,
) -> Build:
    return synth_build(
        seq,
        module,
        h,
        device=device,
        block_dim=bd,
        status=status,  # type: ignore[arg-type]
        ms=ms,
        kernels=kernels,
        options=dict(OPTS if options is None else options),
        functions=functions or {},
        trigger=Trigger(file=f"{CWD}/app/__main__.py", line=line, function="main", api="launch"),
    )


def R(builds: list[Build], calls: list[ApiCall] | None = None, cache_kernels: bool | None = True) -> Report:
    r = Report(command=["python", "-m", "app"], cwd=CWD, samples=1, builds=builds)
    r.cache.calls = calls or []
    r.cache.cache_kernels = cache_kernels
    return r


def kinds(change) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.kind for c in change.causes]


def test_first_load_of_each_module_is_not_a_change() -> None:
    r = R([B(1, "a", [K("k1")]), B(2, "b", [K("k2")], module="app.other")])
    assert explain_changes(r) == []
    assert render_changes([]).startswith("no module loaded twice")


def test_kernel_added_names_the_kernel_and_its_definition() -> None:
    r = R([B(1, "a", [K("k1", "h1")]), B(4, "b", [K("k1", "h1"), K("k2", "h2", line=30)], ms=230.0)])
    (ch,) = explain_changes(r)
    assert (ch.from_seq, ch.to_seq, ch.cost_ms, ch.status) == (1, 4, 230.0, "compiled")
    (c,) = ch.causes
    assert c.kind == "kernel_added" and c.kernel == "k2"
    assert (c.file, c.line) == ("app/kernels.py", 30)
    assert ch.trigger == "app/__main__.py:16 (launch)"


def test_kernel_removed_and_changed() -> None:
    r = R([B(1, "a", [K("k1", "h1"), K("k2", "h2")]), B(2, "b", [K("k1", "h9")])])
    (ch,) = explain_changes(r)
    by = {c.kind: c for c in ch.causes}
    assert by["kernel_removed"].kernel == "k2"
    assert by["kernel_changed"].kernel == "k1"
    assert (by["kernel_changed"].before, by["kernel_changed"].after) == ("h1", "h9")


def test_closure_version_added_under_the_same_key() -> None:
    key = "make__locals__k"
    r = R([B(1, "a", [K(key, "h1")]), B(2, "b", [K(key, "h1"), K(key, "h2")])])
    (c,) = explain_changes(r)[0].causes
    assert c.kind == "kernel_added" and "version" in c.detail


def test_overload_added_and_removed() -> None:
    g32 = K("scale", "g1", sig="a1f4_f4", parent="scale")
    g64 = K("scale", "g2", sig="a1f8_f8", parent="scale")
    r = R([B(1, "a", [g32]), B(2, "b", [g32, g64]), B(3, "c", [g64])])
    ch1, ch2 = explain_changes(r)
    assert kinds(ch1) == ["overload_added"] and ch1.causes[0].after == "a1f8_f8"
    assert ch1.causes[0].detail == "overload added: scale[a1f8_f8]"
    assert kinds(ch2) == ["overload_removed"] and ch2.causes[0].before == "a1f4_f4"


def test_option_changed() -> None:
    r = R([B(1, "a", [K("k1")]), B(2, "b", [K("k1")], options={**OPTS, "fast_math": "True"})])
    (c,) = explain_changes(r)[0].causes
    assert (c.kind, c.option, c.before, c.after) == ("option_changed", "fast_math", "False", "True")
    assert c.detail == "option fast_math: False -> True"


def test_block_dim_variant_is_not_reported_as_an_option_change() -> None:
    r = R(
        [
            B(1, "a", [K("k1")], device="cuda:0", bd=128, options={**OPTS, "block_dim": "128"}),
            B(2, "b", [K("k1")], device="cuda:0", bd=256, options={**OPTS, "block_dim": "256"}),
        ]
    )
    assert kinds(explain_changes(r)[0]) == ["block_dim_variant"]


def test_same_hash_after_unload_names_the_call_and_site() -> None:
    site = Site(file=f"{CWD}/app/__main__.py", line=14)
    unload = ApiCall(api="Module.unload", seq=3, module="app.kernels", site=site)
    r = R([B(1, "a", [K("k1")]), B(5, "a", [K("k1")])], calls=[unload])
    (c,) = explain_changes(r)[0].causes
    assert c.kind == "same_hash_reload"
    assert "Module.unload at app/__main__.py:14" in c.detail and "compiled again" in c.detail
    assert (c.file, c.line) == ("app/__main__.py", 14)


def test_same_hash_after_clear_kernel_cache_and_call_ordering() -> None:
    early = ApiCall(api="clear_kernel_cache", seq=0, site=Site(file=f"{CWD}/app/__main__.py", line=2))
    late = ApiCall(api="clear_kernel_cache", seq=2, site=Site(file=f"{CWD}/app/__main__.py", line=11))
    other = ApiCall(api="Module.unload", seq=3, module="app.elsewhere", site=Site(file=f"{CWD}/x.py", line=1))
    r = R([B(1, "a", [K("k1")]), B(4, "a", [K("k1")])], calls=[early, late, other])
    (c,) = explain_changes(r)[0].causes
    assert "clear_kernel_cache at app/__main__.py:11" in c.detail  # the one between the two loads, not seq 0


def test_same_hash_without_a_recorded_reason_is_unexplained() -> None:
    early = ApiCall(api="clear_kernel_cache", seq=0, site=Site(file=f"{CWD}/app/__main__.py", line=2))
    r = R([B(1, "a", [K("k1")]), B(4, "a", [K("k1")])], calls=[early])
    assert kinds(explain_changes(r)[0]) == ["unexplained"]


def test_same_hash_with_cache_kernels_off() -> None:
    r = R([B(1, "a", [K("k1")]), B(4, "a", [K("k1")])], cache_kernels=False)
    (c,) = explain_changes(r)[0].causes
    assert c.kind == "same_hash_reload" and c.option == "cache_kernels"


def test_previous_attempt_failed() -> None:
    r = R([B(1, "a", [K("k1")], status="error"), B(2, "a", [K("k1")])])
    (c,) = explain_changes(r)[0].causes
    assert c.kind == "same_hash_reload" and "failed" in c.detail


def test_different_device_same_hash() -> None:
    r = R([B(1, "a", [K("k1")]), B(2, "a", [K("k1")], device="cuda:0")])
    (ch,) = explain_changes(r)
    assert kinds(ch) == ["different_device"]
    assert render_change(ch).startswith("module app.kernels built for cuda:0 (aaaaaaa)")


def test_same_device_load_is_preferred_over_another_device() -> None:
    r = R(
        [
            B(1, "a", [K("k1")]),
            B(2, "a", [K("k1")], device="cuda:0"),
            B(3, "b", [K("k1"), K("k2")], device="cuda:0"),
        ]
    )
    last = explain_changes(r)[-1]
    assert last.from_seq == 2 and kinds(last) == ["kernel_added"]


def test_closest_previous_load_wins_over_the_most_recent() -> None:
    r = R([B(1, "a", [K("k1")]), B(2, "b", [K("k1"), K("k2")]), B(3, "c", [K("k1"), K("k3")])])
    last = explain_changes(r)[-1]
    assert last.from_seq == 1  # one difference (k3 added) beats two (k2 removed, k3 added)
    assert kinds(last) == ["kernel_added"]


def test_unique_family_groups_members_and_keeps_other_keys_apart() -> None:
    a = B(1, "a", [K("scale", "s1")], module="scale_1b264cd9")
    b = B(2, "b", [K("scale", "s2")], module="scale_f0f15735")
    c = B(3, "c", [K("offset", "o1")], module="offset_0badf00d")
    assert unique_family(a) == "scale" and module_family(a) == "scale [unique]"
    assert unique_family(B(9, "d", [K("other")], module="stage_deadbeef")) is None  # pattern alone is not enough
    (ch,) = explain_changes(R([a, b, c]))
    assert ch.module == "scale_f0f15735"
    assert kinds(ch) == ["unique_module_member", "kernel_changed"]


def test_function_change_without_kernel_diff() -> None:
    r = R([B(1, "a", [K("k1")], functions={"helper": "f1"}), B(2, "b", [K("k1")], functions={"helper": "f2"})])
    (c,) = explain_changes(r)[0].causes
    assert c.kind == "function_changed" and c.kernel == "helper"


def test_unexplained_hash_change_is_the_last_resort() -> None:
    r = R([B(1, "a", [K("k1")]), B(2, "b", [K("k1")])])
    (c,) = explain_changes(r)[0].causes
    assert c.kind == "unexplained" and "a" * 7 in c.detail


def test_log_parsed_builds_without_snapshots() -> None:
    prev = B(1, "a", [], options={})
    cur = B(2, "b", [], options={})
    (c,) = diff_builds(prev, cur)
    assert c.kind == "unexplained" and "log" in c.detail


def test_text_line_in_the_style_of_a_recompile_log() -> None:
    prev = B(1, "87cb37d", [K("k1")], module="__main__")
    cur = B(2, "5dedc34", [K("k1")], module="__main__", options={**OPTS, "fast_math": "True"}, ms=230.0)
    prev.hash = prev.hash_short = "87cb37d"
    cur.hash = cur.hash_short = "5dedc34"
    (ch,) = explain_changes(R([prev, cur]))
    assert render_change(ch) == (
        "module __main__ rebuilt (87cb37d -> 5dedc34) at app/__main__.py:16 (launch), 230 ms: "
        "option fast_math: False -> True"
    )


def test_cached_reload_and_custom_rel() -> None:
    r = R([B(1, "a", [K("k1")]), B(2, "b", [K("k1"), K("k2")], status="cached", ms=1.5)])
    (ch,) = explain_changes(r, rel=lambda f: "X/" + f.rsplit("/", 1)[-1])
    assert ch.trigger == "X/__main__.py:16 (launch)"
    assert ch.causes[0].file == "X/kernels.py"
    assert "reloaded from cache" in render_change(ch)


# ---------------------------------------------------------------------------------------------- real runs


@pytest.mark.slow
def test_real_late_kernels(measured) -> None:  # type: ignore[no-untyped-def]
    changes = explain_changes(measured("stencil_bank"))
    assert len(changes) == 2
    assert all(kinds(ch) == ["kernel_added"] for ch in changes)
    assert [ch.causes[0].kernel for ch in changes] == [
        "make_sharpen__locals__sharpen_pass",
        "make_edges__locals__edge_magnitude",
    ]
    assert all(ch.trigger.startswith("stencil_bank/bank.py:25") for ch in changes)


@pytest.mark.slow
def test_real_option_change(measured) -> None:  # type: ignore[no-untyped-def]
    (ch,) = explain_changes(measured("particle_prep"))
    assert [c.detail for c in ch.causes] == ["option fast_math: False -> True"]


@pytest.mark.slow
def test_real_overload(measured) -> None:  # type: ignore[no-untyped-def]
    changes = explain_changes(measured("image_pyramid"))
    assert [kinds(ch) for ch in changes] == [["overload_added"]] * 3
    assert [ch.causes[0].kernel for ch in changes] == ["detail", "reduce", "detail"]


@pytest.mark.slow
def test_real_single_builds_have_no_changes(measured) -> None:  # type: ignore[no-untyped-def]
    assert explain_changes(measured("sensor_fusion")) == []
    assert explain_changes(measured("plugin_filters")) == []  # three unique families, one member each
