"""Build the course as a static website and as reveal.js slide decks, both readable offline.

Run it as `python scripts/build_site.py` (`make site`, `make slides`; options in cli.py). One module per step:

- course.py: what the README says about the course (Binder links, the notebook table) and the index pages.
- execute.py: each notebook runs in a fresh kernel with ATTNLIB_STATIC=1 (scripts/nbrun.py). Under that
  variable a LivePanel shows its figures as static plotly figures at their initial state, with a note saying
  the sliders move in JupyterLab or on Binder (attnlib/widgets/static.py). The committed notebooks carry no
  widget state, so this is how a live panel gets a picture on a page. Copies are cached in build/executed/.
- outputs.py: a preprocessor turns every plotly figure into HTML that calls the local plotly.min.js, puts a
  Binder link into each static-panel note, and replaces any other widget view with such a note.
- export.py: nbconvert's lab template (pages) and reveal template (decks) render the notebooks; our templates
  (scripts/site_templates/) strip every CDN script and point MathJax, plotly.js and reveal.js at assets/.
- assets.py: that folder, copied from pip packages: plotly (plotly.min.js), sphinx-mathjax-offline
  (MathJax 3.2, its CommonHTML output) and sphinx-revealjs (reveal.js 5). Nothing is fetched from the network.
- decks.py: where /usr/bin/chromium exists, each deck is measured at 1280x720 (the projector): a slide that runs
  off the bottom continues on a labelled continuation slide, a cell too tall for any slide is scaled down (to
  80 % at most) and scrolls; what still does not fit is printed.
- offline.py: every page is checked to load nothing from the network and only local files that exist.
- build.py: the steps in order, for pages and decks; cli.py: the command line.
"""
