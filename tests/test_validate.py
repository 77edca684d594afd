"""attnlib._validate: each check accepts what it should, returns it in the caller's form, and otherwise raises
a ValueError that names the argument, what it got and what was expected."""
import numpy as np
import pytest
import torch

from attnlib._validate import bool_mask, choice, flag, function, integer, number, pixels, positive_int, qkv, tensor


def test_integers_accept_python_and_numpy_ints_and_return_int():
    assert positive_int("n", 3) == 3
    assert type(integer("n", np.int64(5), minimum=0)) is int
    assert integer("k", 26, minimum=2, maximum=26) == 26


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: positive_int("n", 0), "n must be a positive integer, got 0"),
        (lambda: positive_int("n", True), "n must be a positive integer, got True"),  # a bool is not a count
        (lambda: positive_int("n", 2.0), "n must be a positive integer, got 2.0"),
        (lambda: integer("window", -1, minimum=0), "window must be an integer ≥ 0, got -1"),
        (lambda: integer("num_symbols", 27, minimum=2, maximum=26), "num_symbols must be an integer in 2..26, got 27"),
        (lambda: integer("x", "3"), "x must be an integer, got '3'"),
        (lambda: pixels("width", 150), "width must be an integer number of pixels ≥ 200, got 150"),
        (lambda: number("scale", float("nan")), "scale must be a finite number, got nan"),
        (lambda: number("eps", -1.0, minimum=0), "eps must be a finite number ≥ 0, got -1.0"),
        (lambda: number("lr", False), "lr must be a finite number, got False"),
        (lambda: flag("causal", "yes"), "causal must be True or False, got 'yes'"),
        (lambda: choice("dtype", torch.int32, (torch.float32, torch.float64)),
         r"dtype must be one of \[torch.float32, torch.float64\], got torch.int32"),
        (lambda: function("fn", 42), "fn must be callable, got int"),
        (lambda: tensor("x", [1, 2], 1), r"x must be a torch.Tensor \[..., seq, features\], got list"),
        (lambda: tensor("x", torch.zeros(3), 2),
         r"x must have at least 2 dimensions \[..., seq, features\], got shape \(3,\)"),
    ],
)
def test_bad_values_raise_naming_argument_value_and_expectation(call, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        call()


def test_number_and_flag_return_the_value():
    assert number("eps", 0, minimum=0) == 0.0 and type(number("eps", 1, minimum=0)) is float
    assert flag("causal", False) is False
    assert choice("kind", "b", ("a", "b")) == "b"


def test_bool_mask_converts_0_1_and_checks_broadcasting():
    m = bool_mask(torch.tensor([[1, 0, 1]]), (2, 3))
    assert m.dtype == torch.bool and m.tolist() == [[True, False, True]]
    assert bool_mask(torch.ones(3, dtype=torch.bool), (2, 3)).shape == (3,)  # returned as given, not broadcast
    with pytest.raises(ValueError, match=r"mask must hold only bool or 0/1 values \(1 = may attend\), found \[2, 3\]"):
        bool_mask(torch.tensor([[2, 0, 3]]), (2, 3))
    with pytest.raises(ValueError, match=r"pad of shape \(2, 4\) does not broadcast to the scores' shape \(2, 3\)"):
        bool_mask(torch.ones(2, 4), (2, 3), name="pad")
    with pytest.raises(ValueError, match="does not broadcast"):  # broadcasting must not grow the scores
        bool_mask(torch.ones(5, 2, 3), (2, 3))
    with pytest.raises(ValueError, match="mask must be a torch.Tensor of bool or 0/1 values, got list"):
        bool_mask([[1, 0, 1]], (1, 3))


def test_qkv_returns_the_broadcast_batch_shape():
    assert qkv(torch.zeros(2, 1, 4, 8), torch.zeros(3, 5, 8), torch.zeros(1, 5, 6)) == (2, 3)
    assert qkv(torch.zeros(4, 8), torch.zeros(5, 8), torch.zeros(5, 6)) == ()


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((4, 8), (5, 7), (5, 6)), r"query and key must share d_k \(last dimension\): query \(4, 8\), key \(5, 7\)"),
        (((4, 8), (5, 8), (6, 6)), r"key and value must share N_k .*key \(5, 8\), value \(6, 6\)"),
        (((4, 8), (0, 8), (0, 6)), r"key must hold at least one position \(N_k ≥ 1\), got shape \(0, 8\)"),
        (((2, 4, 8), (3, 5, 8), (3, 5, 6)), "do not broadcast together"),
        (((8,), (5, 8), (5, 6)), "query must have at least 2 dimensions"),
    ],
)
def test_qkv_names_what_does_not_fit(shapes, message):
    with pytest.raises(ValueError, match=message):
        qkv(*(torch.zeros(s) for s in shapes))


def test_qkv_floating_requires_one_floating_dtype():
    q, k, v = torch.zeros(4, 8), torch.zeros(5, 8), torch.zeros(5, 6)
    assert qkv(q.long(), k.long(), v, floating=False) == ()  # the plain check does not look at dtypes
    with pytest.raises(ValueError, match="query must be a floating-point tensor, got dtype torch.int64"):
        qkv(q.long(), k, v, floating=True)
    with pytest.raises(ValueError, match="query, key, value must share a dtype"):
        qkv(q, k.double(), v, floating=True)
