"""The only test code tests import: shared builders, runs, fakes and data tables (tests/tooling/test_layout.py).

Nothing here is collected as a test."""
