"""Trap: its training modules."""
