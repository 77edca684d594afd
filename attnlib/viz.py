"""Pure figure builders: arrays in, plotly figures out; nothing is displayed here."""
