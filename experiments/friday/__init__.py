"""Friday: its experiments modules."""
