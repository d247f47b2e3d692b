"""A configuration's profile found where the design record says (issue 40: profiled once per study), on a
reopened study's rung pages — no live trial, only study.yaml."""

from __future__ import annotations

from types import SimpleNamespace

import yaml

from tests.report.report_fixtures import make_study
from tfturbo import profile as prof
from tfturbo.runfiles import RUNS_DIR
from tfturbo.tune.study import Study
from tfturbo_gui.profile_view import reference_profile, rung_profile


def fake_profile(matmul_ms: float) -> prof.Profile:
    rows = [("_MklMatMul", "StatefulPartitionedCall/functional_1/dense_1/MatMul", matmul_ms * 10e3, 10, None),
            ("AddV2", "StatefulPartitionedCall/functional_1/add", 2.0 * 10e3, 10, None)]
    return prof.build(rows, 10, prof.SOURCE_OP_STATS, wall_ms_per_step=9.0,
                      sixteen_bit=prof.sixteen_bit_from_ops(rows, prof.SOURCE_OP_STATS, "test"),
                      step_breakdown=prof.not_available("the CPU marks no device steps"))


def test_a_reopened_confirmation_shows_the_profile_its_configuration_got_in_its_own_rung(tmp_path):
    """The confirmation trains both configurations without the profiler (each was profiled in its own rung): its
    page shows the recommended configuration's profile from that rung's run and compares it with the baseline's,
    as its design record says."""
    root = make_study(tmp_path / "study")
    doc = yaml.safe_load((root / "study.yaml").read_text())
    confirmation = next(r for r in doc["ladder"] if "confirmation" in r["name"])
    kept = doc["recommended_rung"]
    confirmation["design_record"]["profiled_in"] = {"a": "01-baseline", "b": kept}
    (root / "study.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    fake_profile(10.0).save(root / RUNS_DIR / "01-baseline")
    fake_profile(5.0).save(root / RUNS_DIR / kept)
    study = Study.load(root)
    rung = next(r for r in study.rungs if r.name == confirmation["name"])
    session = SimpleNamespace(study=study, baseline=study.baseline, trial_of=lambda r: None,
                              ensure_study=lambda: study, rung_path=lambda r: study.path / str(r.run))
    own, where = rung_profile(session, rung)
    assert own.available and where is not None and where.name == kept
    reference, words = reference_profile(session, rung)
    assert reference.available and words == "the baseline"
    assert reference.op_ms_per_step > own.op_ms_per_step
