"""Fixtures for script mode: each test script is copied into a fresh folder that is also the working
directory, so a test can see that nothing the script would write after fit() was written.

Backend runs are expensive; each one the issue's "done when" names runs once per session through the
real `tfturbo` CLI and several tests read it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from script_helpers import cli_json, script_in_folder

@pytest.fixture(scope="session")
def mlp_script(tmp_path_factory) -> Path:
    return script_in_folder(tmp_path_factory, "mlp_top_level.py")


@pytest.fixture(scope="session")
def mlp_script_run(mlp_script) -> tuple[dict, Path]:
    out = mlp_script.parent / "run"
    return cli_json("run", mlp_script.name, "--out", str(out), "--steps", "40", cwd=mlp_script.parent), out


@pytest.fixture(scope="session")
def mlp_script_audit(mlp_script) -> dict:
    return cli_json("audit", mlp_script.name, "--policy", "mixed_float16", cwd=mlp_script.parent)


@pytest.fixture(scope="session")
def mlp_script_tune(mlp_script) -> dict:
    out = mlp_script.parent / "study"
    return cli_json("tune", mlp_script.name, "--out", str(out), "--steps", "30", "--no-report",
                    "--stages", "mixed_precision", "--min-replicates", "2", "--max-replicates", "2",
                    cwd=mlp_script.parent)


@pytest.fixture(scope="session")
def text_script(tmp_path_factory) -> Path:
    return script_in_folder(tmp_path_factory, "text_main_argparse.py")


@pytest.fixture(scope="session")
def text_script_run(text_script) -> tuple[dict, Path]:
    out = text_script.parent / "run"
    doc = cli_json("run", str(text_script), "--out", str(out), "--steps", "30", "--policy", "mixed_bfloat16",
                   "--fix-head", "--", "--epochs", "2", "--length", "48", cwd=text_script.parent)
    return doc, out


@pytest.fixture(scope="session")
def text_script_tune(text_script) -> tuple[dict, Path]:
    out = text_script.parent / "study"
    doc = cli_json("tune", str(text_script), "--out", str(out), "--steps", "30", "--no-report",
                   "--policy", "mixed_bfloat16", "--stages", "mixed_precision", "--min-replicates", "2",
                   "--max-replicates", "2", "--", "--length", "48", cwd=text_script.parent)
    return doc, out
