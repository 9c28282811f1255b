"""Starship: its experiments modules."""
