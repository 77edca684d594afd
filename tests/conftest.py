"""Shared test fixtures."""
import pytest


@pytest.fixture
def run(capsys):
    """Run a checker on an answer and return (result, printed text)."""

    def _run(checker, answer):
        result = checker(answer)
        return result, capsys.readouterr().out

    return _run
