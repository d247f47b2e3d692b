"""What a trial intends to measure (`TrialPlan`, made by `Schedule.plan()`), and its words for the front ends."""

from __future__ import annotations

from dataclasses import dataclass

from ..numbers import counted
from . import accuracy
from .design import full_length_words, seed_runs_words
from .runs import A, B


@dataclass
class TrialPlan:
    """What a trial intends to measure (`Trial.plan()`), for the front ends to announce."""

    min_pairs: int  # speed pairs: the pairs whose ratios the speed verdict is taken from
    max_pairs: int
    steady_s: float  # steady-state seconds each replicate aims at (0: every pair trains the full length)
    full_steps: tuple[int, int]  # (A, B) steps of the full-length runs, which validate for the accuracy gate
    speed_steps: tuple[int | None, int | None]  # (A, B) steps of the speed-only pairs (None: not sized yet)
    paired: bool = False  # the speed pairs: both arms in one process, in interleaved blocks (`PlannedPair`)
    sized: bool = False  # paired: steady_s is sized from the measured overhead (else the floor, until pair 1 ends)
    batches: tuple[int | None, int | None] = (None, None)  # (A, B) batch sizes, when known
    gate_arms: tuple[str, ...] = (A, B)  # the arms with a full-length run; paired: before the speed pairs
    gate: str = ""  # which accuracy gate will judge (`accuracy.planned_gate`); "": not known before a run says
    reused: str = ""  # the study's run A's full-length run re-uses (`Trial.reused_run`); "": A trains its own
    # the accuracy reference trained again from other seeds after the gate's runs (`Trial.seed_runs`), their seeds
    # and what the reference is called ("the baseline", "A")
    seed_runs: int = 0
    noise_seeds: tuple[int, ...] = ()
    reference: str = "A"

    @property
    def gate_runs(self) -> int:
        """Full-length runs to train that are not a speed pair (paired, or A's run re-used: the accuracy gate's
        and the fresh ones only; else 0, pair 1 counts)."""
        if not (self.paired or self.reused):
            return 0
        return len(self.gate_arms) - (1 if self.reused and A in self.gate_arms else 0)

    @property
    def min_runs(self) -> int:
        return self.gate_runs + self.seed_runs + 2 * self.min_pairs

    @property
    def max_runs(self) -> int:
        return self.gate_runs + self.seed_runs + 2 * self.max_pairs

    def text(self) -> str:
        """One line: "3–6 pairs (6–12 runs): the first trains 300 steps with validation, the others measure
        speed only, aiming at 3 s of steady state each"; the reference's trainings from other seeds named where
        they come ("then 2 trainings of the baseline from seeds 1000, 2000 for the accuracy gate's training
        noise") and counted in the runs."""
        pairs = (f"{self.min_pairs}–{self.max_pairs} pairs" if self.max_pairs > self.min_pairs
                 else counted(self.min_pairs, "pair"))
        runs = f"{self.min_runs}–{self.max_runs}" if self.max_runs > self.min_runs else str(self.min_runs)
        full = full_length_words(*self.full_steps, *self.batches)
        return self._speed_text(pairs, runs, full) + (f"; accuracy gate: {self.gate}" if self.gate else "")

    def _speed_text(self, pairs: str, runs: str, full: str) -> str:
        none = self.gate == accuracy.NO_VALIDATION
        gated = "(no validation data)" if none else "with validation (the accuracy gate)"
        seeds = seed_runs_words(self.seed_runs, self.noise_seeds, self.reference)
        if not self.steady_s:
            return (f"{pairs} ({runs} runs), each training {full} " + ("(no validation data)" if none else
                                                                         "with validation")
                    + (f"; after the first pair, {seeds}" if seeds else ""))
        gated += f", then {seeds}" if seeds else ""
        gate = "B trains" if self.gate_arms == (B,) or self.reused else "A and B each train"
        reused = (f", A's full-length run re-used from {self.reused} (trained the same way in this study: same "
                  f"settings, seed, length and validation points; it counts for no speed ratio)"
                  if self.reused else "")
        if self.paired:
            aim = (f"{self.steady_s:.0f} s of steady state per arm (the two arms together as long as the "
                   f"process's own start-up, builds and warm-ups)" if self.sized else
                   f"at least {self.steady_s:g} s of steady state per arm, more if the first runs show the "
                   f"process's start-up, builds and warm-ups take longer")
            return (f"{runs} runs: first {gate} {full} {gated}{reused}, then {pairs} measure "
                    f"speed only, A and B in one process in interleaved blocks (ABBA BAAB), aiming at {aim}")
        sized = ""
        if all(self.speed_steps):
            sa, sb = self.speed_steps
            sized = f" ({sa} steps)" if sa == sb else f" ({sa} steps of A, {sb} of B)"
        if self.reused:
            return (f"{runs} runs: first {gate} {full} {gated}{reused}, then {pairs} measure speed only{sized}, "
                    f"aiming at {self.steady_s:g} s of steady state each")
        return (f"{pairs} ({runs} runs): the first trains {full} {gated}, {'then ' if seeds else ''}"
                f"the others measure speed only{sized}, aiming at {self.steady_s:g} s of steady state each")
