"""The reference server's door for the model list, and the faults it serves."""
