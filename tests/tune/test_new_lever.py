"""A new lever is one module: registered here, it is measured by `tfturbo tune`, listed in the wizard's steps,
named in the report and writes its part of the code to apply, with no other file edited."""

from __future__ import annotations

import sys

import pytest
from tests.tune.tune_fakes import FakeBackend, summary

from tfturbo import findings as F
from tfturbo.patch import changes as C
from tfturbo.tune.options import stages_list
from tfturbo.report import gather
from tfturbo.tune import levers
from tfturbo.tune.ladder import Ladder, TuneOptions
from tfturbo.tune.levers import Candidate, Lever


class AlwaysPrefetch(Lever):
    """The automatic tf.data fixes tried on any job (the built-in lever tries them only on an input-bound one)."""

    name = "always_prefetch"
    order = 45  # after steps_per_execution, before the batch size
    title = "Always prefetch"
    intro = "The tf.data fixes on a compute-bound job too: a host that prepares batches in parallel may help."
    settings_changed = ("input_fixes",)

    def candidates(self, policy):
        base = policy.best.settings
        if base.input_fixes:
            return []
        return [Candidate(self.rung_kind, "prefetch", base.with_(input_fixes=True), "the test lever", policy.best)]

    def findings(self, rung, verdict):
        return [F.Finding("ALWAYS_PREFETCH", f"prefetch measured: {'kept' if verdict.kept else 'not kept'}", "",
                          rung.name).to_dict()]

    def changes(self, rec, base, findings, code=None):
        return [C.ByHand(why="the test lever: prefetch", snippet="train_ds = train_ds.prefetch(8)  # always_prefetch")] \
            if rec.input_fixes and not base.input_fixes else []


@pytest.fixture
def lever():
    added = levers.register(AlwaysPrefetch())
    yield added
    levers.unregister(added.name)


def measured(s):
    ms = 100.0 * (0.8 if s.input_fixes else 1.0) * (1.3 if s.sixteen_bit else 1.0)
    return summary(ms, 0.9, policy=s.policy, jit=s.jit_compile, batch_size=s.batch_size or 64, memory_kind="host")


def test_a_lever_added_in_one_module_is_measured_listed_reported_and_coded(lever, tmp_path, qtbot):
    assert "always_prefetch" in levers.stages() and stages_list("always_prefetch") == ("always_prefetch",)
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=1),
                   runner=FakeBackend(measured)).run()
    rung = next(r for r in study.rungs if r.kind == "always_prefetch")
    names = [r.name for r in study.rungs]
    # its place in the checklist: after steps_per_execution, before the batch size
    assert names == ["01-baseline", "02-mixed_float16", "03-xla", "04-mixed_float16-xla", "05-xla-autoclustering",
                     "06-steps_per_execution", "07-prefetch", "08-larger_batch"]
    assert rung.kept and rung.compared_with == "01-baseline" and study.recommended.input_fixes
    assert "ALWAYS_PREFETCH" in F.codes_of(rung.decision.findings)
    assert "#       train_ds = train_ds.prefetch(8)  # always_prefetch" in study.snippet  # its part of the code
    report = gather(study.path)
    assert any(row.lever_title == "Always prefetch" for row in report.rungs if row.name == rung.name)

    from tfturbo_gui.main_window import MainWindow

    window = MainWindow("builtin:fake", launcher=lambda command, argv: [sys.executable, "-c", "pass"])
    qtbot.addWidget(window)
    titles = [row.title.text() for row in window.steps.rows]
    assert titles[3:6] == ["4. XLA compilation", "5. Always prefetch", "6. Batch size"]
    assert window.pages[4].stages() == ["always_prefetch"]
