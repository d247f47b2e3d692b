"""What a user reads of a study (study.yaml's decisions, the report's figures and words) from the same recorded
runs, as plain JSON: tests/tune/test_same_decisions.py compares it with what the code before the issue-41
refactor gave (tests/tune/data/same_decisions.json, made by `python -m tests.tune.same_decisions OUT.json` on that
commit)."""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from tests.tune.test_study import cpu_like, gpu_like
from tests.tune.tune_fakes import FakeBackend, summary
from tfturbo.report.model import gather
from tfturbo.tune.ladder import Ladder, TuneOptions

DECISION_KEYS = ("name", "rung", "label", "status", "skipped", "kept", "reason", "speedup", "speedup_ci95",
                 "val_delta", "metric", "speed", "accuracy", "design", "steady_s", "compared_with", "replicates",
                 "memory_ratio")

ROW_FIGURES = ("status", "label", "steps_per_s", "steps_per_s_ci95", "step_ms", "step_ms_ci95", "speedup",
               "speedup_ci95", "verdict", "peak_memory_bytes", "memory_ratio", "metrics", "val_delta", "val_step",
               "findings")


def _clean(value: Any) -> Any:
    """Floats to 9 significant digits (the same figures, whatever a sum's order), NaN as a word."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else float(f"{value:.9g}")
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def observed(study_dir: Path) -> dict[str, Any]:
    doc = yaml.safe_load((study_dir / "study.yaml").read_text(encoding="utf-8"))
    data = gather(study_dir)
    assert data.outside == [], "every recorded run is one of the ladder's (the report's appendix lists none)"
    rows = []  # each "note" is "": the golden's place for runs outside the ladder, now data.outside (none)
    for r in data.rungs:
        row = r.row
        figures = {k: getattr(row, k) for k in ROW_FIGURES} if row is not None else None
        rows.append({"name": r.name, "kept": r.kept, "reason": r.reason, "figures": figures,
                     "headline": r.headline.text() if r.headline is not None and hasattr(r.headline, "text") else None,
                     "memory": str(r.memory) if r.memory is not None else None})
    seen = _clean({
        "status": doc.get("status"), "recommended_rung": doc.get("recommended_rung"),
        "recommended": doc.get("recommended"),
        "ladder": [{k: e.get(k) for k in DECISION_KEYS} for e in doc.get("ladder") or []],
        "report": {"verdict": data.verdict, "design": data.design, "changes": data.changes,
                   "apply_rows": data.apply_rows, "way_forward": data.way_forward,
                   "accuracy_rules": data.accuracy_rules, "rows": rows,
                   "tuned": data.tuned.name if data.tuned is not None else None,
                   "outside": [[o.name, o.configuration, o.why] for o in data.outside]},
    })
    return json.loads(json.dumps(seen).replace(str(study_dir), "STUDY"))  # the same wherever the study is


def studies(root: Path) -> dict[str, dict[str, Any]]:
    """Two recorded studies: a CPU-like one (16-bit slower, XLA faster) and a GPU-like one (each lever faster)."""
    out = {}
    for name, fake in (("cpu", FakeBackend(cpu_like(summary), recommended="float32")),
                       ("gpu", FakeBackend(gpu_like(summary), recommended="mixed_bfloat16"))):
        study = Ladder(TuneOptions("builtin:fake", root / name, steps=100, max_batch_scale=2), runner=fake,
                       say=lambda line: None).run()
        out[name] = observed(study.path)
    return out


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        Path(sys.argv[1]).write_text(json.dumps(studies(Path(tmp)), indent=1, sort_keys=True) + "\n",
                                     encoding="utf-8")
