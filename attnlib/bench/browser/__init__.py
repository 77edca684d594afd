"""The browser latency bench (`python -m attnlib.bench browser`, measure.py) and what it shares with the
browser tests (tests/browser/): a JupyterLab server on copies of the notebooks (lab.py) and one notebook
driven in Chromium (notebook.py). Nothing here is imported by `import attnlib`.
"""
from .measure import main

__all__ = ["main"]
