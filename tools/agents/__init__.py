"""What the project publishes about the coding agents (the fault × agent matrix of docs/agents.md)."""
