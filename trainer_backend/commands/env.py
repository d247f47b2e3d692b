"""`env`: the devices, the versions, and the precision policy this hardware calls for."""

from __future__ import annotations

import argparse

from tfturbo import protocol

from .. import hardware


def document() -> dict:
    devs = hardware.devices()
    policy, reason = hardware.recommend_policy(devs)
    v = hardware.versions()
    return {"devices": devs, "tensorflow": v["tensorflow"], "keras": v["keras"], "versions": v,
            "device": hardware.device_label(devs), "recommended_policy": policy, "reason": reason}


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> int:
    writer.emit(protocol.RESULT, command="env", document=document())
    return 0
