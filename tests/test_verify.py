"""`diagnose --verify` without processes: a stand-in `try` gives the comparison; the finding gets its measurement,
the ranking follows measured savings, and a disagreement beyond the band says so."""

from __future__ import annotations

from pathlib import Path

from warp_compile.probe.compare_models import Clock, Comparison, Equivalence
from warp_compile.probe.diagnosis_models import Diagnosis, Finding
from warp_compile.probe.experiment import TryResult
from warp_compile.probe.models import Stat
from warp_compile.probe.verify import verify


def _comparison(before: float, after: float, band: float) -> Comparison:
    clock = Clock(name="cold_module", title="cold module work", before=Stat(median=before, values=[before]),
                  after=Stat(median=after, values=[after]), band_ms=band)
    return Comparison(verdict="IMPROVED", reason="r", exit_code=0, headline="compile_elapsed", clocks=[clock],
                      equivalence=Equivalence(status="equivalent"), before_label="as is", after_label="with")


def _finding(mech: str, estimate: float, experiment: dict | None) -> Finding:
    return Finding(mechanism=mech, title="t", severity="medium", confidence="high", fix="f",
                   estimated_saving_ms=estimate, experiment=experiment)


def test_measured_savings_fill_findings_and_rank_them() -> None:
    calls: list[dict] = []

    def fake_try(command, cwd, settings, **kw):  # type: ignore[no-untyped-def]
        calls.append(dict(settings))
        c = _comparison(5000.0, 4600.0, 50.0) if "max_unroll" in settings else _comparison(5000.0, 2000.0, 100.0)
        return TryResult(command=command, cwd=str(cwd), settings=dict(settings),
                         applied={k: "applied" for k in settings}, comparison=c)

    d = Diagnosis(command=["python", "app.py"], cwd="/p", findings=[
        _finding("CS-11", 3000.0, {"max_unroll": 4}),
        _finding("CS-10", 2800.0, {"enable_backward": False}),
        _finding("CS-4", 1000.0, None),
    ])
    out = verify(d, ["python", "app.py"], Path("/p"), run=fake_try)
    assert calls == [{"max_unroll": 4}, {"enable_backward": False}]
    # the measured saving takes the estimate's place: 3,000 measured > 1,000 estimated > 400 measured
    assert [f.mechanism for f in out.findings] == ["CS-10", "CS-4", "CS-11"]
    cs10, cs11 = out.findings[0], out.findings[2]
    assert cs10.measured is not None and cs10.measured.saving_ms == 3000.0 and "agrees" in cs10.measured.agreement
    assert cs11.measured is not None and cs11.measured.saving_ms == 400.0
    assert "below the estimate" in cs11.measured.agreement and out.findings[1].measured is None


def test_a_setting_that_did_not_take_is_said_plainly() -> None:
    def fake_try(command, cwd, settings, **kw):  # type: ignore[no-untyped-def]
        return TryResult(command=command, cwd=str(cwd), settings=dict(settings),
                         applied={k: "unsupported" for k in settings}, comparison=_comparison(100.0, 99.0, 5.0))

    d = Diagnosis(command=["python"], cwd="/p", findings=[_finding("CS-12", 500.0, {"use_precompiled_headers": True})])
    f = verify(d, ["python"], Path("/p"), run=fake_try).findings[0]
    assert f.measured is not None and "did not take" in f.measured.agreement
