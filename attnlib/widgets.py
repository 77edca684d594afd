"""ipywidgets panels binding controls to figures; the only module that imports ipywidgets."""
