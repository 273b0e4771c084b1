"""The console script's entry: the process behaviour, set up before anything heavy is imported.

The commands need the SDK and the whole server stack, which take a second or more to import; a
Ctrl-C or a SIGTERM during that second must end the program as cleanly as one later on. So this
module imports nothing at its top that Python has not already loaded when it starts (``os`` and
``sys``; not even ``signal``, whose ``enum`` takes milliseconds): :func:`main` imports the rest
inside the ``try`` that turns an interrupt into the goodbye line.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing would delay the handling of Ctrl-C

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import FrameType
    from typing import Final

__all__ = ["main"]

# 128 + the signal's number, as a shell reports a process the signal ended. Literals, as the
# `signal` module may not be imported yet when the signal comes (SIGINT is 2 and SIGTERM 15 on
# every platform Python runs on; SIGPIPE is 13 on every Unix, and Windows has none).
_INTERRUPTED: Final = 128 + 2
_TERMINATED: Final = 128 + 15
_CLOSED_PIPE: Final = 128 + 13


def main(argv: Sequence[str] | None = None) -> int:
    """The ``mcp-core`` console script; returns the exit status.

    Behaves as a Unix tool: SIGINT and SIGTERM end it with one line on stderr and the status
    128 + the signal's number (130, 143); a closed stdout (``| head``) ends it quietly (141, as
    SIGPIPE would); a user's mistake is one line naming the culprit and the fix (exit status 2
    for a target that cannot be loaded, 1 for a server that cannot listen).
    """
    try:
        restore = _terminate_raises()
        try:
            from mcp_core.cli._commands import run_command  # noqa: PLC0415 -- see the module docstring

            return run_command(argv)
        finally:
            restore()
    except _Terminated:
        _goodbye("SIGTERM")
        return _TERMINATED
    except KeyboardInterrupt:
        _goodbye("SIGINT")
        return _INTERRUPTED
    except BrokenPipeError:
        # Whoever read stdout has gone: nothing more can be said there, and Python's flush of
        # stdout at exit must not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _CLOSED_PIPE


def _goodbye(signal_name: str) -> None:
    sys.stderr.write(f"mcp-core: stopped ({signal_name})\n")


class _Terminated(BaseException):
    """SIGTERM arrived outside the serving loop (which handles it itself).

    A BaseException, as KeyboardInterrupt is, so that no ``except Exception`` (in the target's
    own code while it is imported, say) takes the request to stop for an error.
    """


def _terminate_raises() -> Callable[[], object]:
    """Make SIGTERM raise :class:`_Terminated` in the main thread; returns what undoes it."""
    import signal  # noqa: PLC0415 -- see the module docstring
    import threading  # noqa: PLC0415

    def on_sigterm(_signum: int, _frame: FrameType | None) -> None:
        raise _Terminated

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    ):
        return lambda: None
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    return lambda: signal.signal(signal.SIGTERM, previous)
