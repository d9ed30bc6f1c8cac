"""Wire capture: what crossed the wire, byte for byte, and its parsed view."""
