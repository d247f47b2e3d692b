"""Findings: every diagnosis the app makes, with a stable code and a fix.

Scripts, tests and the report rely on the codes (docs/ARCHITECTURE.md, "Findings"), so they
are constants here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

INFO, WARNING, ERROR = "info", "warning", "error"
SEVERITIES = (INFO, WARNING, ERROR)

INPUT_BOUND = "INPUT_BOUND"
INPUT_MODERATELY_BOUND = "INPUT_MODERATELY_BOUND"  # 5-20% of each step waits for data (XProf's "moderately")
INPUT_FIXES_APPLIED = "INPUT_FIXES_APPLIED"  # --input-fixes: what tfturbo changed in the training dataset
HEAD_NOT_FLOAT32 = "HEAD_NOT_FLOAT32"
INTEGER_INPUT_16BIT = "INTEGER_INPUT_16BIT"  # token ids / indices / counts in a float input, rounded to 16-bit
DTYPE_MISMATCH_16BIT = "DTYPE_MISMATCH_16BIT"  # an op got a 16-bit and a float32 tensor: only the 16-bit policy fails
DIM_NOT_MULTIPLE_OF_8 = "DIM_NOT_MULTIPLE_OF_8"
BATCH_NOT_MULTIPLE_OF_8 = "BATCH_NOT_MULTIPLE_OF_8"
PARTIAL_LAST_BATCH = "PARTIAL_LAST_BATCH"
DYNAMIC_SHAPE = "DYNAMIC_SHAPE"
CUSTOM_LOOP_NO_LOSS_SCALING = "CUSTOM_LOOP_NO_LOSS_SCALING"
NAN_LOSS = "NAN_LOSS"
RECOMPILE_STORM = "RECOMPILE_STORM"
LOSS_SCALE_COLLAPSE = "LOSS_SCALE_COLLAPSE"
LOSS_SCALE_SKIPS = "LOSS_SCALE_SKIPS"
XLA_NOT_ACTIVE = "XLA_NOT_ACTIVE"
# what keeps XLA off, as an XLA_NOT_ACTIVE finding's data names it (`blockers`; its `causes` say it in words): an
# LSTM/GRU on cuDNN, another layer with supports_jit=False, op determinism
XLA_BLOCKERS = (CUDNN, NO_JIT_LAYER, DETERMINISM) = ("cudnn", "supports_jit", "determinism")
ACCURACY_REGRESSION = "ACCURACY_REGRESSION"
SLOWER_THAN_BASELINE = "SLOWER_THAN_BASELINE"
FIX_NOT_APPLIED = "FIX_NOT_APPLIED"  # an automatic fix (--fix-head, --drop-remainder) could not be applied
SHORT_STEPS = "SHORT_STEPS"  # steps so short that several per call (steps_per_execution) were measured
BATCH_DID_NOT_FIT = "BATCH_DID_NOT_FIT"  # a size of the batch search did not complete (out of memory): search ends
XLA_AUTOCLUSTERING = "XLA_AUTOCLUSTERING"  # jit_compile=True was refused or slower: auto-clustering was measured
SCALING_INEFFICIENT = "SCALING_INEFFICIENT"  # `scaling`: N replicas give well under N times the throughput
# the script passed callbacks to fit() (EarlyStopping, ModelCheckpoint, ReduceLROnPlateau, ...) that a measured run
# does not run: every configuration is measured without them alike (the speed comparison stands), and what they do
# to the user's training (a lowered rate, an early stop, a checkpoint's time) is not in it (trainer_backend/as_written.py)
CALLBACKS_NOT_RUN = "CALLBACKS_NOT_RUN"
# from the profile (tfturbo/profile_findings.py)
MATMUL_NOT_16BIT = "MATMUL_NOT_16BIT"  # a 16-bit policy whose matmul/conv time is mostly still float32
CASTS_HEAVY = "CASTS_HEAVY"  # Cast ops take a large share of the step's op time
HOST_OVERHEAD = "HOST_OVERHEAD"  # the step waits on the host / kernel launches (XProf's 3%/15% bands)
OP_SLOWER = "OP_SLOWER"  # a category of ops got slower under 16-bit or XLA than in the baseline

# The findings about a 16-bit policy alone: the study's audit raises them for the 16-bit policy it checks, so under
# float32 settings they do not apply (the report greys them when the kept settings are float32)
SIXTEEN_BIT_ONLY = frozenset({HEAD_NOT_FLOAT32, INTEGER_INPUT_16BIT, DTYPE_MISMATCH_16BIT, CUSTOM_LOOP_NO_LOSS_SCALING,
                              LOSS_SCALE_COLLAPSE, LOSS_SCALE_SKIPS, MATMUL_NOT_16BIT})

# Default severity per code; a detector may raise a finding at another level.
DEFAULT_SEVERITY = {
    INPUT_BOUND: ERROR,
    INPUT_MODERATELY_BOUND: WARNING,
    INPUT_FIXES_APPLIED: INFO,
    HEAD_NOT_FLOAT32: ERROR,
    INTEGER_INPUT_16BIT: ERROR,
    DTYPE_MISMATCH_16BIT: ERROR,
    DIM_NOT_MULTIPLE_OF_8: WARNING,
    BATCH_NOT_MULTIPLE_OF_8: WARNING,
    PARTIAL_LAST_BATCH: WARNING,
    DYNAMIC_SHAPE: WARNING,
    CUSTOM_LOOP_NO_LOSS_SCALING: ERROR,
    NAN_LOSS: ERROR,
    RECOMPILE_STORM: ERROR,
    LOSS_SCALE_COLLAPSE: ERROR,
    LOSS_SCALE_SKIPS: INFO,
    XLA_NOT_ACTIVE: WARNING,
    ACCURACY_REGRESSION: ERROR,
    SLOWER_THAN_BASELINE: WARNING,
    FIX_NOT_APPLIED: WARNING,
    SHORT_STEPS: INFO,
    BATCH_DID_NOT_FIT: INFO,
    XLA_AUTOCLUSTERING: INFO,
    SCALING_INEFFICIENT: WARNING,
    CALLBACKS_NOT_RUN: WARNING,
    MATMUL_NOT_16BIT: WARNING,
    CASTS_HEAVY: WARNING,
    HOST_OVERHEAD: WARNING,
    OP_SLOWER: WARNING,
}
CODES = tuple(DEFAULT_SEVERITY)


class FindingDoc(TypedDict, total=False):
    """A finding as written: summary.json's and study.yaml's `findings`, `finding` events, `--json` documents
    (`Finding.to_dict`; read back leniently by `Finding.from_dict`)."""

    code: str
    message: str
    fix: str
    where: str
    severity: str
    data: dict[str, Any]  # what the finding measured, its own keys (docs/FINDINGS.md)
    source: str  # where it was found, when not the run itself (an audit, a probe)
    arm: str  # `ab --json`: the arm whose run raised it
    run: str  # `ab --json` with --out: that run's folder
    applies: bool  # the report: whether it applies to the kept settings (grey when not)


@dataclass
class Finding:
    """One diagnosis. `fix` is the concrete change, as code where it can be."""

    code: str
    message: str
    fix: str = ""
    where: str = ""
    severity: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.severity:
            self.severity = DEFAULT_SEVERITY.get(self.code, WARNING)
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")

    def to_dict(self) -> FindingDoc:
        d = FindingDoc(code=self.code, message=self.message, fix=self.fix, where=self.where, severity=self.severity)
        if self.data:
            d["data"] = dict(self.data)
        return d

    @classmethod
    def from_dict(cls, d: FindingDoc) -> Finding:
        """Lenient: unknown keys are dropped, missing ones defaulted (files from other versions)."""
        return cls(
            code=str(d.get("code", "UNKNOWN")),
            message=str(d.get("message", "")),
            fix=str(d.get("fix", "")),
            where=str(d.get("where", "")),
            severity=str(d.get("severity", "")) if d.get("severity") in SEVERITIES else "",
            data=dict(d.get("data") or {}),
        )


def findings_in(value: object) -> list[FindingDoc]:
    """The findings of a list read from a file or a document: its mappings, each as written (the rest, from a
    corrupt or foreign file, dropped)."""
    return [cast(FindingDoc, f) for f in value if isinstance(f, dict)] if isinstance(value, list) else []


def codes_of(findings: list[FindingDoc] | list[Finding]) -> list[str]:
    """The codes in a list of findings (dicts or objects), in order."""
    return [f.code if isinstance(f, Finding) else f.get("code", "") for f in findings]
