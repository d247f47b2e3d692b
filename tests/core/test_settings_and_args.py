"""Run settings: one definition for CLI, backend and ladder; bad values are one-line user errors."""

import pytest

from tfturbo.cli_args import build_backend_parser, parse_run_settings, run_argv, settings_from_args
from tfturbo.errors import UserError
from tfturbo.settings import RunSettings


def test_run_argv_round_trips_every_setting():
    s = RunSettings(workload="builtin:mlp", policy="mixed_bfloat16", jit_compile=True, batch_size=96, steps=150,
                    seed=7, strategy="mirrored", profile=(10, 20), val_every=30, val_steps=5, fix_head=True,
                    drop_remainder=True, lr_scale=1.5, until_ci=0.02, min_steps=60)
    assert parse_run_settings(run_argv(s, "/tmp/x")) == s


def test_defaults_round_trip():
    s = RunSettings(workload="w.py")
    assert parse_run_settings(run_argv(s, "out")) == s


def test_settings_dict_round_trip_ignores_unknown_keys():
    s = RunSettings(workload="w.py", profile=(5, 9))
    d = s.to_dict() | {"from_the_future": 1}
    assert RunSettings.from_dict(d) == s


@pytest.mark.parametrize("kwargs, message", [
    ({"policy": "float8"}, "unknown precision policy"),
    ({"batch_size": 0}, "batch size must be positive"),
    ({"steps": 0}, "steps must be positive"),
    ({"profile": (20, 10)}, "profile window"),
    ({"until_ci": 2.0}, "--until-ci"),
])
def test_bad_settings_are_user_errors_with_a_fix(kwargs, message):
    with pytest.raises(UserError, match=message) as e:
        RunSettings(workload="w.py", **kwargs)
    assert e.value.exit_code == 2


def test_profile_argument_is_parsed_and_validated():
    parser = build_backend_parser("t")
    args = parser.parse_args(["run", "builtin:mlp", "--out", "o", "--profile", "0:0"])
    assert settings_from_args(args).effective_profile() is None
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "builtin:mlp", "--out", "o", "--profile", "abc"])


def test_default_profile_window_skips_warmup_and_fits_the_run():
    assert RunSettings(workload="w", steps=300).effective_profile() == (15, 35)
    start, stop = RunSettings(workload="w", steps=30).effective_profile()
    assert 0 < start < stop <= 20


def test_every_declared_setting_is_a_run_option_and_nothing_else_is():
    from tfturbo.settings import declared
    parser = build_backend_parser("t")
    run = parser._subparsers._group_actions[0].choices["run"]
    options = {o for a in run._actions for o in a.option_strings} - {"-h", "--help", "--out", "--json"}
    declared_flags = {s.flag for _, s in declared() if s.flag} | {s.off[0] for _, s in declared() if s.off}
    assert options == declared_flags


def test_automatic_fixes_are_offered_recorded_and_reported_from_their_declaration():
    from tfturbo.findings import HEAD_NOT_FLOAT32, INPUT_BOUND, INTEGER_INPUT_16BIT, PARTIAL_LAST_BATCH
    from tfturbo.settings import automatic_fixes, fixes_on, switched_on_rows
    assert {code: name for code, (name, _) in automatic_fixes().items()} == {
        HEAD_NOT_FLOAT32: "fix_head", INTEGER_INPUT_16BIT: "fix_int_inputs", PARTIAL_LAST_BATCH: "drop_remainder",
        INPUT_BOUND: "input_fixes"}
    s = RunSettings(workload="w.py", drop_remainder=True)
    assert fixes_on(s) == ["drop the partial last batch"]
    assert switched_on_rows(s) == [("Training data", "batch(..., drop_remainder=True)")]
    assert "--drop-remainder" in run_argv(s, "o") and "--fix-head" not in run_argv(s, "o")


def test_a_fix_the_backend_went_without_is_named_from_its_finding():
    """The backend's FIX_NOT_APPLIED finding (as its `run` command writes it) tells which switched-on fix a run
    did not really use; the wizard must not call that fix applied."""
    from trainer_backend.commands.run import fix_not_applied

    from tfturbo.settings import fixes_not_applied, fixes_on
    s = RunSettings(workload="w.py", fix_head=True, drop_remainder=True)
    found = [fix_not_applied("--fix-head", "the model still returns float16 outputs", "tf.cast(...)").to_dict(),
             {"code": "HEAD_NOT_FLOAT32", "where": "--fix-head", "message": "not this one"}]
    assert fixes_not_applied(found) == {"fix_head"}
    assert fixes_on(s, fixes_not_applied(found)) == ["float32 output layer: not applied",
                                                     "drop the partial last batch"]
    assert fixes_not_applied([]) == set() and fixes_on(s) == ["float32 output layer", "drop the partial last batch"]
