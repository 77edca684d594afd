"""The one rounding rule: float64, DECIMALS places, no negative zero, clear errors."""
import numpy as np
import pytest
import torch

import attnlib as al


def test_scalars_tensors_and_lists():
    assert al.rounded(0.123456) == 0.1235
    assert isinstance(al.rounded(torch.tensor(0.5)), float)
    out = al.rounded(torch.tensor([[0.123449, -0.00001]], dtype=torch.float32))
    assert out.dtype == np.float64 and out.shape == (1, 2)
    assert out.tolist() == [[0.1234, 0.0]] and not np.signbit(out).any()
    assert al.rounded([1.23456, 2.0], decimals=2).tolist() == [1.23, 2.0]


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_rejects_bad_decimals(bad):
    with pytest.raises(ValueError, match="decimals"):
        al.rounded(1.0, decimals=bad)


def test_rejects_non_numbers():
    with pytest.raises(ValueError, match="numeric"):
        al.rounded("abc")
