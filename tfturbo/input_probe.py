"""The `probe-input` document: the one class that reads what the input probe measured.

`python -m trainer_backend probe-input` (trainer_backend/diagnostics/input_probe.py) makes it; the study keeps it
in study.yaml's `probe` (and `probe_input_fixes`, the probe again with the automatic tf.data fixes), and the study
engine, the wizard, `tfturbo tune`, `tfturbo probe-input` and the report read it. Every reader goes through
`InputProbe`, so a misspelt key is an attribute error a type checker sees instead of a silent None; the words
said of it stay in `tfturbo/verdicts.py`.

Read tolerantly, as every tfturbo file (`run_summary.read_typed`): keys this version does not know are kept and
written back; a known key of the wrong type is dropped with one line in `problems`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .environment import typed_field
from .findings import FindingDoc, findings_in
from .run_summary import BOOL, DICT, INT, LIST, NUMBER, STR, read_into, with_extra
from .workload_kind import WorkloadDoc


@dataclass
class InputProbe:
    """Input- or compute-bound, from three few-second probes (input alone, one cached batch, real training)."""

    verdict: str | None = typed_field(STR)  # `verdicts.ProbeVerdict`; None: the probe failed (`error` says why)
    band: str | None = typed_field(STR)  # `verdicts.ProbeBand`
    input_fraction: float | None = typed_field(NUMBER)  # the share of a real step that compute alone does not explain
    input_explains_gap: bool | None = typed_field(BOOL)  # the input alone is slow enough to be that share (None: older)
    data_steps_per_s: float | None = typed_field(NUMBER)  # the input pipeline alone, batches/s
    compute_steps_per_s: float | None = typed_field(NUMBER)  # the training step alone on one cached batch
    train_steps_per_s: float | None = typed_field(NUMBER)  # real training
    findings: list[FindingDoc] = typed_field(LIST, list)
    step_ms: dict[str, float] | None = typed_field(DICT)  # {"data", "compute", "train"}: the three medians
    steps_per_probe: int | None = typed_field(INT)
    rounds: int | None = typed_field(INT)  # 2: a wait on input was measured again before it was reported
    warmup_steps: int | None = typed_field(INT)
    thresholds: dict[str, float] | None = typed_field(DICT)  # {"high", "moderate", "data_explains_gap"}
    profiler: dict[str, Any] | None = typed_field(DICT)  # XProf's input analysis of a few profiled steps, as it read
    workload: WorkloadDoc | None = typed_field(DICT)  # the workload as the backend describes it
    batch_size: int | None = typed_field(INT)
    input_fixes: bool | None = typed_field(BOOL)  # measured with the automatic tf.data fixes on
    error: str | None = typed_field(STR)  # a failed probe's error, as the study engine recorded it
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know (kept as read)
    problems: list[str] = field(default_factory=list, repr=False, compare=False)  # what from_dict dropped

    def to_dict(self) -> dict[str, Any]:
        """The document as the backend wrote it: the keys it has (a failed probe's: verdict, error, findings),
        then the unknown ones as read."""
        return with_extra({f.name: getattr(self, f.name) for f in _known()
                           if getattr(self, f.name) is not None or f.name in _ALWAYS}, self.extra)

    @classmethod
    def from_dict(cls, doc: Any, source: str = "the probe-input document") -> InputProbe:
        """The probe document in `doc`; a known key of the wrong type is dropped and named in `problems`."""
        out = cls()
        known = read_into(out, doc, {f.name: f.metadata["kind"] for f in _known()}, source)
        for key, value in known.items():
            if value is not None:
                setattr(out, key, value)
        out.findings = findings_in(out.findings)
        return out


_ALWAYS = ("verdict", "findings")  # written even when empty: a failed probe says it has no verdict


def _known() -> list[Any]:
    return [f for f in fields(InputProbe) if "kind" in f.metadata]
