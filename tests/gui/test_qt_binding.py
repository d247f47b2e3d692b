"""The Qt binding must keep Python's reference counts: PySide6 6.12.0's Signal.emit() does not.

Each emit there drops one reference to True; a GUI that emits signals for a
while (pyqtgraph emits on every repaint) then aborts the interpreter with
"bool_dealloc: deallocating True or False", at the latest when it exits.
pyproject.toml excludes that version; this test says so if it comes back.
"""

import sys

from PySide6 import QtCore


class _Emitter(QtCore.QObject):
    fired = QtCore.Signal(int)


def test_signal_emit_keeps_the_reference_count_of_true(qapp):
    emitter = _Emitter()
    emitter.fired.connect(lambda value: None)
    before = sys.getrefcount(True)
    for _ in range(50):  # few enough to stay far from zero on a broken binding
        emitter.fired.emit(1)
    lost = before - sys.getrefcount(True)
    assert lost < 25, (f"PySide6 {QtCore.qVersion()}: Signal.emit() lost {lost} references to True in 50 emits; "
                       "install a PySide6-Essentials version other than 6.12.0 (see pyproject.toml)")
