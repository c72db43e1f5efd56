"""bench/run.py's parts: workloads, tracers, the traced/untraced pairs and
the report. Each module has one job; see run.py for how they fit."""
