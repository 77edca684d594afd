"""Checkers of notebook 08: right answers pass, typical wrong answers get a one-line hint, never a traceback."""
import math

import torch

from attnlib import checks


def rope_rotate(x, sign=1.0, pairs="neighbours", exponent=2, start=0):
    seq, d = x.shape
    omega = 10000 ** (-exponent * torch.arange(0, d // 2, dtype=x.dtype) / d)  # [d/2]
    angle = sign * (torch.arange(seq, dtype=x.dtype)[:, None] + start) * omega  # [seq, d/2]
    if pairs == "neighbours":
        even, odd = x[:, 0::2], x[:, 1::2]
        return torch.stack([even * angle.cos() - odd * angle.sin(), even * angle.sin() + odd * angle.cos()],
                           dim=-1).flatten(-2)
    first, second = x[:, : d // 2], x[:, d // 2:]
    return torch.cat([first * angle.cos() - second * angle.sin(), first * angle.sin() + second * angle.cos()], -1)


def test_rope_right_answer(capsys):
    assert checks.check_rope(rope_rotate) is True
    assert "✓ Correct" in capsys.readouterr().out


def test_rope_wrong_answers_get_their_hint(capsys):
    cases = [
        (lambda x: rope_rotate(x, sign=-1.0), "turned the wrong way"),
        (lambda x: rope_rotate(x, pairs="halves"), "pairs neighbours (2i, 2i + 1)"),
        (lambda x: rope_rotate(x, exponent=1), "the exponent has 2i, not i"),
        (lambda x: rope_rotate(x, start=1), "position 0 and is not rotated"),
        (lambda x: x, "largest difference"),
        (lambda x: x[:, :2], "expected shape"),
    ]
    for wrong, words in cases:
        assert checks.check_rope(wrong) is False
        out = capsys.readouterr().out
        assert "✗ Not yet" in out and words in out, out


def test_rope_unwritten(capsys):
    def todo(x):
        raise NotImplementedError

    assert checks.check_rope(todo) is False
    assert "not written yet" in capsys.readouterr().out


def cache_step(q, k, v, K, V):
    K, V = torch.cat([K, k[None]]), torch.cat([V, v[None]])
    weights = torch.softmax(K @ q / math.sqrt(q.shape[0]), dim=0)
    return weights @ V, K, V


def test_kv_cache_right_answer(capsys):
    assert checks.check_kv_cache_step(cache_step) is True
    assert "✓ Correct" in capsys.readouterr().out


def test_kv_cache_wrong_answers_get_their_hint(capsys):
    def attend_first(q, k, v, K, V):
        out = torch.softmax(K @ q / math.sqrt(q.shape[0]), dim=0) @ V  # the new token does not see itself
        return out, torch.cat([K, k[None]]), torch.cat([V, v[None]])

    def unscaled(q, k, v, K, V):
        K, V = torch.cat([K, k[None]]), torch.cat([V, v[None]])
        return torch.softmax(K @ q, dim=0) @ V, K, V

    def new_first(q, k, v, K, V):
        K, V = torch.cat([k[None], K]), torch.cat([v[None], V])  # prepends: same output, cache in the wrong order
        return torch.softmax(K @ q / math.sqrt(q.shape[0]), dim=0) @ V, K, V

    def no_cache(q, k, v, K, V):
        return v, k[None], v[None]  # forgets the past

    cases = [(attend_first, "before attending"), (unscaled, "Divide the scores by √d"),
             (new_first, "the new one last"), (no_cache, "the returned K"),
             (lambda q, k, v, K, V: v, "return the tuple (output, K, V)")]
    for wrong, words in cases:
        assert checks.check_kv_cache_step(wrong) is False
        out = capsys.readouterr().out
        assert "✗ Not yet" in out and words in out, out
