"""The reference server's door for LM Studio's native chat, and the faults it serves."""
