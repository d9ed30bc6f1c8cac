"""The reference server's door for Anthropic's Messages API, and the faults it serves."""
