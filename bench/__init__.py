"""Benchmarks, soak and their helpers (`make bench`, `make soak`); not part of the product."""
