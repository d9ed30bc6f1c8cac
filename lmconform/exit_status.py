"""The exit statuses every lmconform command and the pytest plugin share (README.md says them to users): 0 all
passed, 1 a check failed (or an expectation did not hold), and these two, which mean no verdict was reached."""

USAGE_ERROR = 2  # a bad option, or a file that cannot be read or written
UNREACHABLE = 3  # nothing answers at the target's address
