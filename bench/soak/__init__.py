"""The soak (`make soak`)."""
