"""Built-in workloads, loaded with `builtin:NAME` (a `-` in NAME is `_` in the file name).

Each module is a complete, self-contained workload file (docs/ARCHITECTURE.md, "Workloads") that a
user can copy as a starting point: no downloads, data generated with numpy from
fixed seeds, shuffled by tf.data under the global seed the runner sets.

Clean, learnable tasks: `mlp`, `cnn`, `transformer`.
Demos with exactly one planted problem each (fixtures for the diagnostics):
`fp16-softmax-head`, `ragged-batches`, `slow-input` (input-bound, a Python step no option can fix),
`uncached-input` (input-bound, cured by the automatic tf.data fixes), `unaligned-widths`, `custom-loop`.
"""
