"""The profiler once per configuration in a study (issue 40): no run asks for a profiler window whose
configuration already has a profile in the study, and every rung's design record says where each arm's
profile is, which is where the report looks."""

from __future__ import annotations

import yaml

from tfturbo.settings import NO_PROFILE, configuration_key
from tfturbo.tune.ladder import Ladder, TuneOptions

from tests.tune.tune_fakes import FakeBackend, summary
from test_study import gpu_like


def test_a_scripts_study_profiles_each_configuration_once_and_records_where(tmp_path):
    """A training script's trials cannot share a process; with full-length pairs (--steady-s 0) A's first run is
    trained again in every trial (no re-use pays). It used to ask for the profiler window each time, so the
    baseline configuration was profiled in the baseline and again in every trial's `.a1`; now the runs that ask
    for one are one per configuration, and study.yaml says which run holds each arm's profile."""
    script = tmp_path / "train.py"
    script.write_text("print('trains')\n")
    out = tmp_path / "s"
    runner = FakeBackend(gpu_like(summary), recommended="mixed_bfloat16", available_memory=8 << 30)
    names: list[str] = []
    real = runner.__call__

    def named(command, argv, *args, **kw):
        if command == "run":
            names.append(argv[argv.index("--out") + 1].rsplit("/", 1)[-1])
        return real(command, argv, *args, **kw)

    opts = TuneOptions(str(script), out, steps=100, min_replicates=2, max_replicates=3, steady_s=0.0)
    Ladder(opts, runner=named).run()
    assert len(names) == len(runner.runs)
    profiled = [(name, s) for name, s in zip(names, runner.runs) if s.profile != NO_PROFILE]
    keys = [configuration_key(s, 64) for _, s in profiled]
    assert len(keys) == len(set(keys)), [name for name, _ in profiled]  # one profiler window per configuration
    a1 = [name for name, _ in profiled if name.endswith(".a1")]
    assert not a1, a1  # every trial's reference configuration was profiled before (the baseline's, a kept rung's)
    trained_again = [name for name in names if name.endswith(".a1")]
    assert trained_again, "the scenario: A's full-length run trained in the trials"

    doc = yaml.safe_load((out / "study.yaml").read_text())
    by_name = {name: s for name, s in profiled}
    for rung in doc["ladder"][1:]:
        record = rung.get("design_record") or {}
        where = record.get("profiled_in")
        if not where:
            continue
        assert where["a"] in by_name, (rung["name"], where)  # a run that had the profiler window
        assert by_name[where["a"]].policy == runner.runs[names.index(f"{rung['name']}.a1")].policy
    first = doc["ladder"][1]
    assert first["design_record"]["profiled_in"] == {"a": "01-baseline", "b": first["name"]}


def test_the_runs_index_keeps_the_profiled_run_of_a_configuration_to_reuse(tmp_path):
    """Two full-length runs trained the same way (the baseline's, profiled, and a later trial's reference run,
    trained again without the profiler): a trial that re-uses one names the profiled one in its plan, so the run
    it points the user at is where that configuration's profile is."""
    from tfturbo.run_summary import RunSummary
    from tfturbo.settings import RunSettings
    from tfturbo.trials.speed import SpeedRule
    from tfturbo.trials.trial import Trial
    from tfturbo.tune.engine import StudyEngine
    from tfturbo.tune.study import Study

    engine = StudyEngine(TuneOptions("builtin:mlp", tmp_path), Study(tmp_path, "builtin:mlp", {}))
    base = RunSettings("builtin:mlp", batch_size=64, steps=100, val_every=20)
    done = RunSummary.from_dict({**summary(10.0), "status": "completed"})
    engine._index(base, done, "01-baseline")  # the default profiler window
    engine._index(base.with_(profile=NO_PROFILE, no_model=True), done, "03-xla.a1")
    assert engine.profiled == {configuration_key(base): "01-baseline"}
    trial = Trial(base, base.with_(xla_autoclustering=True), SpeedRule(3, 6, steady_s=3.0),
                  finished=engine.finished, profiled=engine.profiled)
    assert trial.plan().reused == "01-baseline"
    assert trial.profiled_in() == {"a": "01-baseline"}
    first = trial.next_run()
    assert first.arm == "b" and first.settings.profile is None  # B's configuration: its first profile


def test_an_a_a_prime_trial_profiles_its_one_configuration_once():
    """`ab --b seed=N`: both arms are one configuration (the seed only says how it is measured), so A's first run
    takes B's profile instead of capturing another."""
    from tfturbo.settings import RunSettings
    from tfturbo.trials.speed import SpeedRule
    from tfturbo.trials.trial import Trial

    a = RunSettings("builtin:fake", batch_size=64, steps=100, val_every=20)
    trial = Trial(a, a.with_(seed=7), SpeedRule(3, 6, steady_s=0.0))
    first = trial.next_run()
    assert (first.arm, first.settings.profile) == ("b", None)
    trial.record(first, {**summary(10.0), "settings": first.settings.to_dict()}, None)
    second = trial.next_run()
    assert second.arm == "a" and second.settings.profile == NO_PROFILE
    assert trial.profiled_in() == {"a": "b1", "b": "b1"}
