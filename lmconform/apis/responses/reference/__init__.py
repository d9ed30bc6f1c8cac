"""The reference server's door for the Responses API, and the faults it serves."""
