"""Live detectors: diagnoses made from the measurements a run already takes (see base.py).

`default_detectors(settings)` is the list every run uses; each detector
module adds its own here.
"""

from __future__ import annotations

from tfturbo.settings import RunSettings

from .base import Detector


def default_detectors(settings: RunSettings) -> list[Detector]:
    from .loss_scale import LossScaleMonitor
    from .nan import NanLossDetector
    from .recompile import RecompileStorm
    from .xla import XlaNotActive

    return [NanLossDetector(), RecompileStorm(), LossScaleMonitor(), XlaNotActive()]
