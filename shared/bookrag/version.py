"""The package's version: a leaf, so that any room may name it without importing the package root (whose
lazy public names reach up into `services`)."""

__version__ = "0.1.0"
