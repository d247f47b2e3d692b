"""Two runs in one process, measured in interleaved blocks (`run-pair`, docs/MEASUREMENT.md "Paired speed replicates").

Each arm trains in its own thread with its own `model.fit`, but only one of
them holds the baton at a time: the other waits, with nothing of its own on
the device, at a step boundary. The schedule is ABBA BAAB … (`interleaved`),
so a drift of the machine that is linear in time falls equally on both arms.

A block ends at a window boundary (a device-draining read, `Instrument`), once
the arm measured its block's share of steady seconds; the arm's first block
also holds its warm-up. Handing over, the other arm's block and the first call
after coming back (caches and the input pipeline's buffer are the other
arm's) never enter the arm's windows: the instrument restarts its clocks on
resuming and discards its first call (`DISCARD_CALLS`).
"""

from __future__ import annotations

import threading
import time

BLOCKS_PER_ARM = 4  # ABBA BAAB: each arm's blocks sit symmetrically in time, so a linear drift cancels
DISCARD_CALLS = 1  # calls after a switch whose time is not measured (the other arm's caches, a filled buffer)

CONTINUE, SWITCHED, FINISHED = "continue", "switched", "finished"


def interleaved(first: str, second: str, blocks: int = BLOCKS_PER_ARM) -> list[str]:
    """The block order: [a, b, b, a, b, a, a, b] for blocks=4 (a Thue–Morse sequence: every prefix of
    2^k blocks is balanced, so a linear drift and a quadratic one over 8 blocks both cancel)."""
    order = [first, second]
    while len(order) < 2 * blocks:
        order += [second if arm == first else first for arm in order]
    return order[:2 * blocks]


class Blocks:
    """The baton between two arms' training threads, and what each arm's blocks cost.

    `wait_turn(arm)` blocks until the schedule gives `arm` the next block;
    `end_block(arm)` says the arm measured its block and returns whether it
    goes on (CONTINUE: its next block follows at once), came back after the
    other's block (SWITCHED) or has measured all its blocks (FINISHED: it
    keeps the baton until `finish(arm)`). `finish` also runs when an arm
    fails; `abort` then tells the other to stop.
    """

    def __init__(self, first: str, second: str, blocks: int = BLOCKS_PER_ARM) -> None:
        self.arms = (first, second)
        self.blocks = blocks
        self.schedule = interleaved(first, second, blocks)
        self.index = 0
        self.done_blocks = {first: 0, second: 0}
        self.active_s = {first: 0.0, second: 0.0}  # each arm's own time holding the baton
        self.block_times: dict[str, list[tuple[float, float]]] = {first: [], second: []}  # (start, end) perf_counter
        self.switch_s: list[float] = []  # from one arm's hand-over to the other's first moment with the baton
        self.holding = 0  # how many times an arm took the baton: consecutive holdings are the two arms' (1 on)
        self.aborted = False
        self._finished: set[str] = set()
        self._holder: str | None = None
        self._since = 0.0
        self._handed_at: float | None = None
        self._cond = threading.Condition()

    def owner(self) -> str | None:
        """The arm whose block comes next (skipping an arm that has ended), None when both have ended."""
        for arm in self.schedule[self.index:]:
            if arm not in self._finished:
                return arm
        left = [arm for arm in self.arms if arm not in self._finished]
        return left[0] if left else None

    def wait_turn(self, arm: str) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._holder is None and self.owner() == arm)
            self._holder = arm
            self.holding += 1
            self._since = time.perf_counter()
            if self._handed_at is not None:
                self.switch_s.append(self._since - self._handed_at)
                self._handed_at = None

    def end_block(self, arm: str) -> str:
        with self._cond:
            self.index += 1
            self.done_blocks[arm] += 1
            if self.done_blocks[arm] >= self.blocks:
                return FINISHED
            if self.owner() == arm:
                return CONTINUE
            self._release(arm)
        self.wait_turn(arm)
        return SWITCHED

    def finish(self, arm: str) -> None:
        """`arm`'s fit() has returned (or failed): the other arm trains the rest of its blocks."""
        with self._cond:
            self._finished.add(arm)
            if self._holder == arm:
                self._release(arm)
            self._cond.notify_all()

    def abort(self) -> None:
        """One arm failed: the other stops at its next step (its run ends as cancelled, its summary written)."""
        self.aborted = True

    def _release(self, arm: str) -> None:
        now = time.perf_counter()
        self.active_s[arm] += now - self._since
        self.block_times[arm].append((self._since, now))
        self._holder = None
        self._handed_at = now
        self._cond.notify_all()


class ArmBlocks:
    """What one arm's instrument needs: its name, the shared baton, and the steady seconds of each block."""

    def __init__(self, blocks: Blocks, arm: str, block_s: float) -> None:
        self.shared = blocks
        self.arm = arm
        self.block_s = block_s

    @property
    def number(self) -> int:
        return self.shared.done_blocks[self.arm] + 1

    @property
    def aborted(self) -> bool:
        return self.shared.aborted

    @property
    def holding(self) -> int:
        """The process's holding of the baton this arm trains in now (`hand_overs` pairs neighbouring ones)."""
        return self.shared.holding

    def end_block(self) -> str:
        return self.shared.end_block(self.arm)


def hand_overs(windows: dict[str, list[tuple[int, float]]]) -> dict[str, list[list[float]]]:
    """Each arm's [own rate, the other arm's rate] at every hand-over of the process: the last steady window
    before the baton changed hands against the first one after it (`tfturbo.summary.hand_over_ratio` reads them).

    `windows[arm]`: (holding, samples/s) of each of the arm's steady windows, in time order; a hand-over is
    counted where both neighbouring holdings hold a steady window (the warm-up or a revised steady start can
    leave one without). Two windows a moment apart see the machine alike, so their ratio keeps little of a
    change of the machine's speed between the arms' blocks; on this stack such a change moved a process's
    ratio of the arms' median rates from 1.26 to 0.95 (benchmarks/RESULTS.md, Trial efficiency).
    """
    holdings: dict[int, tuple[str, float, float]] = {}  # holding -> (arm, first window's rate, last one's)
    for arm, rows in windows.items():
        for holding, rate in rows:
            first = holdings[holding][1] if holding in holdings else rate
            holdings[holding] = (arm, first, rate)
    out: dict[str, list[list[float]]] = {arm: [] for arm in windows}
    for holding in sorted(holdings):
        if holding + 1 not in holdings:
            continue
        arm, _, before = holdings[holding]
        other, after, _ = holdings[holding + 1]
        if other != arm:
            out[arm].append([before, after])
            out[other].append([after, before])
    return out
