"""The wizard's session: study folder names and backend arguments (no Qt, no processes)."""

from datetime import datetime

from tfturbo.cli_args import build_backend_parser
from tfturbo_gui.session import audit_argv, default_study_dir, probe_argv, workload_name


def test_study_folder_is_named_for_the_workload_and_the_time(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    when = datetime(2026, 11, 30, 9, 5, 7)
    assert default_study_dir("builtin:fp16-softmax-head", when) == \
        tmp_path / "tfturbo-studies" / "fp16-softmax-head-20261130-090507"
    assert workload_name("/models/my model.py") == "my-model"


def test_audit_and_probe_arguments_are_what_the_backend_parser_accepts():
    parser = build_backend_parser("trainer_backend")
    audit = parser.parse_args(["audit", *audit_argv("builtin:mlp", "mixed_bfloat16", jit=True, batch_size=96)])
    assert (audit.workload, audit.policy, audit.jit, audit.batch_size) == ("builtin:mlp", "mixed_bfloat16", True, 96)
    plain = parser.parse_args(["audit", *audit_argv("/w.py")])
    assert (plain.policy, plain.jit, plain.batch_size) == ("float32", False, None)
    probe = parser.parse_args(["probe-input", *probe_argv("builtin:mlp", seed=7, batch_size=32)])
    assert (probe.workload, probe.seed, probe.batch_size) == ("builtin:mlp", 7, 32)
