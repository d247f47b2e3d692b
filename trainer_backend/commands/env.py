"""`env`: the devices, the versions, and the precision policy this hardware calls for."""

from __future__ import annotations

import argparse

from tfturbo import protocol

from .. import ceiling, hardware


def document() -> dict:
    """Devices, versions, the recommended policy, the TF32 state (None: no TF32 on this device), the measured
    matmul ceiling per dtype (FLOP/s of one device, cached; its labels), and the memory a larger batch may use."""
    devs = hardware.devices()
    policy, reason = hardware.recommend_policy(devs)
    v = hardware.versions()
    label = hardware.device_label(devs)
    tf32 = hardware.tf32_enabled(devs)
    peaks = ceiling.ceilings(devs, label, v["tensorflow"], tf32=tf32)
    doc = {"devices": devs, "tensorflow": v["tensorflow"], "keras": v["keras"], "versions": v,
           "device": label, "accelerator": hardware.accelerator(devs), "recommended_policy": policy,
           "reason": reason, "tf32": tf32, "ceiling": peaks,
           "ceiling_labels": {dtype: ceiling.ceiling_label(dtype, tf32) for dtype in peaks},
           "memory": hardware.available_memory(devs)}
    if not peaks and hardware.accelerator(devs) == "TPU":
        doc["ceiling_note"] = ceiling.TPU_NOT_MEASURED
    return doc


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> int:
    writer.emit(protocol.RESULT, command="env", document=document())
    return 0
