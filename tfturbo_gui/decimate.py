"""Min/max decimation of a growing curve, updated with only the points that arrived since the last call.

A run streams in up to a million step times. pyqtgraph's own peak downsampling
works on the whole array at every `setData` (5 ms of each 100 ms refresh at
1M points, benchmarks/gui_ingest.py). `PeakDecimator` keeps, per block of B
consecutive points, the block's minimum and maximum, and hands the plot two
points per block: every spike stays visible (a slow step is a block maximum),
and the work per refresh is the new points plus a merge now and then. When
the blocks outnumber `2 * target`, neighbours merge and B doubles, so the
curve never holds more than ~4 × target points however long the run.
"""

from __future__ import annotations

import math

import numpy as np

TARGET_BLOCKS = 2048  # about twice the pixels a plot is wide on a large screen


class PeakDecimator:
    """Feed it the whole (growing) x and y arrays each time; it reads only what is new."""

    def __init__(self, target: int = TARGET_BLOCKS):
        self.target = target
        self.reset()

    def reset(self) -> None:
        self.block = 1
        self.done = 0  # points folded into complete blocks
        self._x = np.empty(0)
        self._lo = np.empty(0)
        self._hi = np.empty(0)

    def update(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The curve to draw for the first len(x) points: (x, y) with a block's min then max at its first x."""
        n = min(len(x), len(y))
        if n < self.done:  # a different (shorter) curve: start again
            self.reset()
        if self.done == 0:
            if n <= 2 * self.target:  # short enough to draw as it is
                return x[:n], y[:n]
            self.block = 1 << math.ceil(math.log2(n / (2 * self.target)))  # blocks from here on
        full = self.done + (n - self.done) // self.block * self.block
        if full > self.done:
            blocks = (full - self.done) // self.block
            ys = y[self.done:full].reshape(blocks, self.block)
            self._x = np.concatenate([self._x, x[self.done:full:self.block]])
            self._lo = np.concatenate([self._lo, np.fmin.reduce(ys, axis=1)])  # fmin/fmax skip NaN steps
            self._hi = np.concatenate([self._hi, np.fmax.reduce(ys, axis=1)])
            self.done = full
        while len(self._lo) > 2 * self.target:
            self._merge()
        tail_x, tail_y = x[self.done:n], y[self.done:n]
        out_x = np.concatenate([np.repeat(self._x, 2), tail_x])
        out_y = np.concatenate([np.column_stack([self._lo, self._hi]).ravel(), tail_y])
        return out_x, out_y

    def _merge(self) -> None:
        """Pairs of neighbouring blocks become one; an odd last block is given back to the tail."""
        even = len(self._lo) // 2 * 2
        if even < len(self._lo):
            self.done -= self.block
        self._x = self._x[:even:2]
        self._lo = np.fmin(self._lo[:even:2], self._lo[1:even:2])
        self._hi = np.fmax(self._hi[:even:2], self._hi[1:even:2])
        self.block *= 2
