r"""This process's stdin and stdout as non-blocking pipes on the asyncio loop, with no SDK.

What the stdio transport (:mod:`mcp_core.server._stdio`, ADR 0052) and the stdio prelude
(:mod:`mcp_core.server._prelude`, ADR 0115) read and write through. While the pipes are open,
file descriptor 0 reads the null device and 1 writes to stderr, so a handler that prints or
reads stdin cannot corrupt the protocol; both are restored afterwards. Input is decoded as UTF-8
(undecodable bytes replaced) and split into lines (``\n``, ``\r\n`` or ``\r``), as the SDK's text
wrapper reads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Final, final

__all__ = ["StdioPipes", "open_pipes", "servable"]

_log = logging.getLogger("mcp_core.server")

# Bytes read from the pipe per line search; longer lines are read in several pieces.
_CHUNK: Final = 64 * 1024
_NEWLINE: Final = b"\n"


def servable() -> bool:
    """Whether the running loop can serve this process's stdin and stdout as pipes.

    Not on another event loop than asyncio (trio), on Windows, or when a standard stream is a
    regular file or ``/dev/null`` rather than a pipe, socket or terminal: the SDK's own
    transport serves those.
    """
    if sys.platform == "win32":  # pragma: no cover -- the proactor loop serves pipes differently
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        return False
    return _pipe_like(0) and _pipe_like(1)


@final
class StdioPipes:
    """The protocol's lines in, and its bytes out; see the module docstring."""

    __slots__ = ("_ended", "_lines", "_pending", "_reader", "_stop_reading", "_writer")

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        stop_reading: Callable[[], None],
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._stop_reading = stop_reading
        self._lines: deque[str] = deque()
        self._pending: list[bytes] = []
        self._ended = False

    @property
    def ended(self) -> bool:
        """Whether the input has ended and every line of it was read."""
        return self._ended and not self._lines

    async def line(self) -> str | None:
        """The next input line (without its end), or None at end of input or a broken pipe."""
        while not self._lines:
            if self._ended:
                return None
            chunk = await self._chunk()
            if chunk is None:
                self._ended = True
                continue
            # As the SDK's text wrapper reads: universal newlines, undecodable bytes replaced.
            self._lines.extend(line.decode("utf-8", "replace") for line in chunk.splitlines())
        return self._lines.popleft()

    async def _chunk(self) -> bytes | None:
        reader = self._reader
        pending = self._pending
        while True:
            try:
                chunk = await reader.readuntil(_NEWLINE)
            except asyncio.LimitOverrunError as exc:
                pending.append(await reader.readexactly(exc.consumed))
                continue
            except asyncio.IncompleteReadError as exc:
                chunk = b"".join(pending) + exc.partial
                pending.clear()
                self._ended = True  # a last line without its newline: the input ends with it
                return chunk or None
            except (ConnectionError, OSError):
                return None  # the client is gone: as at end of input
            if pending:
                chunk = b"".join(pending) + chunk
                pending.clear()
            return chunk

    async def write(self, data: bytes) -> bool:
        """Write ``data``, waiting while the pipe is full; False once the client closed stdout.

        A client that closed its end of stdout has left: reading stops as well.
        """
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (ConnectionError, OSError):
            _log.info("the client closed stdout; ending the session")
            self._stop_reading()
            return False
        return True


@asynccontextmanager
async def open_pipes() -> AsyncIterator[StdioPipes]:
    """This process's stdin and stdout as :class:`StdioPipes` (check :func:`servable` first)."""
    loop = asyncio.get_running_loop()
    with _claimed(0, _null_input) as stdin_fd, _claimed(1, _stderr_output) as stdout_fd:
        reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(os.dup(stdin_fd), "rb", buffering=0),
        )
        write_transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(stdout_fd), "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        try:
            yield StdioPipes(reader, writer, read_transport.close)
        finally:
            read_transport.close()
            write_transport.close()


def _pipe_like(fd: int) -> bool:
    """Whether the loop can serve ``fd``: a pipe, a socket or a terminal.

    Not a regular file, nor another character device than a terminal: the loop's selector
    refuses to watch ``/dev/null`` (a service manager's stdin), and would never see its end.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def _null_input() -> int:
    return os.open(os.devnull, os.O_RDONLY)


def _stderr_output() -> int:
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


@contextlib.contextmanager
def _claimed(fd: int, diversion: Callable[[], int]) -> Iterator[int]:
    """A private descriptor of the wire ``fd`` was, with ``fd`` itself diverted meanwhile.

    Anything else in the process that reads fd 0 or writes fd 1 (a handler's ``print``) gets the
    diversion instead of the protocol's pipe. Afterwards ``fd`` is the wire again, in blocking
    mode as it was.
    """
    wire = os.dup(fd)
    os.set_inheritable(wire, False)  # noqa: FBT003 -- the os API's own positional flag
    diverted = False
    try:
        replacement = diversion()
        try:
            os.dup2(replacement, fd)
            diverted = True
        finally:
            os.close(replacement)
        yield wire
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(wire, True)
        if diverted:
            os.dup2(wire, fd)
        os.close(wire)
