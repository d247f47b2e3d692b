"""Issue 22: the words and the navigation of the wizard follow the engine's state (a qtbot test per point)."""

from __future__ import annotations

from tests.gui.gui_helpers import fake_launcher, go_next, make_window, measure_baseline
from PySide6.QtCore import Qt

from tfturbo.run_summary import RunSummary
from tfturbo import protocol
from tfturbo.headline import headline
from tfturbo.console import fmt_bytes
from tfturbo_gui.cards import RUN_PEAK
from tfturbo_gui.run_data import RunData
from tfturbo_gui.run_panel import outcome_text
from tfturbo_gui.step_status import PASSED

LEFT = Qt.MouseButton.LeftButton


def _baseline(qtbot, window) -> None:
    go_next(qtbot, window, 1)
    page = window.pages[1]
    qtbot.mouseClick(page.measure_button, LEFT)
    qtbot.waitUntil(lambda: page.status == PASSED, timeout=30_000)


def test_next_follows_a_trial_and_the_findings_say_what_is_still_running(qtbot, tmp_path):
    """Next stayed enabled during a trial and did nothing; "The audit ... found nothing to fix" showed while
    the audit still ran."""
    window = make_window(qtbot, tmp_path, launcher=fake_launcher("ok", 0.02))
    _baseline(qtbot, window)
    window.goto(2)
    page = window.pages[2]
    if page.audit_panel.is_running():  # the audit of the chosen policy: said as running, not as clean
        assert page.findings.empty.text() == "The audit is running…"
    qtbot.waitUntil(lambda: page.run_button.isEnabled(), timeout=20_000)
    assert page.findings.empty.text() == "The audit for the chosen policy found nothing to fix."
    qtbot.mouseClick(page.run_button, LEFT)
    assert page.run_panel.is_running()
    assert not window.next_button.isEnabled() and window.hint.text() == "Measuring…"
    assert page.findings.empty.text() == "No findings so far in this trial."
    qtbot.waitUntil(lambda: page.rung is not None and page.rung.decision is not None, timeout=60_000)
    assert window.next_button.isEnabled()
    if not page.findings.findings:
        assert page.findings.empty.text() == "The audit and the trial's runs found nothing to fix."


def test_a_stopped_baseline_does_not_claim_it_found_nothing(qtbot, tmp_path):
    """After a stopped 1-step baseline the page said "the baseline run found nothing to fix"."""
    window = make_window(qtbot, tmp_path, launcher=fake_launcher("ok", 0.2))
    go_next(qtbot, window, 1)
    page = window.pages[1]
    qtbot.mouseClick(page.measure_button, LEFT)
    qtbot.waitUntil(lambda: page.run_panel.data is not None and len(page.run_panel.data.step.view()) >= 1,
                    timeout=30_000)
    page.run_panel.stop()
    qtbot.waitUntil(lambda: page.run_panel.data.finished, timeout=30_000)
    qtbot.waitUntil(lambda: "after" in page.findings.empty.text(), timeout=10_000)
    text = page.findings.empty.text()
    assert "found nothing to fix" not in text and "cancelled after" in text and "Measure the baseline again" in text


def test_the_workload_check_is_no_training_run():
    """"Completed — 1 step recorded · step 1/1" for the workload check."""
    data = RunData("check", command="audit")
    data.ingest([{"type": protocol.PROGRESS, "step": 1, "total": 1, "eta_s": 0.0},
                 {"type": protocol.DONE, "status": protocol.RunStatus.COMPLETED, "exit_code": 0}])
    text, _state = outcome_text(data)
    assert text == "Completed" and "step" not in text


def test_a_training_script_is_described_as_one_and_keeps_its_own_length(qtbot, tmp_path):
    """For a plain script: "checks that it keeps the contract", and its 3 epochs = 96 steps silently became 300."""
    from tfturbo.settings import DEFAULT_STEPS

    script = tmp_path / "train.py"
    script.write_text("import keras\nmodel = keras.Sequential()\nmodel.fit(x, y, epochs=3)\n")
    window = make_window(qtbot, tmp_path, workload=str(script), steps=DEFAULT_STEPS)
    page = window.pages[0]
    assert "first fit()" in page.check_hint.text() and "contract" not in page.check_hint.text()
    go_next(qtbot, window, 1)
    assert window.session.steps == 96
    text = page.check_hint.text()
    assert "runs as a training script" in text and "keeps the contract" not in text
    assert "the script's own length: 3 epochs of 32 steps = 96 steps" in text


def test_the_record_page_states_the_speed_up_it_records(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=fake_launcher("ok"))
    _baseline(qtbot, window)
    window.goto(3)  # XLA: the fake backend's XLA run is faster
    xla = window.pages[3]
    qtbot.waitUntil(lambda: xla.run_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(xla.run_button, LEFT)
    qtbot.waitUntil(lambda: xla.rung is not None and xla.rung.decision is not None, timeout=60_000)
    window.goto(6)
    record = window.pages[6]
    best = window.session.best
    fact = record.recommended.values["Speed-up"].text()
    if best is window.session.baseline:
        assert fact.startswith("none")
        return
    shown = headline(best.name, window.session.study.rungs)
    assert fact.startswith(shown.text()) and shown.source(best.name) in fact
    # the words follow what is recorded: its own trial against the baseline is "its own trial", not "(02-xla's)"
    assert shown.trial == best.name and "(its own trial)" in fact and f"({best.name}'s trial)" not in fact
    window.goto(5)  # the confirmation measures it again against the baseline: both trials' pairs are the number
    compare = window.pages[5]
    qtbot.waitUntil(lambda: compare.run_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(compare.run_button, LEFT)
    qtbot.waitUntil(lambda: compare.confirmation is not None and compare.confirmation.decision is not None,
                    timeout=60_000)
    window.goto(6)
    fact = record.recommended.values["Speed-up"].text()
    if compare.confirmation.kept:
        pooled = headline(best.name, window.session.study.rungs)
        assert pooled.trials == (best.name, compare.confirmation.name)
        assert fact.startswith(pooled.text()) and "vs the baseline" in fact
        assert "its own trial and the confirmation's, pooled" in fact and compare.confirmation.name not in fact


def test_an_inconclusive_card_says_it_once_and_offers_a_way_forward(qtbot):
    """"inconclusive" three times in one card, then "No findings for this run yet", and no way forward."""
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict
    from tfturbo_gui.cards import DecisionCard

    acc = AccuracyVerdict("val_accuracy", 0.0004, (-0.0076, 0.0084), "inconclusive", 400,
                          explanation="inconclusive: 400 examples, interval [-0.76 pp, +0.84 pp] (tolerance 0.5 pp); "
                                      "about 872 examples would decide it", opens_with="inconclusive")
    speed = SpeedVerdict(1.26, (1.19, 1.35), "faster", 4)
    decision = TrialVerdict(speed, acc, False, [ReasonPart(Says.RATIO, f"faster: {speed.text()}"),
                                                ReasonPart(Says.ACCURACY, f"accuracy {acc.explanation}")], [],
                            protocol.RunStatus.COMPLETED, "")
    card = DecisionCard()
    qtbot.addWidget(card)
    way = ["Recommended: Judge on the validation loss …", "Or: Validate on more examples …"]
    card.set_decision(decision, "batch 128", "01-baseline", way_forward=way)
    text = card.facts.text() + "\n" + card.reason.text()
    assert text.count("inconclusive") == 1, text
    assert text.count("about 872 examples would decide it") == 1, text  # its tail leaked into the reason
    assert "What would decide the accuracy:\n" + "\n".join(way) in card.reason.text()


def test_the_card_shows_each_outputs_verdict(qtbot):
    """Issue 47: a model with several outputs has each judged on its own; the card names the one that regressed
    and lists every output's line."""
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict
    from tfturbo_gui.cards import DecisionCard

    label = AccuracyVerdict("val_label_accuracy", 0.001, (-0.004, 0.006), "within tolerance", 1200, confidence=0.975)
    value = AccuracyVerdict("val_value_loss", 0.046, (0.031, 0.061), "worse", 1200, base=0.33, confidence=0.975)
    acc = AccuracyVerdict.from_dict(value.to_dict())
    acc.outputs = [label, value]
    speed = SpeedVerdict(1.3, (1.2, 1.4), "faster", 3)
    decision = TrialVerdict(speed, acc, False, [ReasonPart(Says.ACCURACY, f"accuracy worse: {acc.text()}")], [],
                            protocol.RunStatus.COMPLETED, "")
    card = DecisionCard()
    qtbot.addWidget(card)
    card.set_decision(decision, "mixed_bfloat16", "01-baseline")
    facts = card.facts.text()
    assert "Accuracy vs baseline: val_value_loss +0.0460 (+14%) [+0.0310, +0.0610]" in facts
    assert "Each output: val_label_accuracy +0.10 pp [-0.40 pp, +0.60 pp] — within tolerance\n" \
           "val_value_loss +0.0460 (+14%) [+0.0310, +0.0610] — worse" in facts


def test_a_policy_name_opening_the_reason_keeps_its_case(qtbot):
    """The issue 22 walk: a not-kept mixed-precision card ended "Mixed_bfloat16 is the recommended policy for
    this hardware." — a policy name that does not exist; a name from code keeps its case, words are capitalised."""
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict
    from tfturbo_gui.cards import DecisionCard

    acc = AccuracyVerdict("val_accuracy", -0.001, (-0.0052, 0.0035), "inconclusive", 400,
                          explanation="inconclusive: 400 examples, interval [-0.52 pp, +0.35 pp] (tolerance 0.5 pp); "
                                      "about 434 examples would decide it", opens_with="inconclusive")
    speed = SpeedVerdict(0.87, (0.67, 1.13), "no measurable change", 5)
    for why, shown in (("mixed_bfloat16 is the recommended policy for this hardware",
                        "mixed_bfloat16 is the recommended policy for this hardware."),
                       ("the recommended policy is float32", "The recommended policy is float32.")):
        decision = TrialVerdict(speed, acc, False, [
            ReasonPart(Says.RATIO, f"no measurable change: {speed.text()}"),
            ReasonPart(Says.ACCURACY, f"accuracy {acc.explanation}"), ReasonPart(Says.NOTE, why)], [],
            protocol.RunStatus.COMPLETED, "")
        card = DecisionCard()
        qtbot.addWidget(card)
        card.set_decision(decision, "mixed_bfloat16, batch 50", "01-baseline")
        assert card.reason.text() == shown


def test_a_short_baseline_keeps_its_length_and_says_nothing_where_the_trials_pair(qtbot, tmp_path):
    """60 steps of a 2 ms model hold too little steady state for a first pair's ratio; a builtin's trials pair
    (their speed comes from the sized speed pairs alone, `Trial.paired`), so the length of the full-length runs
    decides no verdict: the page says nothing of it and lengthens nothing (a script's 4 epochs stay 4; a
    top-level script's trials cannot pair and get the note, tests/trials/test_run_length.py)."""
    window = make_window(qtbot, tmp_path, workload="builtin:short-steps")
    _baseline(qtbot, window)
    page = window.pages[1]
    assert window.session.run_length() == ("", None)
    assert not page.length_note.isVisibleTo(page) and window.session.baseline_settings().steps == 60


def test_a_not_kept_policy_card_never_calls_it_the_recommended_policy(qtbot):
    """The issue 22 walk (again, on a fresh script): "mixed_bfloat16, batch 40: not recommended" above
    "mixed_bfloat16 is the recommended policy for this hardware." — the why it was measured, read as a verdict."""
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict
    from tfturbo.tune.policy import sixteen_bit_policies
    from tfturbo_gui.cards import DecisionCard

    policies, why = sixteen_bit_policies("mixed_bfloat16", both=False)
    assert policies == ["mixed_bfloat16"]
    speed = SpeedVerdict(0.91, (0.58, 1.43), "no measurable change", 5)
    acc = AccuracyVerdict("val_accuracy", 0.0, (-0.0031, 0.0031), "within tolerance", 300)
    decision = TrialVerdict(speed, acc, False, [
        ReasonPart(Says.NOTE, why), ReasonPart(Says.RATIO, f"not measurably faster: {speed.text()} vs the baseline")],
        [], protocol.RunStatus.COMPLETED, "")
    card = DecisionCard()
    qtbot.addWidget(card)
    card.set_decision(decision, "mixed_bfloat16, batch 40", "01-baseline")
    assert card.headline.text().endswith("not recommended")
    assert card.reason.text().startswith("mixed_bfloat16 measured first") and "recommended" not in card.reason.text()


def test_an_inconclusive_accuracy_says_its_word_once_on_the_compare_page_and_pairs_are_pairs():
    """The issue 22 walk on a fresh script: the compare page's "Every configuration measured" read "accuracy
    inconclusive: 300 examples, …; about 158,288 examples would decide it — inconclusive", and its verdict said
    "over 3 replicates" where the table and the cards said "3 pairs"."""
    from tfturbo.trials.verdict import AccuracyVerdict
    from tfturbo_gui.cards import accuracy_words
    from tfturbo_gui.verdict_view import speed_text

    inconclusive = AccuracyVerdict("val_accuracy", -0.0045, (-0.0172, 0.0083), "inconclusive", 300,
                                   explanation="inconclusive: 300 examples, interval [-1.72 pp, +0.83 pp] "
                                               "(tolerance 0.5 pp); about 158,288 examples would decide it",
                                   opens_with="inconclusive")
    within = AccuracyVerdict("val_accuracy", 0.0467, (0.0318, 0.0615), "within tolerance", 300)
    assert accuracy_words(inconclusive).count("inconclusive") == 1
    assert accuracy_words(within).endswith(" — within tolerance") and accuracy_words(within).count("tolerance") == 1
    assert speed_text({"ratio": 1.97, "ci95": [1.59, 2.42], "verdict": "faster", "replicates": 3}) == \
        "faster: 1.97× [1.59, 2.42] over 3 pairs"


def test_the_batch_page_claims_freed_memory_only_beyond_the_runs_spread(qtbot, tmp_path):
    """The issue 22 walk: the Batch size page said "Freed 4.5 MiB" (one baseline run against one tuned run) where
    the PDF said "about the same (within the runs' spread)" for the same study: one rule now says both."""
    from types import SimpleNamespace

    from tfturbo.settings import RunSettings

    window = make_window(qtbot, tmp_path)
    measure_baseline(qtbot, window)
    page = window.pages[4]
    base = window.session.baseline
    tuned = SimpleNamespace(settings=RunSettings(batch_size=128), summary=RunSummary(peak_memory_bytes=int(618.2 * 2**20)))
    mib = 2**20
    runs = [(base.settings, RunSummary(status="completed", peak_memory_bytes=v * mib)) for v in (622.7, 618.0)]
    runs += [(tuned.settings, RunSummary(status="completed", peak_memory_bytes=v * mib)) for v in (618.2, 621.5)]
    page._best = lambda: tuned
    window.session.measured_runs = lambda: runs
    page._show_memory()
    assert page.memory.values["Freed"].text() == "nothing measurable (within the runs' spread of 4.7 MiB)"
    runs[2:] = [(tuned.settings, RunSummary(status="completed", peak_memory_bytes=v * mib)) for v in (580.0, 581.0)]
    page._show_memory()
    assert page.memory.values["Freed"].text() == "39.9 MiB"  # the medians' difference, beyond the spread
    assert page.memory.values["Tuned peak"].text().startswith("580.5 MiB (median of 2 runs) — ")
    # issue 42 walk: "Baseline peak 405.6 MiB" here beside the baseline card's 421.1 MiB (its own run's peak) read
    # as two peaks of one run; a median over several runs says so
    assert page.memory.values["Baseline peak"].text() == "620.4 MiB (host; median of 2 runs)"
    # the issue 42 walk: the baseline page showed its run's own peak (357.9 MiB) where the Batch page, the table
    # and the PDF showed the configuration's (334.6 MiB): it shows the configuration's, its run's a labelled detail
    baseline = window.pages[1]
    own = window.session.data_of(base).summary.peak_memory_bytes
    window._on_status(4, page.status)  # a step's status changed (a trial ended): the baseline's card follows
    window.goto(1)
    peak = baseline.results.values["Peak memory"].text()
    assert peak == "620.4 MiB (host; median of this configuration's 2 runs so far)", peak
    assert baseline.results.values[RUN_PEAK].text() == fmt_bytes(own)


def test_checking_another_script_takes_its_own_length_not_the_last_ones(qtbot, tmp_path):
    """The first script's 96 steps stayed in the box when a second script of 1 epoch of 40 steps was checked
    (only tfturbo's default was ever replaced), and a builtin checked after a script trained the script's 96."""
    from tfturbo.settings import DEFAULT_STEPS

    window = make_window(qtbot, tmp_path, steps=DEFAULT_STEPS)
    page = window.pages[0]

    def checked(own):
        data = RunData("check", command="audit")
        data.status, data.document = protocol.RunStatus.COMPLETED, {"findings": []} | (
            {"own_length": own} if own else {})
        page._on_check_ended(data)
        return page.steps.value()

    assert checked({"epochs": 3, "steps_per_epoch": 32, "steps": 96}) == 96
    assert checked({"epochs": 1, "steps_per_epoch": 40, "steps": 40}) == 40
    assert "1 epoch of 40 steps = 40 steps" in page.check_hint.text()
    assert checked(None) == DEFAULT_STEPS  # a builtin: tfturbo's default again
    page.steps.setValue(150)  # a length the user typed stays
    assert checked({"epochs": 3, "steps_per_epoch": 32, "steps": 96}) == 150


def test_the_tolerance_way_forward_says_its_value_once_in_the_gui(qtbot):
    """h42a walk: the accuracy card read "(1.3 pp, a tolerance of 1.3 pp (the “Set a tolerance…” button))": the
    core's line gives the value and the flag with it, and the GUI's words for the flag said the value again."""
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict
    from tfturbo.trials.way_forward import WayForward
    from tfturbo_gui.cards import DecisionCard

    acc = AccuracyVerdict("val_accuracy", -0.002, (-0.0123, 0.0084), "inconclusive", 400)
    speed = SpeedVerdict(1.26, (1.19, 1.35), "faster", 4)
    decision = TrialVerdict(speed, acc, False, [ReasonPart(Says.RATIO, "faster")], [], protocol.RunStatus.COMPLETED,
                            "")
    way = WayForward(None, 1.3, None, None, "", worst_pp=1.23)
    assert "(1.3 pp, --accuracy-tolerance 1.3)" in way.lines()[0]  # the command line keeps its flag
    card = DecisionCard()
    qtbot.addWidget(card)
    card.set_decision(decision, "batch 128", "the baseline", way_forward=way.lines())
    text = card.reason.text()
    assert "Accept a larger accuracy tolerance (1.3 pp, the “Set a tolerance…” button): it decides nothing" in text
    assert text.count("1.3 pp") == 1 and "--accuracy-tolerance" not in text, text
