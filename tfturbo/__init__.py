"""tfturbo: measured, accuracy-gated speed-ups for Keras/TensorFlow training.

This package is plain Python (no Qt, no TensorFlow): the event protocol, run
files, statistics, findings and the command line live here so that the GUI,
the headless CLI and the training backend share one implementation.
"""

__version__ = "0.1.0"
