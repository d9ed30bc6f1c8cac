"""The project's own tools: the real servers its tests start (targets/) and the recorders of real clients
(recorders/). Run from the checkout's root: `python -m tools.targets install`, `python -m tools.recorders.clients`."""
