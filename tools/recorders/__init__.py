"""Recorders of real clients' requests, run against `lmconform record`."""
