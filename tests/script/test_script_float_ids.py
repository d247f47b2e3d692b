"""Token ids through a float Input (keras-io's text transformer: `layers.Input(shape=(maxlen,))` into a
TokenAndPositionEmbedding) under mixed_bfloat16: the audit's own integer-input check called the model on the
rounded ids, and the lookup of 1999 rounded to 2000 in a table of 2,000 killed the audit with InvalidArgumentError
(so a study stopped at "the audit failed"). It now reports INTEGER_INPUT_16BIT with the fix."""

from __future__ import annotations

import json

import pytest
from script_helpers import cli_json, script_in_folder

from tests.conftest import run_cli

from tfturbo.findings import ERROR, INTEGER_INPUT_16BIT

SCRIPT = "text_float_ids.py"


@pytest.fixture(scope="module")
def bf16_audit(tmp_path_factory) -> dict:
    """The audit of the script under mixed_bfloat16, once for the module (a backend process, ~6 s)."""
    script = script_in_folder(tmp_path_factory, SCRIPT)
    return cli_json("audit", SCRIPT, "--policy", "mixed_bfloat16", cwd=script.parent)


def test_float_token_ids_under_bfloat16_are_a_finding_not_a_crashed_audit(bf16_audit):
    [finding] = [f for f in bf16_audit["findings"] if f["code"] == INTEGER_INPUT_16BIT]
    assert finding["severity"] == ERROR and finding["where"] == "token_and_position_embedding"
    message = finding["message"]
    assert "bfloat16 is exact only up to 256" in message and "distinct ids merge" in message
    assert "the largest rounds up (1,999 → 2,000): an id past the vocabulary's end fails the run" in message
    # the fix: the script's own Input line with dtype="int32", or tfturbo's automatic fix
    assert finding["fix"].startswith(f'# {SCRIPT} line 42:\ninputs = layers.Input(shape=(maxlen,), dtype="int32")')
    assert "fix_int_inputs=on" in finding["fix"]
    assert bf16_audit["built_under"] == "mixed_bfloat16"  # every 16-bit check ran on the model as the policy builds it


def test_a_lookup_that_failed_under_bfloat16_says_bfloat16s_exact_range():
    """The run's diagnosis of the same failure said "float16 is exact only up to 2,048" under mixed_bfloat16."""
    from tfturbo.settings import RunSettings
    from trainer_backend.diagnostics.training_failure import diagnose

    exc = ValueError("Graph execution error: ... indices[22,10] = 2000 is not in [0, 2000) [[{{node gather}}]]")
    finding, _ = diagnose(exc, None, RunSettings("w", policy="mixed_bfloat16"))
    assert finding.code == INTEGER_INPUT_16BIT and "rounded to bfloat16" in finding.message
    assert "bfloat16 is exact only up to 256" in finding.message and "float16 is exact" not in \
        finding.message.replace("bfloat16 is exact", "")
    finding, _ = diagnose(exc, None, RunSettings("w", policy="mixed_float16"))
    assert "float16 is exact only up to 2,048" in finding.message


@pytest.fixture(scope="module")
def bf16_run(tmp_path_factory) -> dict:
    """A 16-bit run of the script (a tune's mixed_bfloat16 rung): 10 steps, once for the module (~15 s)."""
    script = script_in_folder(tmp_path_factory, SCRIPT)
    proc = run_cli("run", SCRIPT, "--policy", "mixed_bfloat16", "--steps", "10", "--out", "run", "--json",
                   timeout=300, cwd=script.parent)
    assert proc.returncode == 1, proc.stderr[-2000:]  # the lookup of 2000 fails training itself
    return json.loads(proc.stdout)


def test_the_16bit_run_fails_with_one_finding_that_names_the_layer(bf16_run):
    """The run's own integer-input check (before training) died on the rounded ids too ("integer-input check
    skipped"), so the run said only "model input"; it now names the layer, and the training failure that follows
    adds no second INTEGER_INPUT_16BIT."""
    assert bf16_run["status"] == "failed" and "fix_int_inputs=on" in bf16_run["error"]["fix"]
    [finding] = [f for f in bf16_run["findings"] if f["code"] == INTEGER_INPUT_16BIT]
    assert finding["where"] == "token_and_position_embedding" and "1,999 → 2,000" in finding["message"]
