"""The `env` document: the one class that reads what the backend reported of the machine.

`python -m trainer_backend env` (trainer_backend/commands/env.py) writes the
document; the study keeps it in study.yaml's `environment`, and the study
engine, the wizard, `tfturbo tune`'s summary and the report read it. Every
reader goes through `Environment`, so "which policy does this hardware call
for", "which accelerator trains" and "how much memory may a larger batch use"
are answered here once, and a misspelt key is an attribute error a type
checker sees instead of a silent None.

Read tolerantly, as every tfturbo file (`run_summary.read_typed`): keys this
version does not know are kept and written back; a known key of the wrong
type is dropped with one line in `problems`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypedDict

from .run_summary import DICT, LIST, STR, read_into, with_extra

ACCELERATORS = ("TPU", "GPU")


class Device(TypedDict, total=False):
    """One physical device as `trainer_backend.hardware.devices` describes it (the `env` document's `devices`)."""

    type: str  # "CPU" | "GPU" | "TPU"
    name: str | None
    cores: int | None  # a CPU's
    native_bf16: bool  # a CPU with bfloat16 instructions
    bf16_flags: list[str]  # which (from /proc/cpuinfo)
    logical_devices: int  # a CPU split into logical devices (--devices on a CPU)
    device: str  # a GPU's TensorFlow name ("/physical_device:GPU:0")
    compute_capability: str | None  # a GPU's, "8.0"
    memory_total_bytes: int | None  # a GPU's, from NVML or nvidia-smi


class AvailableMemory(TypedDict):
    """What a larger batch may use (the `env` document's `memory`, `trainer_backend.hardware.available_memory`)."""

    kind: str  # "device" | "host"
    available_bytes: int | None  # None: not known (a TPU's size, a GPU neither NVML nor nvidia-smi reported)
    source: str  # where the figure comes from, in words


def typed_field(kind: str, default: Any = None) -> Any:
    """A document class's field of `kind` (`run_summary.read_typed`'s kinds), read and written by `from_dict`
    and `to_dict` (a field without one is the class's own: `extra`, `problems`)."""
    if callable(default):
        return field(default_factory=default, metadata={"kind": kind})
    return field(default=default, metadata={"kind": kind})


@dataclass
class Environment:
    """The machine a study measures on, as the backend's `env` command reported it."""

    tensorflow: str | None = typed_field(STR)
    keras: str | None = typed_field(STR)
    # one mapping per device as `trainer_backend.hardware.devices` describes it: {"type", "name", "memory", ...}
    devices: list[Device] = typed_field(LIST, list)
    device: str | None = typed_field(STR)  # the devices in one label ("GPU: NVIDIA A100 …", "CPU: …")
    recommended_policy: str | None = typed_field(STR)  # the 16-bit policy this hardware calls for (or float32)
    reason: str | None = typed_field(STR)  # why, in words
    accelerator_kind: str | None = typed_field(STR)  # "GPU" | "TPU" | None (the key `accelerator`; see `accelerator`)
    memory: AvailableMemory | None = typed_field(DICT)  # what a larger batch may use
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know (kept as read)
    problems: list[str] = field(default_factory=list, repr=False, compare=False)  # what from_dict dropped

    @property
    def accelerator(self) -> str | None:
        """"TPU" or "GPU" when the machine trains on one, else None (a document written before its
        `accelerator` key: read from its devices)."""
        if self.accelerator_kind in ACCELERATORS:
            return self.accelerator_kind
        kinds = {d.get("type") for d in self.devices if isinstance(d, dict)}
        return next((kind for kind in ACCELERATORS if kind in kinds), None)

    @property
    def available_memory(self) -> float | None:
        """Bytes of memory a larger batch may use (`memory.available_bytes`), None when not reported."""
        value = self.memory.get("available_bytes") if self.memory is not None else None
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def device_names(self) -> list[str]:
        """Each device's name (its type when it has none), as the study's log lists them."""
        return [str(d.get("name") or d.get("type")) for d in self.devices if isinstance(d, dict)]

    def policy_text(self) -> str:
        """"mixed_bfloat16 (why)": the recommended policy and its reason, as every front end says it."""
        return f"{self.recommended_policy} ({self.reason or ''})"

    def to_dict(self) -> dict[str, Any]:
        """The document as the backend wrote it: every known key, then the unknown ones as read."""
        return with_extra({_KEY.get(f.name, f.name): getattr(self, f.name) for f in _known()}, self.extra)

    @classmethod
    def from_dict(cls, doc: Any, source: str = "environment") -> Environment:
        """The `env` document in `doc`; a known key of the wrong type is dropped and named in `problems`."""
        out = cls()
        known = read_into(out, doc, {_KEY.get(f.name, f.name): f.metadata["kind"] for f in _known()}, source)
        names = {v: k for k, v in _KEY.items()}
        for key, value in known.items():
            if value is not None:
                setattr(out, names.get(key, key), value)
        out.devices = [d for d in out.devices if isinstance(d, dict)]  # as the backend wrote them
        return out


_KEY = {"accelerator_kind": "accelerator"}  # a field whose document key differs (`accelerator` is the property)


def _known() -> list[Any]:
    return [f for f in fields(Environment) if "kind" in f.metadata]
