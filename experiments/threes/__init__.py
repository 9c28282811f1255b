"""Threes: its experiments modules."""
