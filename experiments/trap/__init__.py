"""Trap: its experiments modules."""
