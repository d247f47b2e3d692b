"""Diagnoses of a user's workload, one job per module.

- `model_audit`: the built model (float32 head, Tensor-Core-friendly sizes, layer table).
- `dataset_audit`: the training data under XLA (partial last batch, varying dimensions),
  the batch size, and the tf.data transformations a pipeline is made of.
- `loss_scaling_audit`: a custom `train_step` under mixed_float16 that never scales its loss.
- `input_probe`: the input-bound verdict from three timed probes (input alone, step alone, real).
- `profile_reader`: the TensorBoard profiler's own input-pipeline analysis of a captured window.

The `audit` and `probe-input` commands and the live detectors are thin callers
of these modules. TensorFlow and Keras are imported inside the functions.
"""
