"""The code to apply: the recommended changes as a real patch of the user's own file, and its proof.

Plain Python (libcst, never TensorFlow): the study's levers say what changes
(`changes`: the policy, compile() arguments, the batch size, the learning
rate, the float32 head, ...); `source` reads the user's script or workload
file and finds where it says each thing; `place` rewrites each change there
(`rewrite`: the edit in the file's concrete syntax tree, keeping the user's
formatting and comments); `build` makes one `Patch` of them (what was placed, what the file
already says, what is left to the user and why); `diff` writes it as a
unified diff; `check` runs nothing itself but says how the patched copy is
measured as written and whether that run ran the recommended settings;
`document` is STUDY_DIR/changes.patch, the one text every front end shows.
`advice` writes one change as the script's own edited lines, for a finding's
fix.
"""
