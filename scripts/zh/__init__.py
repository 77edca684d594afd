"""The Chinese edition's machinery, one concern per module; scripts/zh_edition.py is its command line."""
