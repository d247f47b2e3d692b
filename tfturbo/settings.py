"""The settings of one measured run: what differs between the rungs of the ladder.

One dataclass serves the CLI, the backend, run.yaml and the tune ladder, so a
setting has one name and one default everywhere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from .errors import UserError

POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
STRATEGIES = ("default", "mirrored")
DEFAULT_STEPS = 300
DEFAULT_SEED = 1234
NO_PROFILE = (0, 0)  # a `profile` window that turns the profiler off


@dataclass
class RunSettings:
    workload: str = ""
    policy: str = "float32"
    jit_compile: bool = False
    batch_size: int | None = None  # None: the workload's BATCH_SIZE (or 32)
    steps: int = DEFAULT_STEPS
    seed: int = DEFAULT_SEED
    strategy: str = "default"
    # Profiler window [start, stop) in steps; None picks one after warm-up; (0, 0) disables.
    profile: tuple[int, int] | None = None
    val_every: int | None = None  # None: steps // 5 (five points on the validation curve)
    val_steps: int = 20
    fix_head: bool = False  # cast the output layer to float32 (automatic HEAD_NOT_FLOAT32 fix)
    drop_remainder: bool = False  # drop the partial last batch (automatic PARTIAL_LAST_BATCH fix)
    lr_scale: float = 1.0  # learning-rate multiplier (linear scaling rule for a larger batch)
    # Adaptive measurement: stop at the first validation point where the step-time 95% interval is
    # within ±until_ci of the median (e.g. 0.02) and at least min_steps have run. None: run all steps.
    until_ci: float | None = None
    min_steps: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise UserError(f"unknown precision policy {self.policy!r}", f"use one of {', '.join(POLICIES)}")
        if self.strategy not in STRATEGIES:
            raise UserError(f"unknown strategy {self.strategy!r}", f"use one of {', '.join(STRATEGIES)}")
        if self.batch_size is not None and self.batch_size < 1:
            raise UserError(f"batch size must be positive, got {self.batch_size}", "pass --batch-size N with N >= 1")
        if self.steps < 1:
            raise UserError(f"steps must be positive, got {self.steps}", "pass --steps N with N >= 1")
        if self.profile is not None:
            start, stop = (int(v) for v in self.profile)
            if (start, stop) != NO_PROFILE and not (0 < start < stop):
                raise UserError(f"profile window {start}:{stop} is not START < STOP with START >= 1",
                                "pass --profile START:STOP, e.g. --profile 20:40, or --profile 0:0 to disable")
            self.profile = (start, stop)
        if self.until_ci is not None and not 0 < self.until_ci < 1:
            raise UserError(f"--until-ci must be a fraction between 0 and 1, got {self.until_ci}",
                            "pass e.g. --until-ci 0.02 for ±2%")
        if self.lr_scale <= 0:
            raise UserError(f"learning-rate scale must be positive, got {self.lr_scale}")

    @property
    def sixteen_bit(self) -> bool:
        return self.policy != "float32"

    def effective_val_every(self) -> int:
        return max(1, self.val_every or self.steps // 5 or 1)

    def effective_profile(self, warmup_guess: int = 10) -> tuple[int, int] | None:
        """The profiler window: user's, or 20 steady steps after a warm-up guess, or None."""
        if self.profile == NO_PROFILE:
            return None
        if self.profile is not None:
            return self.profile
        start = min(warmup_guess + 5, self.steps // 3)
        stop = min(start + 20, self.steps * 2 // 3)
        return (start, stop) if 0 < start < stop else None

    def label(self) -> str:
        """Short human name: 'mixed_bfloat16 + XLA, batch 128'."""
        parts = [self.policy + (" + XLA" if self.jit_compile else "")]
        if self.batch_size:
            parts.append(f"batch {self.batch_size}")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["profile"] = list(self.profile) if self.profile is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RunSettings":
        """Tolerant of unknown keys (files written by newer versions)."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in (d or {}).items() if k in known}
        if kwargs.get("profile") is not None:
            kwargs["profile"] = tuple(kwargs["profile"])
        return cls(**kwargs)

    def with_(self, **changes: Any) -> "RunSettings":
        return replace(self, **changes)
