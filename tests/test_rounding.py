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


def test_audit_is_switched_on_by_the_environment_only(tmp_path):
    import os
    import subprocess
    import sys

    code = ("import importlib.util as u; spec = u.spec_from_file_location('r', %r); r = u.module_from_spec(spec); "
            "spec.loader.exec_module(r); r.rounded(0.5); print(r.AUDIT_PATH)" % al.rounding.__file__)  # no torch import
    env = {k: v for k, v in os.environ.items() if k != "ATTNLIB_ROUNDING_AUDIT"}
    path = tmp_path / "audit.pkl"
    on = subprocess.run([sys.executable, "-c", code], env=dict(env, ATTNLIB_ROUNDING_AUDIT=str(path)),
                        capture_output=True, text=True, check=True)
    assert on.stdout.strip() == str(path) and path.stat().st_size > 0
    off = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert off.stdout.strip() == "None"


def test_audit_records_values_decimals_and_caller(tmp_path, monkeypatch):
    import pickle

    path = tmp_path / "audit.pkl"
    monkeypatch.setattr(al.rounding, "AUDIT_PATH", str(path))
    assert al.rounded(torch.tensor([0.12345, 2.5]), decimals=2).tolist() == [0.12, 2.5]  # rounding unchanged
    al.rounded(7.0)
    with open(path, "rb") as f:
        first, second = pickle.load(f), pickle.load(f)
    assert first["decimals"] == 2 and second["decimals"] == 4
    assert first["values"].tolist() == [float(torch.tensor(0.12345)), 2.5]  # before rounding, float32 digits kept
    assert first["cell"] is None  # not inside IPython
    assert first["stack"][-1][0] == __file__  # innermost frame outside rounding.py: this test


def test_rounds_the_exact_binary_value_like_python_round():
    # 1.99995 is stored as 1.99994999…, 0.14665 as 0.14665000…1: numpy's rint(x·10⁴)/10⁴ rounds both wrongly
    values = [1.99995, -1.99995, 0.14665, 0.00005, 0.03125, 2.5]
    assert al.rounded(np.array(values)).tolist() == [round(v, 4) for v in values] == [
        1.9999, -1.9999, 0.1467, 0.0001, 0.0312, 2.5]
    assert al.rounded(1.99995) == 1.9999 and al.rounded(0.125, 2) == 0.12  # an exact tie goes to even
    f32 = torch.randn(10_000, generator=torch.Generator().manual_seed(0))  # float32 data: same as numpy's
    assert (al.rounded(f32) == np.round(f32.double().numpy(), 4)).all()


def test_non_finite_values_pass_through():
    assert np.isnan(al.rounded(float("nan")))
    assert al.rounded([np.inf, -np.inf, 1e308]).tolist() == [np.inf, -np.inf, 1e308]  # 1e308·10⁴ overflows
