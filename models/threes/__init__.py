"""Threes: its networks (the n-tuple network, exported networks) and players on the searches."""
