"""attnlib.measure: the memory meter measures what is allocated; the timer and the thread pin behave.
No timing is asserted here: benchmarks measure, tests do not."""
import math

import numpy as np
import pytest
import torch

from attnlib.measure import measure_peak_memory, median_time_ms, percentile, single_thread


def test_meter_measures_a_known_allocation():
    _, peak = measure_peak_memory(torch.empty, 1000, 1000)  # float32: 4 bytes each
    assert peak == 4_000_000


def test_meter_counts_freed_temporaries_and_returns_result():
    def make_and_drop():
        big = torch.ones(500, 1000, dtype=torch.float64)  # 4 MB, freed before returning
        small = big[:10].sum()  # tiny result
        del big
        return small

    result, peak = measure_peak_memory(make_and_drop)
    assert result.item() == 10_000
    assert 4_000_000 <= peak < 4_100_000


def test_meter_does_not_count_existing_tensors():
    x = torch.ones(1000, 1000)
    _, peak = measure_peak_memory(lambda: x.add_(1.0))  # in place: nothing new
    assert peak < 1000


def test_median_time_ms_runs_fn_warmup_plus_repeats_times():
    calls = []
    ms = median_time_ms(lambda: calls.append(1), repeats=3, warmup=2)
    assert len(calls) == 5 and ms >= 0 and math.isfinite(ms)


def test_single_thread_pins_one_thread_and_restores_the_count_even_after_an_error():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with single_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError), single_thread():
            raise RuntimeError("inside")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="fn must be callable, got int"):
        measure_peak_memory(42)
    with pytest.raises(ValueError, match="repeats must be a positive integer, got 0"):
        median_time_ms(lambda: None, repeats=0)
    with pytest.raises(ValueError, match="warmup must be an integer ≥ 0, got -1"):
        median_time_ms(lambda: None, warmup=-1)


def test_percentile_interpolates_like_numpy():
    xs = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    for q in (0, 10, 50, 95, 100):
        assert percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)), abs=1e-12)
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError, match="q must be between 0 and 100"):
        percentile(xs, 101)
