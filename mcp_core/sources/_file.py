"""CollectionFileSource: a collection dumped to a JSON file by a build step."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import final

import anyio
import anyio.to_thread

from mcp_core._stretches import pause, waited_on
from mcp_core.elements import (
    CollectionDocument,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
)
from mcp_core.errors import CollectionFormatError, SourceError
from mcp_core.sources._diagnostics import SourceDiagnostic
from mcp_core.sources._marked import STRETCH

__all__ = ["CollectionFileSource"]


@final
class CollectionFileSource:
    """Provides the collection stored in a file written by ``ElementCollection.to_json()``.

    Trust: a collection file is as trusted as code. Its handler references are import paths
    and container ids that the server imports and runs, so whoever can write the file can run
    code in the server: keep it where only whoever deploys the code can write it (it is a
    build artefact, like the code itself), never on a volume that others can write. Unlike
    ``CachedSource`` entries, nothing authenticates it.

    The compile-time case: a build step dumps the element set once (``mcp-core dump``) and the
    server loads it without importing or scanning anything. ``path`` is made absolute when the
    source is created. The file is read and parsed in a worker thread, off the event loop, on
    every ``provide()``, and its elements built on the event loop a stretch at a time (requests
    are served in between); rewriting the file is an outside change that the next ``provide()``
    sees.

    Errors: a missing, unreadable, corrupt or future-version file is a configuration error, not
    an outage, so ``provide()`` raises :class:`~mcp_core.errors.SourceError` (``.source`` is
    this source; the message names the path; ``__cause__`` is the ``OSError`` or the
    :class:`~mcp_core.errors.CollectionFormatError`) rather than
    :class:`~mcp_core.errors.SourceUnavailableError`. A file holding elements outside declared
    ``kinds`` is rejected the same way. One invalid entry in an otherwise valid file costs only
    itself: it is left out (a repeated ref keeps the first entry) with one ``skipped`` diagnostic
    from :meth:`diagnostics` naming the entry's position and element.

    ``lookup(ref)`` (:class:`~mcp_core.sources.ElementLookup`) parses the file (in a worker
    thread) and builds only the element at ``ref``, the one ``provide()`` would hold there: a
    server starting from a large build-time catalogue answers its first call without building
    the others first. The parsed file is kept for the next ``lookup()`` or ``provide()`` while
    the file is unchanged (same modification time, size and inode), and let go once
    ``provide()`` has built the collection.

    ``kinds()``: the declared ``kinds`` when given. Otherwise advertising ``ElementKind.ALL``
    would over-advertise, so the file is parsed synchronously (it is a local file; the parsed
    file is kept for the ``provide()`` that follows, so one parse serves both), its records'
    ``"kind"`` labels united, and the answer cached until the file's modification time, size or
    inode changes. A file that is missing, unreadable, corrupt or of a
    future format version advertises ``ElementKind.NONE``, matching what ``provide()`` can
    deliver: nothing. Declare ``kinds`` to
    keep even that one read off the event loop.
    """

    __slots__ = (
        "_declared",
        "_diagnostics",
        "_document",
        "_kinds_cache",
        "_lock",
        "_path",
    )

    def __init__(self, path: str | os.PathLike[str], *, kinds: ElementKind | None = None) -> None:
        self._path = Path(path).absolute()
        self._declared = kinds
        self._kinds_cache: tuple[tuple[int, int, int], ElementKind] | None = None
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()
        self._document: tuple[tuple[int, int, int], CollectionDocument] | None = None
        self._lock = threading.Lock()  # parses happen in worker threads

    def __repr__(self) -> str:
        kinds = "" if self._declared is None else f", kinds={self._declared.label or 'none'}"
        return f"CollectionFileSource({str(self._path)!r}{kinds})"

    @property
    def path(self) -> Path:
        """The absolute path of the collection file."""
        return self._path

    def kinds(self) -> ElementKind:
        """The declared kinds, else the kinds recorded in the file (``NONE`` if unreadable)."""
        if self._declared is not None:
            return self._declared
        try:
            stat = self._path.stat()
        except OSError:
            return ElementKind.NONE
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        cached = self._kinds_cache
        if cached is not None and cached[0] == signature:
            return cached[1]
        try:
            # The parsed file is kept for the provide() that follows: one parse serves both.
            kinds = self._parsed().recorded_kinds()
        except SourceError:
            return ElementKind.NONE
        self._kinds_cache = (signature, kinds)
        return kinds

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """One ``skipped`` diagnostic per entry the last ``provide()`` left out."""
        return self._diagnostics

    async def provide(self) -> ElementCollection:
        """The collection in the file now; raises SourceError if it cannot be read or parsed."""
        # A stuck read (a network file system) must not outlive a timeout: the thread is abandoned.
        document = await anyio.to_thread.run_sync(self._parsed, abandon_on_cancel=True)
        skipped: list[SourceDiagnostic] = []

        def invalid(error: CollectionFormatError) -> None:
            skipped.append(
                SourceDiagnostic(
                    source=repr(self),
                    kind="skipped",
                    message=f"{error}; fix or remove that entry, or re-dump the file",
                    ref=error.ref,
                )
            )

        # Built on the event loop in stretches, as derivations are (see derive_all): requests
        # are served between them, a first call's lookup included (its worker thread, which
        # indexes the file, gets its turn: see mcp_core._stretches). The pauses are not
        # cancellation points.
        build = document.build(on_invalid=invalid)
        try:
            while build.step(STRETCH):
                await pause()
            collection = build.collection()
        except CollectionFormatError as exc:
            raise SourceError(
                f"collection file {str(self._path)!r} is not usable: {exc}",
                source=self,
            ) from exc
        finally:
            self._let_go(document)
        self._diagnostics = tuple(skipped)
        self._check_kinds(collection.kinds)
        return collection

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The element ``provide()`` would hold at ``ref``, building only that one (or None).

        Raises:
            SourceError: as ``provide()`` would (unreadable file, not a collection, elements
                outside the declared kinds).
        """
        with waited_on():  # a build on the loop gives it its turn
            document = await anyio.to_thread.run_sync(self._indexed, ref, abandon_on_cancel=True)
        declared = self._declared
        if declared is not None:
            # As provide() checks its collection: only valid elements count, so the records of
            # undeclared kinds (normally none) are built to see whether any is.
            extra = document.recorded_kinds() & ~declared
            if extra:
                self._check_kinds(document.collection(on_invalid=lambda _error: None).kinds)
        return document.element(ref)

    def _check_kinds(self, kinds: ElementKind) -> None:
        if self._declared is None:
            return
        extra = kinds & ~self._declared
        if extra:
            raise SourceError(
                f"collection file {str(self._path)!r} holds {extra.label} elements, outside "
                f"the declared kinds={self._declared.label or 'none'}; declare them or "
                "re-dump the file",
                source=self,
            )

    def _parsed(self) -> CollectionDocument:
        """The file, parsed: the kept document while the file is unchanged, else read now.

        One parse at a time (a lookup arriving while ``provide()`` parses waits for that parse);
        the document is kept for the lookups and the build that follow, until ``provide()``
        has built the collection.
        """
        with self._lock:
            try:
                stat = self._path.stat()
                signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
                kept = self._document
                if kept is not None and kept[0] == signature:
                    return kept[1]
                data = self._path.read_bytes()
            except OSError as exc:
                raise SourceError(
                    f"cannot read collection file {str(self._path)!r}: {exc.strerror or exc}; "
                    "check the path, or create the file with `mcp-core dump`",
                    source=self,
                ) from exc
            try:
                document = CollectionDocument.parse(data)
            except CollectionFormatError as exc:
                raise SourceError(
                    f"collection file {str(self._path)!r} is not usable: {exc}",
                    source=self,
                ) from exc
            self._document = (signature, document)
            return document

    def _indexed(self, ref: ElementRef) -> CollectionDocument:
        """The parsed file, its records indexed as far as ``ref``'s first (off the event loop)."""
        document = self._parsed()
        document.index(ref)
        return document

    def _let_go(self, document: CollectionDocument) -> None:
        """Forget ``document`` once a collection was built from it: the collection serves now."""
        with self._lock:
            kept = self._document
            if kept is not None and kept[1] is document:
                self._document = None

    def cache_inputs(self) -> Mapping[str, object]:
        """What the output depends on besides the file's content: its path and declared kinds."""
        kinds = None if self._declared is None else self._declared.label
        return {"path": str(self._path), "kinds": kinds}
