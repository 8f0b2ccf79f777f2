"""What the stage costs, and the broadcast screen in pictures (`make screens`)."""
