"""Code cells: the program a cell runs without its comments and string literals, and the English in them."""
from __future__ import annotations

import ast
import io
import re
import tokenize

from zh.markdown import WORD_RUN


class _Blanked(ast.NodeTransformer):
    """Every str constant becomes "<str>"; an f-string becomes its formatted values, sorted (word order may
    change in Chinese), each value's expression and format spec kept as they are."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant("<str>") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        values = [self.visit_FormattedValue(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        if not values:
            return ast.Constant("<str>")
        return ast.Call(ast.Name("<f-string>"), sorted(values, key=ast.dump), [])

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        return ast.FormattedValue(self.visit(node.value), node.conversion, node.format_spec)  # spec unblanked


def program(source: str) -> str:
    """The code cell's program without its string literals and comments (an ast dump); raises SyntaxError."""
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(source))
    return ast.dump(_Blanked().visit(tree), include_attributes=False)


MARKER = re.compile(r"#\s*(NBVAL_[A-Z_]+|noqa\b[:\sA-Z0-9,]*)")  # comments nbval and ruff read: never translated


def english_in_code(source: str) -> list[str]:
    """English runs of ENGLISH_WORDS words in a code cell's comments and string literals (what a reader sees)."""
    texts = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                texts.append(MARKER.sub(" ", tok.string))
            elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                texts.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return []
    return [" ".join(m.group(0).split()) for t in texts for m in WORD_RUN.finditer(t)]
