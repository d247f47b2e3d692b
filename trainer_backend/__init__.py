"""The training backend: `python -m trainer_backend CMD ...` (docs/ARCHITECTURE.md, "Processes")."""

import time

# when this process began (the package is the first thing `python -m trainer_backend` imports, before TensorFlow):
# a run's summary says how long its process took to get there (`process_s`)
STARTED = time.monotonic()
# True in a process forked from the warm server (trainer_backend/warm.py): its `hello` says so
WARM = False
