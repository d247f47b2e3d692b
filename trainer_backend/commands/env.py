"""`env`: the devices, the versions, and the precision policy this hardware calls for."""

from __future__ import annotations

import argparse

from tfturbo import protocol

from .. import ceiling, hardware


def document() -> dict:
    """Devices, versions, the recommended policy, and the measured matmul ceiling per dtype (FLOP/s, cached)."""
    devs = hardware.devices()
    policy, reason = hardware.recommend_policy(devs)
    v = hardware.versions()
    label = hardware.device_label(devs)
    return {"devices": devs, "tensorflow": v["tensorflow"], "keras": v["keras"], "versions": v,
            "device": label, "recommended_policy": policy, "reason": reason,
            "ceiling": ceiling.ceilings(devs, label, v["tensorflow"]), "memory": hardware.available_memory(devs)}


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> int:
    writer.emit(protocol.RESULT, command="env", document=document())
    return 0
