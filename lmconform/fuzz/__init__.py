"""Generated requests: hypothesis strategies and state machines that look for what fixed cases miss."""
