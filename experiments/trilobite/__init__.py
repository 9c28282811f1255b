"""Trilobite: its experiments modules."""
