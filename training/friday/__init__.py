"""Friday: its training modules."""
