"""Measuring, not computing: peak tensor memory, median wall-clock time, and one torch thread."""
from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from typing import Any, Callable, Iterator

import torch

from ._validate import function, integer, positive_int


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """Run torch on one thread inside the `with` block, then restore the thread count.

    For tiny tensors (panels, the notebook-05 model): on a busy machine a second thread cost 10-25 ms of
    waiting per matmul (measured) for ~0.02 ms of work; one thread also fixes the summation order.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextlib.contextmanager
def _quiet_fd2() -> Iterator[None]:
    """Silence file descriptor 2 for a moment: the profiler's C++ backend logs two lines there on start/stop."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def measure_peak_memory(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, int]:
    """Run fn(*args, **kwargs) and MEASURE the peak CPU tensor memory it allocates, in bytes.

    torch.profiler (profile_memory=True) records every allocation and free of PyTorch's CPU allocator, fused
    kernels' buffers included; replayed in time order from zero they give the bytes live at each moment.
    Inputs that existed before are not counted, the result is; Python objects and allocator caching are not.

    Args:
        fn: the function to run; args, kwargs: passed to it.

    Returns:
        (fn's return value, peak bytes allocated during the call, ≥ 0; deterministic for a code path).
    """
    function("fn", fn)
    profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)
    with _quiet_fd2():
        profiler.__enter__()
    try:
        result = fn(*args, **kwargs)
    finally:
        with _quiet_fd2():
            profiler.__exit__(None, None, None)
    events = [e for e in profiler.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    live = peak = 0
    for e in events:
        if e.device_type() == torch.autograd.DeviceType.CPU:
            live += e.nbytes()
            peak = max(peak, live)
    return result, peak


def median_time_ms(fn: Callable[[], Any], *, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall-clock time of fn() in milliseconds over `repeats` runs, after `warmup` untimed runs.

    Args:
        fn: a function of no arguments. repeats: timed runs, ≥ 1. warmup: untimed runs first, ≥ 0.

    Returns:
        the median time in ms (robust to a run slowed down by other processes).
    """
    function("fn", fn)
    repeats = positive_int("repeats", repeats)
    for _ in range(integer("warmup", warmup, minimum=0)):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    times.sort()
    middle = len(times) // 2
    return times[middle] if len(times) % 2 else 0.5 * (times[middle - 1] + times[middle])


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) of `values`, with linear interpolation like numpy's default; nan if empty.

    Args:
        values: the measurements. q: the percentile, 0 ≤ q ≤ 100.

    Returns:
        the interpolated percentile (a float).
    """
    if not 0 <= q <= 100:
        raise ValueError(f"q must be between 0 and 100, got {q!r}")
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
