"""Benchmarks: `python -m attnlib.bench {latency,complexity,browser,site,hub}`; `make bench` runs the first three."""
