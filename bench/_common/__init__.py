"""Helpers more than one bench package (and the tests) use."""
