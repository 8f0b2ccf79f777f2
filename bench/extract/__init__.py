"""Extraction (`make bench-extract`)."""
