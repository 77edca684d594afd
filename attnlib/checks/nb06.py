"""Checkers for notebook 06 (PyTorch from scratch): each prints one line of feedback, returns a bool."""
from __future__ import annotations

import copy
import math
from typing import Callable, Optional, Sequence, Union

import torch
from torch import nn

from ..core import scaled_dot_product_attention
from ..i18n import t
from ..modules import MultiHeadAttention
from ..rounding import rounded
from .feedback import call, say

TOL = 1e-5  # float32 tolerance for every comparison below


def _call_module(fn: Callable, *args: object) -> tuple[object, Optional[str]]:
    """`call` for code that may be a module too, with hints for the usual view/reshape errors."""
    result, problem = call(fn, *args, what=t("a function or module"))
    if problem and "view size is not compatible" in problem:
        problem += t(" (view needs contiguous memory: call .contiguous() after transpose, or use .reshape)")
    elif problem and "invalid for input of size" in problem:
        problem += t(" (read the sizes from the tensor's .shape, not from notebook variables: the checker uses "
                     "its own sizes)")
    return result, problem


def _pair_problem(result: object, out_shape: tuple, w_shape: tuple) -> Optional[str]:
    """Describe what is wrong with a returned (output, weights) pair's type and shapes, or None."""
    if isinstance(result, torch.Tensor) or not isinstance(result, (tuple, list)) or len(result) != 2:
        got = t("one tensor") if isinstance(result, torch.Tensor) else type(result).__name__
        return t("it must return a pair (output, weights), got {got}", got=got)
    out, weights = result
    for name, x, shape in (("output", out, out_shape), ("weights", weights, w_shape)):
        if not isinstance(x, torch.Tensor):
            return t("{name} must be a tensor of shape {shape}, got {type}", name=name, shape=list(shape),
                     type=type(x).__name__)
    shapes = dict(got=list(weights.shape), expected=list(w_shape))
    if tuple(weights.shape) != w_shape:
        b, h, n_q, n_k = w_shape
        if tuple(weights.shape) == (b, h, n_k, n_q):
            return t("weights have shape {got}, expected {expected} [batch, heads, N_q, N_k]: the scores must be "
                     "Q @ K.transpose(-2, -1), one row per query", **shapes)
        return t("weights have shape {got}, expected {expected} [batch, heads, N_q, N_k]", **shapes)
    if tuple(out.shape) != out_shape:
        return t("output has shape {got}, expected {expected}", got=list(out.shape), expected=list(out_shape))
    return None


def _fitted_scale(weights: torch.Tensor, raw: torch.Tensor, allowed: torch.Tensor) -> Optional[float]:
    """The factor s with weights = softmax(s · raw) over allowed keys, if one factor fits every row, else None."""
    w = weights.detach().double()
    ok = allowed.expand_as(w) & (w > 1e-30)  # only entries whose log is informative
    if not bool((ok.sum(-1) >= 2).all()):
        return None
    logw = torch.where(ok, w.clamp_min(1e-300).log(), torch.zeros_like(w))  # [..., N_q, N_k]
    z = torch.where(ok, raw.double(), torch.zeros_like(w))  # [..., N_q, N_k]
    count = ok.sum(-1, keepdim=True)  # [..., N_q, 1]
    a = torch.where(ok, logw - logw.sum(-1, keepdim=True) / count, torch.zeros_like(w))  # centred log-weights
    b = torch.where(ok, z - z.sum(-1, keepdim=True) / count, torch.zeros_like(w))  # centred raw scores
    if float((b * b).sum()) == 0.0:
        return None
    s = float((a * b).sum() / (b * b).sum())
    if float((a - s * b).abs().max()) > 1e-3:
        return None
    return s


def _scale_names(d_k: int, heads: int) -> list[tuple[float, str]]:
    """Scales a learner might have used, with a readable name for each."""
    d_model = d_k * heads
    return [
        (1 / math.sqrt(d_k), f"1/√d_k = 1/√{d_k}"),
        (1 / math.sqrt(d_model), t("1/√d_model = 1/√{d_model} (d_model = heads · d_k)", d_model=d_model)),
        (1 / d_k, t("1/d_k = 1/{d_k} (no square root)", d_k=d_k)),
        (1 / d_model, f"1/d_model = 1/{d_model}"),
        (1.0, t("1 (no scaling at all)")),
        (math.sqrt(d_k), t("√d_k = √{d_k} (multiplied instead of divided)", d_k=d_k)),
    ]


def _weights_problem(
    weights: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, mask: Optional[torch.Tensor]
) -> Optional[str]:
    """Say which step produced wrong attention weights (softmax dim, scale, mask, or other), or None if right.

    Q: [B, h, N_q, d_k] and K: [B, h, N_k, d_k] are the per-head queries and keys the weights should come from;
    mask is bool (True = may attend) broadcastable to [B, h, N_q, N_k], or None.
    """
    w = weights.detach().double()  # [B, h, N_q, N_k]
    d_k, heads = Q.size(-1), Q.size(1)
    expected = scaled_dot_product_attention(Q.double(), K.double(), K.double(), mask)[1]  # [B, h, N_q, N_k]
    raw = Q.double() @ K.double().transpose(-2, -1)  # [B, h, N_q, N_k] unscaled scores
    allowed = torch.ones_like(raw, dtype=torch.bool) if mask is None else mask.expand_as(raw)
    if mask is not None:
        inverted = scaled_dot_product_attention(Q.double(), K.double(), K.double(), ~allowed)[1]  # opposite convention
        rows = (~allowed).any(-1, keepdim=True) & torch.isfinite(w).all(-1, keepdim=True)  # [B, h, N_q, 1]
        diff = torch.where(rows.expand_as(w), (w - inverted).abs(), torch.zeros_like(w))
        if bool(rows.any()) and float(diff.nan_to_num(1.0).max()) <= TOL:
            return t("the mask is inverted: your weights are 0 exactly where the mask is True. Here (as in the "
                     "article) True/1 means 'may attend', so fill the scores where mask == 0 (PyTorch's "
                     "nn.MultiheadAttention attn_mask uses the opposite convention, True = blocked)")
    if not bool(torch.isfinite(w).all()):
        return t("the weights contain NaN or inf (a row whose scores are all −inf gives NaN: fill masked scores "
                 "with −1e9)")
    if float((w - expected).abs().max()) <= TOL:
        return None
    row_sums = w.sum(-1)  # [B, h, N_q]
    if float((row_sums - 1).abs().max()) > TOL:
        for dim, name in ((-2, t("dim 2 of [batch, heads, N_q, N_k], the queries: each key's column sums to 1")),
                          (1, t("the heads")), (0, t("the batch"))):
            if float((w.sum(dim) - 1).abs().max()) <= TOL:
                return t("rows don't sum to 1 along keys: you normalised over dim={dim} ({name}). Each query needs a "
                         "distribution over the keys: softmax(scores, dim=-1)", dim=dim, name=name)
        b, h, i = (int(v) for v in torch.nonzero((row_sums - 1).abs() > TOL)[0])
        extra = t(" If you zeroed masked weights after the softmax, mask the scores before it "
                  "instead.") if mask is not None else ""
        return t("each query's weights must sum to 1 over the keys; row [batch {b}, head {h}, query {i}] sums to "
                 "{total:.4f}.{extra}", b=b, h=h, i=i, total=float(row_sums[b, h, i]), extra=extra)
    if mask is not None:
        leak = torch.where(allowed, torch.zeros_like(w), w)  # weight on keys that are masked out
        if float(leak.max()) > TOL:
            b, h, i, j = (int(v) for v in torch.nonzero(leak == leak.max())[0])
            return t("masked keys still get weight: query {i} may not see key {j} (batch {b}, head {h}) but gets "
                     "{weight:.4f}. Fill masked scores with −1e9 before the softmax", i=i, j=j, b=b, h=h,
                     weight=float(w[b, h, i, j]))
    s = _fitted_scale(w, raw, allowed)
    if s is not None:
        name = next((name for value, name in _scale_names(d_k, heads) if abs(s - value) <= 1e-3 * value), None)
        if name != f"1/√d_k = 1/√{d_k}":  # the first name that fits, else the fitted scale itself
            return t("the scores were multiplied by {s:.4f} = {name}; expected 1/√d_k = 1/√{d_k} = {right:.4f}. "
                     "Divide by √d_k, the width of ONE head", s=rounded(s), d_k=d_k, right=rounded(1 / math.sqrt(d_k)),
                     name=name or f"1/√{rounded(1 / s ** 2, 2):g}")
    err = (w - expected).abs()
    b, h, i, j = (int(v) for v in torch.nonzero(err == err.max())[0])
    return t("weight [batch {b}, head {h}, query {i}, key {j}] is {got:.4f}, expected {expected:.4f} = "
             "softmax(Q Kᵀ / √d_k) there", b=b, h=h, i=i, j=j, got=float(w[b, h, i, j]),
             expected=float(expected[b, h, i, j]))


def _seeded_qkv(seed: int, batch: int, heads: int, n_q: int, n_k: int, d_k: int) -> tuple[torch.Tensor, ...]:
    """Seeded float32 per-head Q [B, h, N_q, d_k], K and V [B, h, N_k, d_k]."""
    gen = torch.Generator().manual_seed(seed)
    f32 = torch.float32
    Q = torch.randn(batch, heads, n_q, d_k, generator=gen, dtype=f32)  # [B, h, N_q, d_k]
    K = torch.randn(batch, heads, n_k, d_k, generator=gen, dtype=f32)  # [B, h, N_k, d_k]
    V = torch.randn(batch, heads, n_k, d_k, generator=gen, dtype=f32)  # [B, h, N_k, d_k]
    return Q, K, V


def _test_mask(batch: int, n_q: int, n_k: int) -> torch.Tensor:
    """Bool mask [B, 1, N_q, N_k] mixing a causal-like band and padding, with no fully masked row."""
    i = torch.arange(n_q)[:, None]  # [N_q, 1]
    j = torch.arange(n_k)[None, :]  # [1, N_k]
    lengths = torch.tensor([n_k - 2 * b for b in range(batch)]).clamp_min(1)  # [B]
    band = j <= i + (n_k - n_q)  # [N_q, N_k]: query i sees keys up to its own position
    keep = j[None] < lengths[:, None, None]  # [B, 1, N_k]
    return (band[None] & keep)[:, None]  # [B, 1, N_q, N_k]


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest absolute difference between two tensors of the same shape."""
    return float((a.detach().double() - b.detach().double()).abs().max())


def _gradient_problem(
    fn: Callable, inputs: tuple[torch.Tensor, ...], mask: torch.Tensor, names: Sequence[str],
    reference: Optional[Callable] = None,
) -> Optional[str]:
    """Say how the gradients of fn(*inputs, mask)[0].sum() differ from the reference's, or None if they match.

    Args:
        fn: the learner's attention function or module. inputs: its tensor inputs. mask: the bool mask.
        names: one name per input, for the message. reference: the reference module, or None for
            attnlib's scaled_dot_product_attention (in float64).

    Returns:
        a one-line description of the first problem, or None.
    """
    leaves = [t.clone().requires_grad_() for t in inputs]
    result, error = _call_module(fn, *leaves, mask.clone())
    if error:
        return t("with inputs that require gradients, {error}", error=error)
    if not result[0].requires_grad:
        where = t("inside") if reference is None else t("inside forward")
        return t("the output carries no gradient: avoid .detach(), .data, .numpy() and torch.no_grad() {where}",
                 where=where)
    grads = torch.autograd.grad(result[0].sum(), leaves, allow_unused=True)
    refs = [t.clone().requires_grad_() for t in inputs]
    if reference is None:
        ref_out = scaled_dot_product_attention(*(t.double() for t in refs), mask)[0]  # [B, h, N_q, d_k]
    else:
        ref_out = reference(*refs, mask)[0]  # [B, N_q, d_model]
    ref_grads = torch.autograd.grad(ref_out.sum(), refs)
    for name, g, r in zip(names, grads, ref_grads):
        if g is None or _max_diff(g, r) > TOL:
            hint = t(": avoid in-place changes to tensors autograd needs") if reference is None else ""
            return t("the forward pass matches but the gradient with respect to {name} does not{hint}", name=name,
                     hint=hint)
    return None


def check_merge_heads(merge_heads: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """Check a learner's merge_heads: [batch, heads, seq, d_k] -> [batch, seq, heads · d_k] (Concat of the heads).

    Args:
        merge_heads: a function taking one tensor [batch, heads, seq, d_k].

    Returns:
        True when every number lands where the reference puts it, else False (after printing what is wrong).
    """
    B, H, N, D = 2, 4, 5, 3
    tags = torch.arange(B * H * N * D, dtype=torch.float64).view(B, H, N, D)  # each entry = its own id
    expected = tags.transpose(1, 2).contiguous().view(B, N, H * D)  # [B, N, d_model]
    got, error = _call_module(merge_heads, tags.clone())
    if error:
        return say(False, t("merge_heads on a {shape} tensor: {error}", shape=[B, H, N, D], error=error))
    if not isinstance(got, torch.Tensor):
        return say(False, t("merge_heads must return a tensor [batch, seq, d_model], got {type}",
                            type=type(got).__name__))
    if tuple(got.shape) != (B, N, H * D):
        return say(False, t("merge_heads turned {shape} [batch, heads, seq, d_k] into {got}; expected {expected} "
                            "[batch, seq, heads·d_k]", shape=[B, H, N, D], got=list(got.shape), expected=[B, N, H * D]))
    g = got.detach().double()
    if torch.equal(g, expected):
        return say(True, t("[batch, heads, seq, d_k] → [batch, seq, d_model]: token t's row is "
                           "[head 0 · t | head 1 · t | … | head {last} · t].", last=H - 1))
    if not bool(torch.isin(g, tags).all()):
        return say(False, t("merge_heads changed the numbers; it should only move them (transpose, then view)"))

    def describe(row: torch.Tensor) -> str:
        """Name the (head, token) pair behind each d_k-wide block of one output row."""
        parts = []
        for blk in row.view(H, D):
            ids = blk.long()
            h, n = int(ids[0] // (N * D) % H), int(ids[0] // D % N)
            same = bool((ids // D == ids[0] // D).all())
            parts.append(t("head {h}·token {n}", h=h, n=n) if same else t("mixed"))
        return "[" + " | ".join(parts) + "]"

    b, tok = (int(v) for v in torch.nonzero((g != expected).any(-1))[0])
    message = t("token {t}'s output row must hold every head's result for token {t}, side by side:\n"
                "    expected {expected}\n    yours    {yours}", t=tok, expected=describe(expected[b, tok]),
                yours=describe(g[b, tok]))
    if torch.equal(g, tags.reshape(B, N, H * D)):
        message = t("the heads are mixed across tokens. {message}\n    view() reads memory in order, and [batch, "
                    "heads, seq, d_k] stores each head's whole sequence\n    together: transpose(1, 2) first (→ "
                    "[batch, seq, heads, d_k]), then .contiguous().view(batch, seq, d_model)", message=message)
    return say(False, message)


def check_attention(attention: Callable[..., tuple[torch.Tensor, torch.Tensor]]) -> bool:
    """Check a learner's attention(Q, K, V, mask=None) -> (output, weights) on per-head tensors.

    Args:
        attention: takes Q [B, h, N_q, d_k], K and V [B, h, N_k, d_k] and an optional bool mask (True = may attend)
            broadcastable to [B, h, N_q, N_k]; returns (output [B, h, N_q, d_k], weights [B, h, N_q, N_k]).

    Returns:
        True when forward and gradients match the reference, else False (after printing which step is wrong).
    """
    B, H, N_q, N_k, D = 2, 2, 4, 6, 8
    Q, K, V = _seeded_qkv(6, B, H, N_q, N_k, D)
    mask = _test_mask(B, N_q, N_k)  # [B, 1, N_q, N_k]
    for case, m in ((t("without a mask"), None), (t("with a mask"), mask)):
        args = (Q.clone(), K.clone(), V.clone()) + (() if m is None else (m.clone(),))
        result, error = _call_module(attention, *args)
        if error:
            return say(False, t("{case}, {error}", case=case, error=error))
        problem = _pair_problem(result, (B, H, N_q, D), (B, H, N_q, N_k))
        out, weights = result if problem is None else (None, None)
        problem = problem or _weights_problem(weights, Q, K, m)
        if problem:
            return say(False, t("{case}: {problem}", case=case, problem=problem))
        ref_out = scaled_dot_product_attention(Q.double(), K.double(), V.double(), m)[0]  # [B, h, N_q, d_k]
        if _max_diff(out, ref_out) > TOL:
            if _max_diff(out, weights.detach().double() @ K.double()) <= TOL:
                return say(False, t("{case}: the weights are right but the output is weights @ K; it must be "
                                    "weights @ V", case=case))
            return say(False, t("{case}: the weights are right but the output is not weights @ V (largest "
                                "difference {err:.4g})", case=case, err=_max_diff(out, ref_out)))
    problem = _gradient_problem(attention, (Q, K, V), mask, "QKV")  # gradients reach Q, K and V like the reference's
    if problem:
        return say(False, problem)
    # a fully masked row: not an error either way, but worth knowing
    full = mask.clone()
    full[0, 0, 0] = False  # query 0 of batch 0 may see nothing
    result, error = _call_module(attention, Q.clone(), K.clone(), V.clone(), full)
    nan = error is None and not bool(torch.isfinite(result[1].detach()[0, :, 0]).all())
    note = t(" (Note: a fully masked row gives NaN with your fill value; the article's −1e9 gives uniform "
             "weights.)") if nan else ""
    return say(True, t("weights {shape} sum to 1 over the keys, scores scaled by 1/√d_k, masked keys get 0, and "
                       "output and gradients match the reference.{note}", shape=[B, H, N_q, N_k], note=note))


def _learner_and_reference(module: Union[nn.Module, type]) -> tuple[Optional[nn.Module], Optional[nn.Module], str]:
    """(the learner's module, attnlib's with the same weights, "") or (None, None, what went wrong)."""
    if isinstance(module, type):
        try:
            learner = module(32, 4)
        except Exception as exc:
            return None, None, t("{cls}(d_model=32, num_heads=4) raised {error}: {text}", cls=module.__name__,
                                 error=type(exc).__name__, text=exc)
    elif isinstance(module, nn.Module):
        learner = copy.deepcopy(module)  # loading weights must not touch the learner's own module
    else:
        return None, None, t("pass your module class or an instance, got {type}", type=type(module).__name__)
    d_model, heads = getattr(learner, "d_model", None), getattr(learner, "num_heads", None)
    if not isinstance(d_model, int) or not isinstance(heads, int):
        return None, None, t("the module needs integer attributes d_model and num_heads, as in the article")
    with torch.random.fork_rng():
        torch.manual_seed(60)
        ref = MultiHeadAttention(d_model, heads).float()
    try:
        learner.load_state_dict(ref.state_dict())
        learner.float()  # the checks run in float32, whatever the notebook's default dtype
    except Exception as exc:
        keys = sorted(learner.state_dict().keys())
        return None, None, t("its state_dict does not load the reference's weights ({error}). Expected keys "
                             "W_q.weight, W_q.bias, …, W_o.bias; yours are {keys}", error=type(exc).__name__, keys=keys)
    return learner, ref, ""


def _mha_output_problem(
    ref: MultiHeadAttention, result: tuple, q_in: torch.Tensor, kv_in: torch.Tensor, m: Optional[torch.Tensor]
) -> Optional[str]:
    """Name the step (splitting heads, the weights, merging heads, W_o) where the learner's output goes wrong."""
    out, weights = result
    B, n_q, d_model = q_in.shape
    heads, d_k, N_k = ref.num_heads, ref.d_k, kv_in.size(1)
    with torch.no_grad():
        ref_out, ref_w = ref(q_in, kv_in, kv_in, m)
        Q = ref.split_heads(ref.W_q(q_in))  # [B, h, N_q, d_k]
        K = ref.split_heads(ref.W_k(kv_in))  # [B, h, N_k, d_k]
        V = ref.split_heads(ref.W_v(kv_in))  # [B, h, N_k, d_k]
        Q_bad = ref.W_q(q_in).reshape(B, heads, n_q, d_k)  # split without transpose
        K_bad = ref.W_k(kv_in).reshape(B, heads, N_k, d_k)
    if _max_diff(weights, ref_w) > TOL:
        if _max_diff(weights, scaled_dot_product_attention(Q_bad, K_bad, K_bad, m)[1]) <= TOL:
            return t("splitting heads went wrong: you viewed [batch, seq, d_model] straight as [batch, heads, "
                     "seq, d_k], which mixes tokens into heads. view to [batch, seq, heads, d_k] first, then "
                     "transpose(1, 2)")
        return _weights_problem(weights, Q, K, m) or t("the weights differ from the reference")
    if _max_diff(out, ref_out) <= TOL:
        return None
    heads_out = ref_w @ V  # [B, h, N_q, d_k]
    with torch.no_grad():
        no_transpose = ref.W_o(heads_out.reshape(B, n_q, d_model))  # merge without transpose
    if _max_diff(out, no_transpose) <= TOL:
        return t("weights match, but merging heads mixes tokens: transpose(1, 2) before "
                 ".contiguous().view(batch, seq, d_model)")
    if _max_diff(out, ref.merge_heads(heads_out)) <= TOL:
        return t("weights match, but the output skips the final projection W_o")
    return t("weights match but the output differs from the reference by up to {err:.4g}", err=_max_diff(out, ref_out))


def check_multi_head_attention(module: Union[nn.Module, type]) -> bool:
    """Check a learner's MultiHeadAttention (class or instance) against attnlib's, with the same weights.

    Args:
        module: a class called as cls(d_model=32, num_heads=4), or an instance with attributes d_model and
            num_heads; either way with submodules W_q, W_k, W_v, W_o and forward(query, key, value, mask=None)
            returning (output [B, N_q, d_model], weights [B, h, N_q, N_k]).

    Returns:
        True when outputs, weights and gradients match on self- and cross-attention, else False.
    """
    learner, ref, problem = _learner_and_reference(module)
    if problem:
        return say(False, problem)
    d_model, heads = ref.d_model, ref.num_heads
    gen = torch.Generator().manual_seed(61)
    B, N_q, N_k = 2, 4, 6
    x_q = torch.randn(B, N_q, d_model, generator=gen, dtype=torch.float32)  # [B, N_q, d_model]
    x_kv = torch.randn(B, N_k, d_model, generator=gen, dtype=torch.float32)  # [B, N_k, d_model]
    mask = _test_mask(B, N_q, N_k)  # [B, 1, N_q, N_k]
    cases = ((t("self-attention without a mask"), x_kv, x_kv, None),
             (t("cross-attention (4 queries, 6 keys) with a mask"), x_q, x_kv, mask))
    for case, q_in, kv_in, m in cases:
        n_q = q_in.size(1)
        args = (q_in.clone(), kv_in.clone(), kv_in.clone()) + (() if m is None else (m.clone(),))
        result, error = _call_module(learner, *args)
        problem = error or _pair_problem(result, (B, n_q, d_model), (B, heads, n_q, N_k))
        problem = problem or _mha_output_problem(ref, result, q_in, kv_in, m)
        if problem:
            return say(False, t("{case}: {problem}", case=case, problem=problem))
    problem = _gradient_problem(learner, (x_q, x_kv, x_kv), mask, ("query", "key", "value"), ref)
    if problem:
        return say(False, problem)
    return say(True, t("same state_dict as al.MultiHeadAttention({d_model}, {heads}); outputs, weights "
                       "[B, {heads}, N_q, N_k] and gradients match, with and without a mask.", d_model=d_model,
                       heads=heads))
