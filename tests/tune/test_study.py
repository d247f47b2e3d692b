"""The ladder's flow and its documents, driven by a fake backend answering with recorded summaries."""

from __future__ import annotations

import json
import re
import threading

import pytest
import yaml

from tfturbo import cli
from tfturbo.errors import WorkloadError
from tfturbo.findings import codes_of
from tfturbo.tune import ladder as ladder_mod
from tfturbo.tune.ladder import Ladder, TuneOptions

LADDER_KEYS = {"name", "settings", "steps_per_s", "speedup", "speedup_ci95", "val_delta", "kept", "reason"}


def cpu_like(make_summary):
    """float32 100 ms; 16-bit slower; XLA faster; host memory unchanged."""
    def run(s):
        ms = {"float32": 100.0, "mixed_float16": 135.0, "mixed_bfloat16": 250.0}[s.policy] * (0.8 if s.jit_compile else 1)
        return make_summary(ms, 0.90, policy=s.policy, jit=s.jit_compile, memory_kind="host", peak_mb=800,
                            seed=len(s.policy) + 10 * s.jit_compile)
    return run


def gpu_like(make_summary, batch_exponent: float = 0.8):
    """bfloat16 faster with less memory; XLA faster still; a larger batch is faster per sample (a step's time
    grows as batch ** `batch_exponent`)."""
    def run(s):
        batch = s.batch_size or 64
        ms = (100.0 if s.policy == "float32" else 60.0) * (0.75 if s.jit_compile else 1) * (batch / 64) ** batch_exponent
        peak = (1000.0 if s.policy == "float32" else 600.0) * (0.9 if s.jit_compile else 1) * batch / 64
        return make_summary(ms, 0.90, policy=s.policy, jit=s.jit_compile, batch_size=batch, peak_mb=peak,
                            seed=int(ms * 10))
    return run


def test_cpu_ladder_keeps_what_measured_faster(tmp_path, make_summary, fake_backend):
    backend = fake_backend(cpu_like(make_summary), recommended="float32")
    lines = []
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=2), runner=backend,
                   say=lines.append).run()
    doc = study.document()
    names = [e["name"] for e in doc["ladder"]]
    assert names == ["01-baseline", "02-mixed_float16", "03-xla", "04-mixed_float16-xla", "05-steps_per_execution",
                     "06-batch128", "07-confirmation"]
    assert [e["rung"] for e in doc["ladder"]] == ["baseline", "mixed_precision", "xla", "xla", "steps_per_execution",
                                                  "larger_batch", "confirmation"]
    for e in doc["ladder"]:
        assert LADDER_KEYS <= set(e)
    base, mp, xla, mp_xla, spe, big, confirmation = doc["ladder"]
    # the 16-bit policy lost only on speed, so it is measured under XLA too; it must beat float32 + XLA
    assert mp_xla["settings"]["policy"] == "mixed_float16" and mp_xla["settings"]["jit_compile"]
    assert not mp_xla["kept"] and mp_xla["compared_with"] == "03-xla"
    assert base["speedup"] == 1.0 and base["kept"] and base["val_delta"] == 0.0
    assert not mp["kept"] and "slower" in mp["reason"] and "SLOWER_THAN_BASELINE" in codes_of(mp["findings"])
    assert xla["kept"] and xla["settings"]["policy"] == "float32" and xla["settings"]["jit_compile"]
    assert xla["speedup"] == pytest.approx(1.25, rel=0.05)
    # every verdict carries the `ab` speed and accuracy objects, from replicated pairs
    for e in (mp, xla, mp_xla):
        # B's full-length run for the accuracy gate (judged against the baseline run), then the speed pairs;
        # the first rung also trains the baseline from another seed (the gate's trainings' noise), once per study
        seed_runs = 2 if e is mp else 0
        assert e["speed"]["replicates"] >= 3 and len(e["replicates"]) == 1 + 2 * e["speed"]["replicates"] + seed_runs
        assert (f"{mp['name']}.a0" in e["replicates"] and f"{mp['name']}.a-1" in e["replicates"]) == (e is mp)
        assert e["speed"]["ci95"][0] <= e["speed"]["ratio"] <= e["speed"]["ci95"][1]
        assert e["accuracy"]["verdict"] == "within tolerance"
    assert spe["skipped"] and "ms" in spe["reason"] and "small share" in spe["reason"]  # 80 ms steps
    # host memory on a CPU is not freed by 16-bit or XLA: the batch is searched anyway (per sample faster here)
    # the fake's runs record no optimizer: the square-root rule, the milder (batch ×2, learning rate ×√2)
    assert big["kept"] and big["settings"]["batch_size"] == 128 and big["settings"]["lr_scale"] == pytest.approx(2 ** 0.5)
    assert "doubling" in big["reason"] and big["compared_with"] == "03-xla"
    assert confirmation["compared_with"] == "01-baseline" and confirmation["kept"]
    assert doc["recommended"]["jit_compile"] and doc["recommended"]["policy"] == "float32"
    assert doc["recommended"]["until_ci"] is None  # measurement-only settings are not part of the advice
    assert "jit_compile=True" in doc["snippet"] and "set_global_policy" not in doc["snippet"]
    assert doc["status"] == "completed"
    # one line per rung start and end, one for B's full-length run and one per paired replicate after it
    # (both arms in one process)
    assert sum(" pairs measure speed only" in line for line in lines) == 5
    assert any("larger batch" in line for line in lines)
    def pairs(e):
        return (len([r for r in e["replicates"] if not re.search(r"\.a(0|-1)$", r)]) - 1) // 2
    seed_lines = sum(bool(re.search(r"\.a(0|-1)$", r)) for e in (mp, xla, mp_xla, big, confirmation)
                     for r in e["replicates"])
    assert sum(line.startswith("     0") for line in lines) == \
        sum(1 + pairs(e) for e in (mp, xla, mp_xla, big, confirmation)) + seed_lines
    assert sum("in one process" in line for line in lines if line.startswith("     0")) == \
        sum(pairs(e) for e in (mp, xla, mp_xla, big, confirmation))


def test_rungs_share_seed_steps_and_validation_points(tmp_path, make_summary, fake_backend):
    backend = fake_backend(gpu_like(make_summary), recommended="mixed_bfloat16")
    Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, seed=7), runner=backend).run()
    runs = backend.runs
    candidates = [(r.policy, r.jit_compile, r.batch_size) for r in runs]
    assert candidates[0] == ("float32", False, None)
    # each rung's trial: its candidate's full-length run (the accuracy gate, against the baseline run), then
    # its reference (the best so far) and candidate in alternating order: BA, AB, ...
    # (the first rung's trial also trains the baseline from another seed, once per study, for the trainings' noise)
    assert candidates[1:8] == [("mixed_bfloat16", False, 64)] + [("float32", False, 64)] * 2 + \
        [("mixed_bfloat16", False, 64), ("float32", False, 64)] + [("float32", False, 64), ("mixed_bfloat16", False, 64)]
    assert [r.seed for r in runs if r.seed != 7] == [1007, 2007]
    assert ("mixed_bfloat16", True, 64) in candidates and ("mixed_bfloat16", True, 128) in candidates
    # equal samples seen, whatever the batch (batch 96 of the binary step: 65 steps, 13 per point, within 5%),
    # in every run that validates; the speed-only replicates are as long as their arm's steady seconds need
    assert {r.seed for r in runs} == {7, 1007, 2007}
    assert any(r.speed_only for r in runs)
    for r in runs:
        if r.speed_only:
            assert r.val_every == r.steps
            continue
        assert r.steps * (r.batch_size or 64) == pytest.approx(6400, rel=0.05)
        assert r.val_every * (r.batch_size or 64) == pytest.approx(1280, rel=0.05)
    assert {(r.until_ci, r.min_steps) for r in runs} == {(None, 0)}
    assert runs[0].profile is None  # the baseline gets the profiler window
    assert runs[1].profile is None  # a trial's full-length run is profiled
    assert all(r.profile == (0, 0) for r in runs[2:6])
    assert next(r for r in runs if r.batch_size == 128).lr_scale == pytest.approx((128 / 64) ** 0.5)


def test_gpu_ladder_searches_the_batch_size_within_the_memory_available(tmp_path, make_summary, fake_backend):
    # bfloat16 + XLA peaks at 540 MB at batch 64; 80% of 1.5 GB holds about batch 144 by a linear estimate; 144
    # is 4.8% faster per sample than 128 here (batch ** 0.6 a step; at ** 0.8, 2.4%, inside the fake's noise)
    backend = fake_backend(gpu_like(make_summary, 0.6), recommended="mixed_bfloat16",
                           available_memory=1536 * 2 ** 20)
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=backend).run()
    doc = study.document()
    names = [e["name"] for e in doc["ladder"]]
    assert names == ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-steps_per_execution", "05-batch128",
                     "06-batch144", "07-confirmation"]
    assert [e["kept"] for e in doc["ladder"]] == [True, True, True, False, True, True, True]
    double, largest, confirmation = doc["ladder"][4:]
    assert "doubling: batch 64 → 128" in double["reason"] and double["compared_with"] == "03-xla"
    assert "the largest size allowed" in largest["reason"] and "about 144" in largest["reason"]
    assert largest["compared_with"] == "05-batch128"  # each size against the best so far
    assert confirmation["compared_with"] == "01-baseline" and confirmation["speed"]["verdict"] == "faster"
    assert "square-root rule" in double["reason"] and "the optimizer is not known" in double["reason"]
    assert doc["recommended"]["batch_size"] == 144 and doc["recommended"]["lr_scale"] == pytest.approx(1.5)
    assert doc["recommended_rung"] == "06-batch144"
    assert "learning rate × 1.5" in doc["snippet"]  # left to the user: builtin:fake has no file to patch


def test_a_batch_that_runs_out_of_memory_ends_the_search_with_one_binary_step(tmp_path, make_summary,
                                                                                fake_backend):
    def run(s):
        doc = gpu_like(make_summary)(s)
        return {**doc, "status": "failed"} if (s.batch_size or 64) >= 256 else doc
    backend = fake_backend(run, recommended="mixed_bfloat16")
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=backend).run().document()
    sizes = [(e["settings"]["batch_size"], e["kept"]) for e in doc["ladder"] if e["rung"] == "larger_batch"]
    assert sizes == [(128, True), (256, False), (192, True)]
    assert doc["status"] == "completed" and doc["recommended"]["batch_size"] == 192


def test_a_larger_batch_that_is_not_faster_ends_the_search_without_a_binary_step(tmp_path, make_summary,
                                                                                  fake_backend):
    """Per-sample throughput that levels off at batch 128 (256 no faster): the search ends at 128, no trial of
    192 (a default tune of builtin:transformer spent six pairs on it for no measurable change)."""
    def run(s):
        batch = s.batch_size or 64
        if batch <= 128:
            return gpu_like(make_summary)(s)
        at_128 = gpu_like(make_summary)(s.with_(batch_size=128))["step_ms"]["median"]
        return make_summary(at_128 * batch / 128, 0.90, policy=s.policy, jit=s.jit_compile, batch_size=batch,
                            peak_mb=600.0 * batch / 64, seed=3)  # as many samples per second as at 128
    backend = fake_backend(run, recommended="mixed_bfloat16")
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=backend).run().document()
    sizes = [(e["settings"]["batch_size"], e["kept"], e["speed"]["verdict"]) for e in doc["ladder"]
             if e["rung"] == "larger_batch"]
    assert sizes == [(128, True, "faster"), (256, False, "no measurable change")]
    assert doc["status"] == "completed" and doc["recommended"]["batch_size"] == 128


def test_study_yaml_records_every_decision(tmp_path, make_summary, fake_backend):
    backend = fake_backend(cpu_like(make_summary))
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=backend).run()
    data = yaml.safe_load((tmp_path / "s" / "study.yaml").read_text())
    assert data["workload"] == "builtin:fake" and data["created"] and data["status"] == "completed"
    assert data["environment"]["recommended_policy"] == "float32"
    assert data["options"]["tolerance"] == {"accuracy_pp": 0.5, "loss_rel": 0.02, "judge_on": "metric"}
    assert [e["kept"] for e in data["ladder"]] == [e["kept"] for e in study.document()["ladder"]]
    assert all(e["reason"] for e in data["ladder"])
    assert data["recommended"]["jit_compile"] is True
    # every run of every trial is counted; steps_per_execution was skipped (100 ms steps)
    assert data["measurement"]["runs"] == 1 + sum(len(e["replicates"]) for e in data["ladder"][1:])
    json.dumps(data)  # plain data only


def test_audit_fixes_are_applied_to_the_rungs_they_concern(tmp_path, make_summary, fake_backend):
    audit = [{"code": "HEAD_NOT_FLOAT32", "severity": "error", "where": "head", "message": "softmax in 16-bit"},
             {"code": "PARTIAL_LAST_BATCH", "severity": "warning", "where": "train_ds", "message": "ragged"}]
    backend = fake_backend(gpu_like(make_summary), recommended="mixed_float16", audit=audit)
    Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=backend).run()
    base = backend.runs[0]
    mp = next(r for r in backend.runs if r.policy != "float32" and not r.jit_compile)
    xla = next(r for r in backend.runs if r.jit_compile)
    assert not base.fix_head and not base.drop_remainder
    assert mp.fix_head and not mp.drop_remainder
    assert xla.fix_head and xla.drop_remainder
    assert not any(r.fix_head for r in backend.runs if r.policy == "float32")  # the reference runs as kept
    backend2 = fake_backend(gpu_like(make_summary), recommended="mixed_float16", audit=audit)
    Ladder(TuneOptions("builtin:fake", tmp_path / "s2", steps=100, auto_fix=False), runner=backend2).run()
    assert not any(r.fix_head or r.drop_remainder for r in backend2.runs)


def test_both_policies_are_measured_when_asked(tmp_path, make_summary, fake_backend):
    backend = fake_backend(cpu_like(make_summary), recommended="float32")
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, both_policies=True), runner=backend).run()
    names = [e["name"] for e in study.document()["ladder"]]
    assert names[:3] == ["01-baseline", "02-mixed_float16", "03-mixed_bfloat16"]


def input_bound_like(make_summary, fixes_ms: float):
    """float32 100 ms on the user's pipeline, `fixes_ms` with the automatic tf.data fixes; the rest as cpu_like."""
    cpu = cpu_like(make_summary)

    def run(s):
        doc = cpu(s)
        if s.input_fixes:
            doc = make_summary(fixes_ms * (0.8 if s.jit_compile else 1), 0.90, policy=s.policy, jit=s.jit_compile,
                               memory_kind="host", peak_mb=800, seed=7 + 10 * s.jit_compile,
                               findings=[{"code": "INPUT_FIXES_APPLIED", "severity": "info", "where": "train_ds",
                                          "message": "tf.data fixes applied",
                                          "fix": "train_ds = train_ds.prefetch(tf.data.AUTOTUNE)"}])
        return doc
    return run


def test_input_bound_job_stops_after_the_probe_without_the_input_stage(tmp_path, make_summary, fake_backend):
    backend = fake_backend(cpu_like(make_summary), verdict="input_bound")
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", stages=("mixed_precision",)), runner=backend).run()
    doc = study.document()
    assert doc["status"] == "input_bound" and doc["ladder"] == [] and doc["recommended"] is None
    assert "INPUT_BOUND" in codes_of(doc["findings"])
    assert [c for c, _ in backend.calls] == ["env", "audit", "probe-input"]
    assert yaml.safe_load((tmp_path / "s" / "study.yaml").read_text())["probe"]["verdict"] == "input_bound"


def test_input_fixes_that_cure_the_job_continue_the_ladder_from_them(tmp_path, make_summary, fake_backend):
    backend = fake_backend(input_bound_like(make_summary, 50.0), verdict="input_bound", fixed_verdict="compute_bound")
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", stages=("input_pipeline", "xla")),
                   runner=backend).run()
    doc = study.document()
    assert doc["status"] == "completed", doc["message"]
    rungs = {e["rung"]: e for e in doc["ladder"]}
    assert rungs["input_pipeline"]["kept"] and rungs["input_pipeline"]["settings"]["input_fixes"]
    assert rungs["xla"]["settings"]["input_fixes"]  # the ladder goes on from the fixed configuration
    probes = [argv for c, argv in backend.calls if c == "probe-input"]
    assert len(probes) == 2 and "--input-fixes" in probes[1]  # re-probed with the fixes on
    assert doc["probe_input_fixes"]["verdict"] == "compute_bound"
    assert doc["recommended"]["input_fixes"] and "prefetch(tf.data.AUTOTUNE)" in doc["snippet"]
    assert "INPUT_FIXES_APPLIED" in codes_of(rungs["input_pipeline"]["findings"])


def test_input_fixes_that_leave_the_job_input_bound_stop_the_study(tmp_path, make_summary, fake_backend):
    backend = fake_backend(input_bound_like(make_summary, 50.0), verdict="input_bound")
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s"), runner=backend).run()
    doc = study.document()
    assert doc["status"] == "input_bound" and [e["rung"] for e in doc["ladder"]] == ["baseline", "input_pipeline"]
    assert "still input-bound" in doc["message"] and "faster" in doc["message"]  # what the fixes gained
    assert doc["probe_input_fixes"]["verdict"] == "input_bound"


def test_input_fixes_not_kept_stop_the_study_without_a_second_probe(tmp_path, make_summary, fake_backend):
    backend = fake_backend(input_bound_like(make_summary, 100.0), verdict="input_bound", fixed_verdict="compute_bound")
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s"), runner=backend).run()
    doc = study.document()
    assert doc["status"] == "input_bound" and "were not kept" in doc["message"]
    assert [c for c, _ in backend.calls].count("probe-input") == 1 and doc["probe_input_fixes"] is None


def test_a_compute_bound_job_has_no_input_pipeline_rung(tmp_path, make_summary, fake_backend):
    backend = fake_backend(cpu_like(make_summary))
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "s", stages=("input_pipeline",)), runner=backend).run().document()
    assert doc["status"] == "completed" and [e["rung"] for e in doc["ladder"]] == ["baseline"]
    assert not any(r.input_fixes for r in backend.runs)


def test_broken_workload_writes_nothing(tmp_path, make_summary, fake_backend, backend_result):
    backend = fake_backend(cpu_like(make_summary))
    real = backend.__call__

    def runner(command, argv, **kw):
        if command == "audit":
            return backend_result("audit", None, "failed", {"kind": "bad_input", "message": "x.py: no build_model()",
                                                     "fix": "define build_model()"})
        return real(command, argv, **kw)

    with pytest.raises(WorkloadError, match="no build_model"):
        Ladder(TuneOptions("x.py", tmp_path / "s"), runner=runner).run()
    assert not (tmp_path / "s").exists()


def test_ctrl_c_ends_the_study_cleanly(tmp_path, make_summary, fake_backend):
    cancel = threading.Event()

    def run(s):
        if s.policy != "float32":
            cancel.set()  # the user presses Ctrl-C during the mixed-precision rung
            return make_summary(120.0, 0.9, status="cancelled", steps_completed=30, policy=s.policy)
        return make_summary(100.0, 0.9)

    backend = fake_backend(run)
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=backend, cancel=cancel).run()
    data = yaml.safe_load((tmp_path / "s" / "study.yaml").read_text())
    assert data["status"] == "interrupted" and "Ctrl-C" in data["message"]
    assert [e["name"] for e in data["ladder"]] == ["01-baseline", "02-mixed_float16"]
    assert not data["ladder"][1]["kept"] and "cancelled" in data["ladder"][1]["reason"]
    assert len(backend.runs) == 2 and study.recommended is not None  # baseline, then B's first run was cancelled


def test_failed_baseline_fails_the_study(tmp_path, make_summary, fake_backend):
    backend = fake_backend(lambda s: make_summary(100.0, status="failed"))
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s"), runner=backend).run()
    assert study.status == "failed" and "baseline" in study.message and len(backend.runs) == 1
    assert not study.document()["ladder"][0]["kept"]
    assert study.recommended is None


def test_cli_json_document(tmp_path, make_summary, fake_backend, monkeypatch, capsys):
    monkeypatch.setattr(ladder_mod, "run_backend", fake_backend(cpu_like(make_summary)))
    code = cli.main(["tune", "builtin:fake", "--out", str(tmp_path / "s"), "--steps", "100", "--json", "--no-report"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert {"ladder", "recommended", "findings", "report"} <= set(doc)
    assert doc["ladder"][0]["speedup"] == 1.0 and doc["report"] is None
    for e in doc["ladder"]:
        assert LADDER_KEYS <= set(e) and isinstance(e["speedup_ci95"], (list, type(None)))


def test_cli_text_shows_table_reasons_and_snippet(tmp_path, make_summary, fake_backend, monkeypatch, capsys):
    monkeypatch.setattr(ladder_mod, "run_backend", fake_backend(cpu_like(make_summary)))
    code = cli.main(["tune", "builtin:fake", "--out", str(tmp_path / "s"), "--steps", "100", "--no-report"])
    out = capsys.readouterr().out
    assert code == 0
    assert "speed B/A" in out and "peak memory (one run)" in out and "Peak memory is one run's" in out
    rows = {line.split()[0]: line for line in out.splitlines() if line[:2] in ("1 ", "2 ", "3 ", "4 ", "5 ")}
    assert "1.00x" in rows["1"] and "baseline" in rows["1"]
    assert "mixed_float16" in rows["2"] and "0.7" in rows["2"] and "not kept" in rows["2"]  # 135 ms vs 100 ms
    assert "1.2" in rows["3"] and "KEPT" in rows["3"]
    assert "mixed_float16 + XLA" in rows["4"] and "not kept" in rows["4"]
    assert "skipped" in rows["5"]
    assert "Recommended: float32 + XLA" in out and "jit_compile=True" in out
    assert "How each rung was measured" in out and "replicate pair" in out
    assert "replicate pairs" in out and not re.search(r"\w\(s\)", out)  # issue 22 walk: "over 6 replicate pair(s)"


def test_chosen_policy_is_measured_instead_of_the_recommended(tmp_path, make_summary, fake_backend):
    backend = fake_backend(cpu_like(make_summary), recommended="mixed_bfloat16")
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, sixteen_bit_policy="mixed_float16"),
                   runner=backend).run()
    mp = study.document()["ladder"][1]
    assert mp["settings"]["policy"] == "mixed_float16" and "the policy asked for" in mp["reason"]
    assert ("audit", ["builtin:fake", "--policy", "mixed_float16", "--jit"]) in backend.calls


def test_ctrl_c_during_the_baseline_is_an_interruption_not_a_failure(tmp_path, make_summary, fake_backend):
    cancel = threading.Event()

    def run(s):
        cancel.set()
        return make_summary(100.0, 0.9, status="cancelled", steps_completed=10)

    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=fake_backend(run),
                   cancel=cancel).run()
    assert study.status == "interrupted" and study.recommended is None
    entry = study.document()["ladder"][0]
    assert not entry["kept"] and "cancelled" in entry["reason"]


def test_sixteen_bit_that_only_pays_under_xla_is_found(tmp_path, make_summary, fake_backend):
    """A CPU with native bfloat16: bf16 alone is slower, bf16 + XLA is the fastest configuration."""
    def run(s):
        ms = {("float32", False): 100.0, ("float32", True): 95.0, ("mixed_bfloat16", False): 250.0,
              ("mixed_bfloat16", True): 70.0}[(s.policy, s.jit_compile)]
        return make_summary(ms, 0.90, policy=s.policy, jit=s.jit_compile, memory_kind="host", peak_mb=800,
                            seed=int(ms))
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=fake_backend(run, "mixed_bfloat16"),
                 say=lambda line: None).run().document()
    rungs = {e["name"]: e for e in doc["ladder"]}
    assert not rungs["02-mixed_bfloat16"]["kept"]
    assert rungs["04-mixed_bfloat16-xla"]["kept"]
    assert doc["recommended"]["policy"] == "mixed_bfloat16" and doc["recommended"]["jit_compile"]


def test_a_sixteen_bit_rung_that_lost_accuracy_is_not_retried_under_xla(tmp_path, make_summary, fake_backend):
    def run(s):
        ms = 100.0 * (0.8 if s.jit_compile else 1) * (1.5 if s.policy != "float32" else 1)
        return make_summary(ms, 0.90 if s.policy == "float32" else 0.70, policy=s.policy, jit=s.jit_compile,
                            memory_kind="host", peak_mb=800, seed=int(ms))
    backend = fake_backend(run, "mixed_float16")
    Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100), runner=backend, say=lambda line: None).run()
    assert ("mixed_float16", True) not in [(r.policy, r.jit_compile) for r in backend.runs]
    assert ("float32", True) in [(r.policy, r.jit_compile) for r in backend.runs]


def test_xla_not_kept_is_followed_by_auto_clustering(tmp_path, make_summary, fake_backend):
    def run(s):
        ms = 100.0 * (1.3 if s.jit_compile else 1) * (0.8 if s.xla_autoclustering else 1)
        return make_summary(ms, 0.90, jit=s.jit_compile, memory_kind="host", seed=int(ms))
    backend = fake_backend(run)
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=1), runner=backend
                 ).run().document()
    xla = [e for e in doc["ladder"] if e["rung"] == "xla" and not e["settings"]["policy"].startswith("mixed")]
    assert [e["name"] for e in xla] == ["03-xla", "05-xla-autoclustering"]
    assert not xla[0]["kept"] and xla[1]["kept"] and xla[1]["settings"]["xla_autoclustering"]
    assert "XLA_AUTOCLUSTERING" in codes_of(xla[1]["findings"])
    assert doc["recommended"]["xla_autoclustering"] and 'set_jit("autoclustering")' in doc["snippet"]


ROTATION_REFUSED = {"code": "XLA_NOT_ACTIVE", "severity": "warning", "where": "model.compile(jit_compile=True)",
                    "message": "jit_compile=True was requested but the model runs without XLA (model.jit_compile is "
                               "False after compiling): layer 'random_rotation' (RandomRotation) has "
                               "supports_jit=False", "fix": "...",
                    "data": {"causes": ["layer 'random_rotation' (RandomRotation) has supports_jit=False"],
                             "evidence": "model.jit_compile is False after compiling"}}


def test_xla_the_audit_found_cannot_activate_is_not_run_and_says_what_would_enable_it(tmp_path, make_summary,
                                                                                     fake_backend):
    """Issue 42: the XLA trial ran 1 min 37 s for a model whose audit had just said XLA cannot activate
    (RandomRotation). The lever refuses the rung with one line why and what would enable it, no backend run has
    jit_compile=True, auto-clustering (which clusters around the blocking layer) is measured instead, and a
    resumed study reads the decided skip back without measuring anything again."""
    def run(s):
        return make_summary(100.0 * (0.8 if s.xla_autoclustering else 1), 0.90, jit=s.jit_compile,
                            memory_kind="host", seed=7 + s.xla_autoclustering)
    backend = fake_backend(run, audit=[ROTATION_REFUSED])
    lines: list[str] = []
    out = tmp_path / "s"
    Ladder(TuneOptions("builtin:fake", out, steps=100, max_batch_scale=1, stages=("xla",)), runner=backend,
           say=lines.append).run()
    assert not any(r.jit_compile for r in backend.runs)  # no trial of jit_compile=True was started
    data = yaml.safe_load((out / "study.yaml").read_text())
    xla = [e for e in data["ladder"] if e["rung"] == "xla"]
    assert [e["name"] for e in xla] == ["02-xla", "03-xla-autoclustering"]
    skipped, clustered = xla
    assert skipped["skipped"] and skipped["run"] is None and not skipped["kept"]
    assert "XLA cannot take effect" in skipped["reason"] and "RandomRotation" in skipped["reason"]
    assert "tf.data pipeline" in skipped["reason"] and "auto-clustering" in skipped["reason"]
    said = [line for line in lines if line.startswith("[02]")]
    assert len(said) == 1 and "XLA cannot take effect" in said[0] and "\n" not in said[0]  # one line, in the output
    assert clustered["settings"]["xla_autoclustering"] and clustered["kept"]
    assert "XLA_NOT_ACTIVE" in clustered["reason"] or "cannot take effect" in json.dumps(clustered)

    runs = len(backend.runs)
    (out / "study.yaml").write_text((out / "study.yaml").read_text().replace("status: completed",
                                                                             "status: interrupted"))
    resumed = Ladder(TuneOptions("builtin:fake", out, steps=100, max_batch_scale=1, stages=("xla",)),
                     runner=backend, say=lambda line: None, resume=True).run()
    again = yaml.safe_load((out / "study.yaml").read_text())
    assert [(e["name"], e["skipped"]) for e in again["ladder"]] == [(e["name"], e["skipped"]) for e in data["ladder"]]
    assert again["ladder"][1]["reason"] == skipped["reason"] and len(backend.runs) == runs
    assert resumed.recommended is not None and resumed.recommended.xla_autoclustering


def test_xla_the_audit_did_not_refuse_is_measured(tmp_path, make_summary, fake_backend):
    backend = fake_backend(lambda s: make_summary(100.0 * (0.8 if s.jit_compile else 1), 0.90, jit=s.jit_compile,
                                                  memory_kind="host", seed=3 + s.jit_compile))
    Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=1, stages=("xla",)),
           runner=backend, say=lambda line: None).run()
    assert any(r.jit_compile for r in backend.runs)


def test_the_report_lists_the_xla_step_not_run_with_its_whole_reason(tmp_path, make_summary, fake_backend):
    """The PDF's decision cell is shortened; "Steps not run" carries the whole reason, what would enable XLA too."""
    from pypdf import PdfReader

    from tfturbo.report import write_report

    backend = fake_backend(lambda s: make_summary(100.0, 0.90, memory_kind="host", seed=5), audit=[ROTATION_REFUSED])
    out = tmp_path / "s"
    Ladder(TuneOptions("builtin:fake", out, steps=100, max_batch_scale=1, stages=("xla",)), runner=backend,
           say=lambda line: None).run()
    pdf = write_report(out, tmp_path / "report.pdf")
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(str(pdf)).pages).split())
    section = text.split("Steps not run", 1)[1]
    assert "XLA compilation: XLA cannot take effect for this model" in section
    assert "RandomRotation" in section and "move the layers marked supports_jit=False into the tf.data pipeline" \
        in section and "auto-clustering" in section
