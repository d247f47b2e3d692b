"""The simulated accelerator's fixtures for every test here (tests/accelerator/simulated.py says what they replace)."""

from tests.accelerator.simulated import accelerator, no_matmuls  # noqa: F401 - the fixtures
