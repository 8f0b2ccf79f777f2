"""Query-focused reads (`make bench-answers`)."""
