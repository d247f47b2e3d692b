"""The tfturbo wizard (PySide6 + pyqtgraph).

This package never imports tensorflow or keras: everything that needs them
runs in a `python -m trainer_backend` child process, and the window only reads
its event stream (docs/ARCHITECTURE.md, "Processes"). Plain-Python pieces (the run
data model, the study folder) hold no Qt either, so they can be tested and
benchmarked without a display.
"""
