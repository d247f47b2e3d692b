"""Issue 41 in the wizard: what a page shows of a text tfturbo wrote comes from data carried beside the text,
so new words (here put in by the test) leave what the user sees in its place."""

from __future__ import annotations

from tfturbo import protocol
from tfturbo.trials.verdict import (INCONCLUSIVE, NO_CHANGE, AccuracyVerdict, ReasonPart, Says, SpeedVerdict,
                                    TrialVerdict, keep)


def test_the_decision_card_shows_the_reasons_own_parts_whatever_their_words(qtbot, monkeypatch):
    """The card cut the reason at "; " and left out each part that held the speed's or the accuracy's words, or
    "inconclusive": new words with a "; " inside leaked half a speed line into it. It shows the parts that say
    why the rung was measured and what else decided it."""
    from tfturbo_gui.cards import DecisionCard

    monkeypatch.setattr(SpeedVerdict, "text", lambda self: "sped up; see each pair")
    accuracy = AccuracyVerdict("val_accuracy", 0.0004, (-0.0076, 0.0084), INCONCLUSIVE, 400,
                               explanation="undecided: 400 examples", opens_with=INCONCLUSIVE)
    speed = SpeedVerdict(1.06, (0.95, 1.19), NO_CHANGE, 4)
    kept, said, found = keep(speed, accuracy, protocol.RunStatus.COMPLETED, [], "B", "the baseline")
    decision = TrialVerdict(speed, accuracy, kept, [ReasonPart(Says.NOTE, "measured on the best so far"), *said],
                            found)
    card = DecisionCard()
    qtbot.addWidget(card)
    card.set_decision(decision, "batch 128", "the baseline")
    assert decision.reason.count("; ") == 3  # note; speed (a "; " inside); accuracy
    assert card.reason.text() == "Measured on the best so far."
    assert "Accuracy vs baseline: undecided: 400 examples\n" in card.facts.text() + "\n"  # its verdict once


def test_a_failed_run_whose_fix_only_points_at_a_log_says_where_the_details_are(monkeypatch):
    """The backend's "see the traceback in …" is no fix to try: the page says the details below show where it
    failed. Told by the error (`log_only`), not by the fix's first words."""
    from tfturbo_gui.failures import explain

    error = protocol.ErrorDoc(kind=protocol.INTERNAL, message="RuntimeError: boom", fix="read the run's log",
                              traceback="Traceback …", log_only=True)
    assert explain(protocol.RunStatus.FAILED, error, None).fix == "the details below show where it failed"
    own = protocol.ErrorDoc(kind=protocol.INTERNAL, message="RuntimeError: boom", fix="see the traceback in the "
                            "log, then lower the batch size", traceback="Traceback …")
    assert explain(protocol.RunStatus.FAILED, protocol.error_of({**own, "log_only": False}), None).fix == own["fix"]


def test_a_builtin_workload_is_listed_by_what_its_file_declares(tmp_path, monkeypatch):
    """The list rewrote each docstring's "demo workload; " into "demo — ": it lists what the file declares
    (`PLANTED`, `DESCRIPTION`), whatever its docstring says."""
    from tfturbo_gui import workload_catalog

    demo = tmp_path / "odd_one.py"
    demo.write_text('"""builtin:odd-one — words that changed; any at all."""\n\nPLANTED = "batch shapes vary"\n')
    clean = tmp_path / "plain_one.py"
    clean.write_text('"""Whatever."""\nimport math\n\nDESCRIPTION = "a clean example"\n')
    monkeypatch.setattr(workload_catalog, "builtin_files", lambda: {"builtin:odd-one": demo,
                                                                    "builtin:plain-one": clean})
    odd, plain = workload_catalog.builtin_workloads()
    assert (odd.line, odd.description) == ("demo — planted problem: batch shapes vary",
                                           "demo workload; planted problem: batch shapes vary.")
    assert (plain.line, plain.description) == ("a clean example", "a clean example.")
