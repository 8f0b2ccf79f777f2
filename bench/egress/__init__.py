"""What the egress guard costs."""
