"""Fixtures of the tune tests: the recorded summaries and fake backend of tune_fakes.py."""

from __future__ import annotations

import pytest

from tests.tune.tune_fakes import FakeBackend, result, summary


@pytest.fixture
def make_summary():
    return summary


@pytest.fixture
def fake_backend():
    return FakeBackend


@pytest.fixture
def backend_result():
    return result
