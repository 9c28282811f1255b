"""Trilobite: its networks and players on the generic searches."""
