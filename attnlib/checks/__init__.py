"""Exercise checkers, one module per notebook; each prints one line of feedback and returns True/False."""
from .nb01 import check_attention_weights, check_undecided_word, check_weighted_sum
from .nb02 import check_invisible_direction, check_score_matrix, check_symmetric_pair
from .nb03 import check_scaled_scores, check_score_variance, check_softmax_jacobian
from .nb04 import check_causal_mask, check_cnn_layers_needed, check_soft_read
from .nb05 import check_head_contribution, check_param_count, check_relation_mass
from .nb06 import check_attention, check_merge_heads, check_multi_head_attention
from .nb07 import check_causal_linear_attention, check_softmax_by_chunks, check_window_pairs
from .nb08 import check_kv_cache_step, check_rope

__all__ = [
    "check_weighted_sum",
    "check_attention_weights",
    "check_undecided_word",
    "check_score_matrix",
    "check_symmetric_pair",
    "check_invisible_direction",
    "check_scaled_scores",
    "check_score_variance",
    "check_softmax_jacobian",
    "check_soft_read",
    "check_causal_mask",
    "check_cnn_layers_needed",
    "check_param_count",
    "check_head_contribution",
    "check_relation_mass",
    "check_merge_heads",
    "check_attention",
    "check_multi_head_attention",
    "check_softmax_by_chunks",
    "check_window_pairs",
    "check_causal_linear_attention",
    "check_rope",
    "check_kv_cache_step",
]
