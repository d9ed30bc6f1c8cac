"""The reference server's door for text completions, and the faults it serves."""
