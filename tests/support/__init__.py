"""Helpers the tests share: plain modules, no fixtures (those live in the conftest files).

Test modules import from here, never from one another nor from a conftest, so a test file can be
moved, renamed or deleted without breaking another.
"""
