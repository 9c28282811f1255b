"""Threes: its training modules."""
