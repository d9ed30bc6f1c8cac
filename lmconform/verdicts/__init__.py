"""Verdicts read back and graded: the results record of a run (records.py), and what it says of each client and
surface, in the words a user asks in: works, works with limits, or breaks."""
