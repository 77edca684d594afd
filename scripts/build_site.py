"""Build the course as a static website and as reveal.js slide decks, both readable offline.

    python scripts/build_site.py --site build/site --slides build/slides   # `make site`
    python scripts/build_site.py --help

The build lives in scripts/sitebuild/ (one module per step, described in its __init__.py).
"""
import sys

from sitebuild.cli import main

if __name__ == "__main__":
    sys.exit(main())
