"""`python -S tests/forward.py ARGUMENTS` is `python ARGUMENTS` forked by make check's fork server (tests/processes.py):
in this process's directory, with its environment and its stdin, stdout and stderr; its exit status is this process's,
a signal this process gets is passed on to it, and it is killed when this process dies. Where no server runs, or the
server would start the command rather than fork it (another PYTHONPATH, say), Python itself runs it.

It stands for a Python process of make check (a pytest-xdist worker, a bridge a run starts for each vscodelm case) and
is all that process costs before its own work: so it imports only modules the interpreter has built in, and runs
without site (-S). 13 ms, where an echo bridge started costs 90 and a bridge that loads the openai SDK 500. The client
side of the protocol lives here for processes.run too: a request is the command, its directory and its environment,
marshalled, with the three descriptors; the replies are lines, the pid and then the exit status, or `start`.
"""

import _signal
import _socket
import marshal
import os
import sys

FORK_SERVER = "LMCONFORM_TEST_FORK_SERVER"
START = "start"  # the server's answer to a command it leaves to be started


class Replies:
    """The server's replies, a line each, read off the connection as they come."""

    def __init__(self, connection: _socket.socket) -> None:
        self.connection = connection
        self.buffered = b""

    def next(self) -> str:
        while b"\n" not in self.buffered:
            data = self.connection.recv(64)
            if not data:
                raise ConnectionError("the fork server closed the connection before the process ended")
            self.buffered += data
        line, _, self.buffered = self.buffered.partition(b"\n")
        return line.decode()


def ask(address: str, arguments: list[str], cwd: str, environment: dict[str, str],
        fds: tuple[int, int, int]) -> tuple[int, Replies] | None:
    """`python ARGUMENTS` in `cwd` with `environment` and `fds` as its stdin, stdout and stderr, forked by the server
    at `address`: its pid, and the replies its exit status will come on; None when the server leaves it to be
    started."""
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    connection.connect(address)
    body = marshal.dumps({"argv": [str(part) for part in arguments], "cwd": cwd, "env": dict(environment)})
    descriptors = b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)  # an array of C ints, as SCM_RIGHTS wants
    connection.sendmsg([len(body).to_bytes(4, "big")], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, descriptors)])
    connection.sendall(body)
    replies = Replies(connection)
    first = replies.next()
    if first == START:
        connection.close()
        return None
    return int(first), replies


def forwarded(arguments: list[str]) -> int:
    address = os.environ.get(FORK_SERVER)
    asked = ask(address, arguments, os.getcwd(), dict(os.environ), (0, 1, 2)) if address else None
    if asked is None:
        os.execv(sys.executable, [sys.executable, *arguments])
    pid, replies = asked
    for passed_on in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
        _signal.signal(passed_on, lambda number, _: os.kill(pid, number))
    status = int(replies.next())
    if status < 0:  # ended by a signal: so does this process
        _signal.signal(-status, _signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    sys.exit(forwarded(sys.argv[1:]))
