"""`tfturbo tune`: the accuracy-gated speed-up ladder (plain Python; drives backend subprocesses)."""
