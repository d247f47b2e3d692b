"""The trial engine: how tfturbo decides whether a configuration is faster and still accurate.

`tfturbo tune`, `tfturbo ab` and every page of the wizard go through it; none
of them re-implements a decision.

- `speed`: the throughput of a run (from its device-drained windows) and the
  speed verdict across replicated, interleaved runs;
- `accuracy`: the paired, non-inferiority accuracy gate on the fixed
  validation examples;
- `verdict`: the typed verdict documents (the `speed` / `accuracy` objects of
  `ab --json`, every tune rung and every wizard verdict) and the keep rule;
- `trial`: one A/B trial as a plan of runs (ABBA…), adaptive in its number of
  replicates; front ends execute the planned runs their own way (a blocking
  subprocess in the CLI, a QProcess in the wizard) and hand the summaries back.
  `Trial` coordinates; its jobs are modules of their own: `runs` (the planned,
  measured and re-used runs), `sizing` (the length rules), `schedule` (the
  setup and the runs so far: which run comes next and how long it trains),
  `plan` (what a trial intends, in words), `progress` (the time left and the
  progress line), `judging` (decided or not, rates, the verdict);
- `execute`: the blocking executor of planned runs and the summary a run
  that left no result is judged on.

It knows nothing of studies: which candidate comes next, and what is kept
and recommended, is the study engine's (`tfturbo.tune`), one layer above.
"""
