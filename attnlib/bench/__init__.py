"""Benchmarks: `python -m attnlib.bench latency` and `python -m attnlib.bench complexity`."""
