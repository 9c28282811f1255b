"""Starship: its training modules."""
