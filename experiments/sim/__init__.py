"""Sim: its experiments modules."""
