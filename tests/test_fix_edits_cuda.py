"""The CUDA rules' fixes as edits (CS-5, CS-7, CS-8, CS-13) on the bundled cases' own sources.

Each test copies a case's project (or its reference fix) to a temporary directory, diagnoses a report shaped like
that project's measurement (the CPU run plus the `--cuda-arch` replay, tests/test_cuda_replay.py compiles for
real), applies the finding's edits with `apply_edits` and checks the result: it compiles, it holds the change the
case's reference fix makes, and the tree that already has the fix gets no finding.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, fixture_case
from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.models import (
    ApiCall,
    Build,
    CudaBuild,
    CudaConcurrent,
    CudaReplay,
    EntryPoint,
    FileOwner,
    KernelInfo,
    LtoArtifacts,
    Report,
    RunResult,
    SampleResult,
    Site,
    Stat,
)
from warp_compile.probe.models.diagnosis import Finding
from warp_compile.probe.rules.cuda_pricing import startup
from warp_compile.probe.scan import scan


def _copy(case: str, variant: str, tmp: Path) -> Path:
    root = tmp / variant
    shutil.copytree(FIXTURES / case / variant, root)
    return root


def _cpu_builds(root: Path, modules: list[str]) -> list[Build]:
    """One CPU build per Warp module, its kernels where the scan found them (Warp records the decorator line)."""
    facts = scan(root)
    out = []
    for seq, mod in enumerate(modules, 1):
        kernels = [
            KernelInfo(key=k.name, file=str(root / k.file), line=k.line - 1)
            for k in facts.kernels
            if (k.warp_module or k.python_module) == mod
        ]
        h = (f"{seq:x}" * 64)[:64]
        out.append(Build(seq=seq, module=mod, hash=h, hash_short=h[:7], device="cpu", block_dim=1,
                         status="compiled", ms=300.0, native_ms=280.0, kernels=kernels,
                         options={"enable_backward": "False", "block_dim": "1"}))
    return out


def _cuda(module: str, bd: int, ms: float, kernels: list[str], **kw) -> CudaBuild:  # type: ignore[no-untyped-def]
    return CudaBuild(module=module, hash=f"{module}{bd}".encode().hex().ljust(64, "0")[:64], block_dim=bd, arch=90,
                     ms=ms, phases=kw.pop("phases", {"codegen": 20.0, "nvrtc": ms - 25.0, "other": 5.0}),
                     source_bytes=kw.pop("source_bytes", 50_000), kernels=kernels, via=["launch"], **kw)


def _report(root: Path, cpu: list[Build], cuda: list[CudaBuild], entry: str, **kw) -> Report:  # type: ignore[no-untyped-def]
    run = RunResult(phase="cold", wall_ms=6000.0, exit_code=0, module_ms=sum(b.ms for b in cpu))
    return Report(
        command=["python", "-m", entry.split("/")[0]], cwd=str(root), samples=1, warp_version="1.19.0", builds=cpu,
        cold_module_ms=Stat(median=run.module_ms, values=[run.module_ms]),
        sample_results=[SampleResult(index=0, ok=True, cold=run)],
        cuda_builds=cuda, cuda_replay=CudaReplay(arch=90, ms=5000.0, toolkit="13.4") if cuda else None,
        entry=EntryPoint(kind="module", name=entry.split("/")[0], file=str(root / entry), owner="project"),
        **kw,
    )


def _judged(report: Report, root: Path, mechanism: str) -> tuple[str, object]:
    d = diagnose(report, scan(root), root=root, sources=SourceView(root))
    for kind, items in (("finding", d.findings), ("ruled_out", d.ruled_out), ("not_reached", d.not_reached)):
        for it in items:
            if it.mechanism == mechanism:
                return kind, it
    raise AssertionError(f"{mechanism} not judged")


def _apply(f: Finding, root: Path) -> list[str]:
    """Apply the finding's edits to `root`; every file they touch still compiles."""
    assert f.edits, f.review
    touched = apply_edits(root, f.edits)
    for rel in touched:
        compile((root / rel).read_text(), rel, "exec")
    return touched


# ---------------------------------------------------------------------------------------------- CS-5

HEAT_SMOOTH = ["add_sources", "advect", "anisotropic", "jacobi", "limit_slopes", "reaction", "smooth"]
HEAT_CLAMP = ["clamp_field", "cool_edges", "energy", "histogram", "normalise", "relax"]


def _heat(root: Path, **cuda_kw) -> Report:  # type: ignore[no-untyped-def]
    cuda = [_cuda("heat_grid.solver", 64, 850.0, HEAT_SMOOTH, **cuda_kw),
            _cuda("heat_grid.solver", 128, 850.0, HEAT_CLAMP, **cuda_kw)]
    return _report(root, _cpu_builds(root, ["heat_grid.solver"]), cuda, "heat_grid/__main__.py")


def test_cs5_splits_heat_grid_by_launch_block_dim_with_decorator_edits(tmp_path: Path) -> None:
    root = _copy("cuda_heat_grid", "project", tmp_path)
    kind, f = _judged(_heat(root), root, "CS-5")
    assert kind == "finding" and f.applicability == "review" and f.upstream is None
    assert "CPU" in f.review and "heat_grid.solver" in f.review  # what a person must judge is named
    assert _apply(f, root) == ["heat_grid/solver.py"]
    # the six 128-kernels move (the larger group stays), each on its own decorator line; nothing else changes
    after = scan(root)
    moved = {k.name: k.warp_module for k in after.kernels}
    assert {n for n, m in moved.items() if m == "heat_grid.solver_bd128"} == set(HEAT_CLAMP)
    assert {n for n, m in moved.items() if m == "heat_grid.solver"} == set(HEAT_SMOOTH)
    fixed = scan(FIXTURES / "cuda_heat_grid" / "fixed")
    ref = {k.name: k.warp_module for k in fixed.kernels}
    # the same partition of kernels as the reference fix (which names both groups)
    assert {frozenset(n for n in moved if moved[n] == m) for m in set(moved.values())} == {
        frozenset(n for n in ref if ref[n] == m) for m in set(ref.values())
    }
    assert len(f.edits) == len(HEAT_CLAMP) and all(e.end_line == e.start_line for e in f.edits)


def test_cs5_on_the_reference_fix_is_ruled_out(tmp_path: Path) -> None:
    root = _copy("cuda_heat_grid", "fixed", tmp_path)
    cpu = _cpu_builds(root, ["heat_grid.smooth_pass", "heat_grid.clamp_pass"])
    cuda = [_cuda("heat_grid.smooth_pass", 64, 660.0, HEAT_SMOOTH), _cuda("heat_grid.clamp_pass", 128, 560.0,
                                                                          HEAT_CLAMP)]
    kind, _r = _judged(_report(root, cpu, cuda, "heat_grid/__main__.py"), root, "CS-5")
    assert kind == "ruled_out"


def test_cs5_estimate_takes_out_the_measured_per_block_dim_startup(tmp_path: Path) -> None:
    """Each split module is still the first build at its block_dim: the start-up stays, only kernel work goes."""
    root = _copy("cuda_heat_grid", "project", tmp_path)
    _k, plain = _judged(_heat(root), root, "CS-5")
    assert plain.estimated_saving_ms == pytest.approx(850.0 * 6 / 13 + 850.0 * 7 / 13, abs=0.2)
    assert "upper bound" in plain.saving_basis
    rep = _heat(root, repeat_ms=450.0)  # the replay repeated each first build: 400 ms of it was start-up
    assert startup(rep) is not None and startup(rep).ms == pytest.approx(400.0)
    _k, f = _judged(rep, root, "CS-5")
    assert f.estimated_saving_ms == pytest.approx(450.0 * 6 / 13 + 450.0 * 7 / 13, abs=0.2)
    assert "start-up at its block_dim (400 ms, measured" in f.saving_basis


def test_startup_from_later_builds_at_the_same_block_dim() -> None:
    """Without a repeat: a later build at a block_dim gives NVRTC's rate without the start-up."""
    first = _cuda("a", 64, 1000.0, ["k"], source_bytes=10_000, phases={"nvrtc": 1000.0})
    later = _cuda("b", 64, 600.0, ["j"], source_bytes=20_000, phases={"nvrtc": 600.0})
    rep = Report(command=["x"], cwd="/p", samples=1, cuda_builds=[first, later])
    s = startup(rep)
    assert s is not None and s.ms == pytest.approx(1000.0 - 0.03 * 10_000) and "later builds" in s.how
    assert startup(Report(command=["x"], cwd="/p", samples=1, cuda_builds=[first])) is None


def _dep_app(tmp: Path, launches: bool) -> tuple[Path, Report]:
    """An app launching two kernels of an installed library at two block_dims (or the library launching them)."""
    root = tmp / "app"
    root.mkdir()
    body = "import warp as wp\nimport stencils\n\n\ndef run(x):\n"
    if launches:
        body += ("    wp.launch(stencils.blur, dim=8, inputs=[x], block_dim=64)\n"
                 "    wp.launch(stencils.sharpen, dim=8, inputs=[x], block_dim=128)\n")
    else:
        body += "    stencils.run_all(x)\n"
    (root / "main.py").write_text(body + "\n\nrun(wp.zeros(8))\n")
    lib = "/venv/lib/python3.11/site-packages/stencils/__init__.py"
    cpu = Build(seq=1, module="stencils", hash="a" * 64, hash_short="a" * 7, device="cpu", block_dim=1,
                status="compiled", ms=300.0, kernels=[KernelInfo(key="blur", file=lib, line=5),
                                                      KernelInfo(key="sharpen", file=lib, line=12)])
    cuda = [_cuda("stencils", 64, 800.0, ["blur"]), _cuda("stencils", 128, 800.0, ["sharpen"])]
    owners = {lib: FileOwner(owner="dependency", distribution="stencils")}
    rep = _report(root, [cpu], cuda, "main.py", owners=owners)
    return root, rep


def test_cs5_on_a_dependencys_kernels_edits_the_apps_launches_not_the_library(tmp_path: Path) -> None:
    root, rep = _dep_app(tmp_path, launches=True)
    kind, f = _judged(rep, root, "CS-5")
    assert kind == "finding" and f.applicability == "review" and "speed" in f.review
    assert all(e.file == "main.py" for e in f.edits) and "site-packages" not in f.fix
    _apply(f, root)
    text = (root / "main.py").read_text()
    assert "stencils.sharpen, dim=8, inputs=[x], block_dim=64)" in text and "block_dim=128" not in text


def test_cs5_with_no_lever_in_the_app_is_an_upstream_report(tmp_path: Path) -> None:
    root, rep = _dep_app(tmp_path, launches=False)
    kind, f = _judged(rep, root, "CS-5")
    assert kind == "finding" and f.edits == [] and f.applicability == "manual"
    assert f.upstream is not None and f.upstream.distribution == "stencils"
    assert 'module="stencils_bd128"' in f.upstream.change and f.upstream.measured_ms == 1600.0
    assert "site-packages" not in f.fix


# ---------------------------------------------------------------------------------------------- CS-13

AUDIO = ["audio_chain.gain", "audio_chain.meter", "audio_chain.shaper", "audio_chain.smoother"]


def _audio(root: Path, **kw) -> Report:  # type: ignore[no-untyped-def]
    times = dict(zip(AUDIO, [700.0, 270.0, 520.0, 920.0], strict=True))
    cuda = [_cuda(m, 256, ms, [f"k{i}"]) for i, (m, ms) in enumerate(times.items())]
    conc = CudaConcurrent(workers=2, tasks=4, wall_ms=1400.0, serial_ms=2410.0, summed_ms=2900.0, cpus=2,
                          cpu_ms=2700.0, serial_cpu_ms=2400.0, load_avg=1.0)
    return _report(root, _cpu_builds(root, AUDIO), cuda, "audio_chain/__main__.py", cuda_concurrent=conc, **kw)


def test_cs13_preload_goes_into_the_entry_point_and_imports_what_it_names(tmp_path: Path) -> None:
    root = _copy("cuda_audio_chain", "project", tmp_path)
    kind, f = _judged(_audio(root), root, "CS-13")
    assert kind == "finding" and f.applicability == "review" and "GPU" in f.review
    assert _apply(f, root) == ["audio_chain/__main__.py"]
    text = (root / "audio_chain" / "__main__.py").read_text()
    for m in AUDIO:
        assert f'"{m}"' in text and f'wp.get_module("{m}")' in text
    assert "if wp.get_preferred_device().is_cuda:" in text  # never a parallel CPU load (CS-8)
    assert "block_dim=256" in text and "modules=None" not in text
    # the preload runs after the entry's own imports and before main() can launch anything
    assert text.index("importlib.import_module") > text.index("from .chain import process")
    assert text.index("wp.force_load") < text.index("def main")


def test_cs13_is_ruled_out_where_the_app_already_preloads_with_workers(tmp_path: Path) -> None:
    root = _copy("cuda_audio_chain", "fixed", tmp_path)
    kind, r = _judged(_audio(root), root, "CS-13")
    assert kind == "ruled_out" and "already in effect" in r.signal and "max_workers" in r.signal


@pytest.mark.slow
def test_cs13_preloaded_audio_chain_prints_the_same_on_the_cpu(tmp_path: Path) -> None:
    """The edited entry point runs (its imports resolve, the CUDA-only preload is skipped on a CPU machine) and
    prints what the case expects."""
    root = _copy("cuda_audio_chain", "project", tmp_path)
    _kind, f = _judged(_audio(root), root, "CS-13")
    _apply(f, root)
    out = subprocess.run([sys.executable, "-m", "audio_chain"], cwd=root, capture_output=True, text=True,
                         timeout=600, env={"WARP_CACHE_PATH": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == fixture_case("cuda_audio_chain")["expected_output"][0]


# ---------------------------------------------------------------------------------------------- CS-8


def test_cs8_serialises_the_cpu_preload_in_place(tmp_path: Path) -> None:
    root = _copy("terrain_tiles", "project", tmp_path)
    rep = _report(root, _cpu_builds(root, ["terrain_tiles.heightmap", "terrain_tiles.shading"]), [],
                  "terrain_tiles/__main__.py")
    kind, f = _judged(rep, root, "CS-8")
    assert kind == "finding" and f.applicability == "automatic"
    _apply(f, root)
    ref = (FIXTURES / "terrain_tiles" / "fixed" / "terrain_tiles" / "warmup.py").read_text()
    assert (root / "terrain_tiles" / "warmup.py").read_text() == ref  # exactly the reference fix


def test_cs8_on_a_recorded_call_in_a_dependency_is_an_upstream_report(tmp_path: Path) -> None:
    root = _copy("terrain_tiles", "fixed", tmp_path)
    lib = "/venv/lib/python3.11/site-packages/tiles/warm.py"
    call = ApiCall(api="force_load", site=Site(file=lib, line=4, function="warm"),
                   detail={"max_workers": "4", "device": "'cpu'"})
    rep = _report(root, _cpu_builds(root, ["terrain_tiles.heightmap"]), [], "terrain_tiles/__main__.py")
    rep.cache.calls.append(call)
    kind, f = _judged(rep, root, "CS-8")
    assert kind == "finding" and f.edits == [] and f.applicability == "manual" and f.upstream is not None
    kind, _r = _judged(_report(root, rep.builds, [], "terrain_tiles/__main__.py"), root, "CS-8")
    assert kind == "ruled_out"  # the reference fix: max_workers=1, nothing to change


# ---------------------------------------------------------------------------------------------- CS-7


def _mixer(root: Path, lto: bool) -> Report:
    phases = {"codegen": 30.0, "lto": 27000.0, "nvrtc": 6300.0, "other": 10.0} if lto else None
    extra = {"lto_artifacts": LtoArtifacts(count=1, bytes=5_500_000), "link_inputs": 1} if lto else {}
    cuda = [_cuda("patch_mixer.mixing", 32, 33340.0 if lto else 2000.0, ["mix_patches"],
                  **({"phases": phases} if phases else {}), **extra)]
    return _report(root, _cpu_builds(root, ["patch_mixer.mixing"]), cuda, "patch_mixer/__main__.py")


def test_cs7_turns_the_mathdx_gemm_off_for_the_tile_kernels_module(tmp_path: Path) -> None:
    root = _copy("cuda_patch_mixer", "project", tmp_path)
    kind, f = _judged(_mixer(root, lto=True), root, "CS-7")
    assert kind == "finding" and f.applicability == "review" and "Numerics" in f.review
    assert _apply(f, root) == ["patch_mixer/mixing.py"]
    text = (root / "patch_mixer" / "mixing.py").read_text()
    assert 'wp.set_module_options({"enable_mathdx_gemm": False})' in text
    assert text.index("set_module_options") < text.index("@wp.kernel")  # before the kernel is defined
    assert scan(root).settings_named("enable_mathdx_gemm")  # the scan reads it back as a module option


def test_cs7_without_lto_in_the_replay_is_ruled_out(tmp_path: Path) -> None:
    root = _copy("cuda_patch_mixer", "fixed", tmp_path)
    kind, _r = _judged(_mixer(root, lto=False), root, "CS-7")
    assert kind == "ruled_out"


def test_cs5_where_launches_share_one_block_dim_fixes_the_preload_not_the_layout(tmp_path: Path) -> None:
    """The launches agree (64); a preload without block_dim built the default 256 for nothing: nothing is split,
    the preload gets the launches' size."""
    root = tmp_path / "app"
    root.mkdir()
    (root / "main.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    x[wp.tid()] = 1.0\n\n\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    x[wp.tid()] = 2.0\n\n\n"
        'wp.force_load(device="cuda:0", modules=[wp.get_module(__name__)])\n'
        "x = wp.zeros(8)\nwp.launch(a, dim=8, inputs=[x], block_dim=64)\n"
        "wp.launch(b, dim=8, inputs=[x], block_dim=64)\n"
    )
    cpu = Build(seq=1, module="__main__", hash="a" * 64, hash_short="a" * 7, device="cpu", block_dim=1,
                status="compiled", ms=300.0, kernels=[KernelInfo(key="a", file=str(root / "main.py"), line=4),
                                                      KernelInfo(key="b", file=str(root / "main.py"), line=9)])
    cuda = [_cuda("__main__", 64, 800.0, ["a", "b"]), _cuda("__main__", 256, 700.0, [])]
    cuda[1].via = ["preload"]
    kind, f = _judged(_report(root, [cpu], cuda, "main.py"), root, "CS-5")
    assert kind == "finding" and f.applicability == "review" and "named module" not in f.fix
    _apply(f, root)
    assert 'wp.force_load(device="cuda:0", modules=[wp.get_module(__name__)], block_dim=64)' in (
        root / "main.py").read_text()
    assert f.estimated_saving_ms == 700.0  # the preload's variant goes entirely


def _lib_modules_report(root: Path, entry: EntryPoint) -> Report:
    lib = "/venv/lib/python3.11/site-packages/dsp"
    mods = ["dsp.filters", "dsp.mixers"]
    cpu = [Build(seq=i + 1, module=m, hash=c * 64, hash_short=c * 7, device="cpu", block_dim=1, status="compiled",
                 ms=300.0, kernels=[KernelInfo(key=f"k{i}", file=f"{lib}/{m.split('.')[1]}.py", line=5)])
           for i, (m, c) in enumerate(zip(mods, "ab", strict=True))]
    cuda = [_cuda(m, 256, 900.0, [f"k{i}"]) for i, m in enumerate(mods)]
    conc = CudaConcurrent(workers=2, tasks=2, wall_ms=1000.0, serial_ms=1800.0, summed_ms=2000.0)
    owners = {f"{lib}/{m.split('.')[1]}.py": FileOwner(owner="dependency", distribution="dsp") for m in mods}
    rep = _report(root, cpu, cuda, "main.py", cuda_concurrent=conc, owners=owners)
    return rep.model_copy(update={"entry": entry})


def test_cs13_preloads_a_dependencys_modules_from_the_apps_entry_point(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    (root / "main.py").write_text("import warp as wp\nimport dsp\n\n\ndsp.run()\n")
    entry = EntryPoint(kind="script", name="main.py", file=str(root / "main.py"), owner="project")
    kind, f = _judged(_lib_modules_report(root, entry), root, "CS-13")
    assert kind == "finding" and [e.file for e in f.edits] == ["main.py"]
    _apply(f, root)
    text = (root / "main.py").read_text()
    assert '("dsp.filters", "dsp.mixers",)' in text and text.index("wp.force_load") < text.index("dsp.run()")


def test_cs13_with_an_installed_entry_point_writes_a_launcher_of_the_apps_own(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    entry = EntryPoint(kind="console_script", name="dsp.cli:main",
                       file="/venv/lib/python3.11/site-packages/dsp/cli.py", owner="dependency")
    kind, f = _judged(_lib_modules_report(root, entry), root, "CS-13")
    assert kind == "finding" and len(f.edits) == 1 and f.edits[0].create and f.edits[0].file == "run_main.py"
    _apply(f, root)
    text = (root / "run_main.py").read_text()
    assert text.index("wp.force_load") < text.index("from dsp.cli import main")
