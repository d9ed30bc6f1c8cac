"""The reference server's door for the made-up echo API, and its fault."""
