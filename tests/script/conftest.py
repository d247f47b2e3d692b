"""Fixtures for script mode: each test script is copied into a fresh folder that is also the working
directory, so a test can see that nothing the script would write after fit() was written.

Backend runs are expensive; each one the issue's "done when" names runs once per session through the
real `tfturbo` CLI and several tests read it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from script_helpers import cli_json, script_in_folder

def run_beside(script: Path, workload: str, *args: str) -> tuple[dict, Path]:
    """`tfturbo run` from the script's own folder (as its user would), into run/ beside it."""
    out = script.parent / "run"
    return cli_json("run", workload, "--out", str(out), *args, cwd=script.parent), out


@pytest.fixture(scope="session")
def mlp_script(tmp_path_factory) -> Path:
    return script_in_folder(tmp_path_factory, "mlp_top_level.py")


@pytest.fixture(scope="session")
def mlp_script_run(mlp_script) -> tuple[dict, Path]:
    return run_beside(mlp_script, mlp_script.name, "--steps", "40")


@pytest.fixture(scope="session")
def mlp_script_audit(mlp_script) -> dict:
    return cli_json("audit", mlp_script.name, "--policy", "mixed_float16", cwd=mlp_script.parent)


@pytest.fixture(scope="session")
def text_script(tmp_path_factory) -> Path:
    return script_in_folder(tmp_path_factory, "text_main_argparse.py")


@pytest.fixture(scope="session")
def text_script_run(text_script) -> tuple[dict, Path]:
    return run_beside(text_script, str(text_script), "--steps", "30", "--policy", "mixed_bfloat16", "--fix-head",
                      "--", "--epochs", "2", "--length", "48")


@pytest.fixture(scope="session")
def text_script_tune(text_script) -> tuple[dict, Path]:
    out = text_script.parent / "study"
    doc = cli_json("tune", str(text_script), "--out", str(out), "--steps", "30", "--no-report",
                   "--policy", "mixed_bfloat16", "--stages", "mixed_precision", "--min-replicates", "2",
                   "--max-replicates", "2", "--steady-s", "0", "--", "--length", "48", cwd=text_script.parent)
    return doc, out
