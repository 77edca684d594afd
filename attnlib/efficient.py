"""Attention beyond O(N^2) memory: exact tiled (online-softmax) attention and linear attention."""
