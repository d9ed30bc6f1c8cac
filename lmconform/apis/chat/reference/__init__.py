"""The reference server's door for chat completions, and the faults it serves."""
