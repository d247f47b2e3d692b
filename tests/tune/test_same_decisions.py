"""Behaviour unchanged by the issue-41 refactor (study options declared once, the trial's design as data, the
levers' own knowledge): the same recorded runs give the same study.yaml decisions and the same report figures
and words as the code before it did (tests/tune/data/same_decisions.json, made on commit d8353c9 by
`python -m tests.tune.same_decisions FILE`, and made again when issues 38, 39, 40 and 42 changed the decisions on
purpose: the baseline as written, seed runs for the trainings' noise, re-used runs, pooled speed-ups; when the
design words said which trial trained the seed runs, "(by this trial)" / "(by an earlier trial of the study)", the report's "(once for the study, by its first trial)"; and
with each row's reason and the appendix of runs outside the decisions once issue 42 moved those out of the rows;
the report rows of the file made on d8353c9 read "crashed", with no figures). A refactor leaves it unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tune.same_decisions import studies

GOLDEN = Path(__file__).parent / "data" / "same_decisions.json"


def test_the_same_recorded_runs_give_the_same_decisions_and_report_as_before(tmp_path):
    before = json.loads(GOLDEN.read_text(encoding="utf-8"))
    now = json.loads(json.dumps(studies(tmp_path)))
    for name in before:
        assert now[name]["ladder"] == before[name]["ladder"], name
        assert now[name]["report"] == before[name]["report"], name
        assert now[name] == before[name], name
