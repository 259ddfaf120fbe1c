"""rke-aws policy pack (see __main__.py); rules.py is importable on its own."""
