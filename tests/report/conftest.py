"""Fixtures of the compare/report tests: recorded study directories (see report_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from report_fixtures import make_study


@pytest.fixture
def study(tmp_path) -> Path:
    return make_study(tmp_path / "study")


@pytest.fixture
def broken_study(tmp_path) -> Path:
    return make_study(tmp_path / "study", broken=True)
