"""CollectionFileSource: a dumped collection read back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcp_core.elements import COLLECTION_VERSION, ElementCollection, ElementKind
from mcp_core.errors import CollectionFormatError, SourceError, SourceUnavailableError
from mcp_core.sources import CollectionFileSource
from tests.strategies import prompt_element, template_element, tool_element

COLLECTION = ElementCollection([tool_element("a"), template_element(), prompt_element("p")])


def dump(path: Path, collection: ElementCollection = COLLECTION) -> Path:
    """Write ``collection`` to ``path`` the way a build step does."""
    path.write_text(collection.to_json(indent=2), encoding="utf-8")
    return path


class TestCollectionFileSource:
    """CollectionFileSource round-trips dumps and reports unusable files clearly."""

    async def test_round_trips_a_dumped_collection(self, tmp_path: Path) -> None:
        """provide() returns a collection equal to the one dumped."""
        source = CollectionFileSource(dump(tmp_path / "elements.json"))
        assert await source.provide() == COLLECTION

    def test_kinds_come_from_the_file(self, tmp_path: Path) -> None:
        """Without declared kinds, kinds() is the union of the kinds recorded in the file."""
        source = CollectionFileSource(dump(tmp_path / "elements.json"))
        assert (
            source.kinds() == ElementKind.TOOL | ElementKind.RESOURCE_TEMPLATE | ElementKind.PROMPT
        )

    def test_kinds_follow_a_rewritten_file(self, tmp_path: Path) -> None:
        """kinds() is cached per file version: rewriting the file changes the answer."""
        path = dump(tmp_path / "elements.json")
        source = CollectionFileSource(path)
        assert ElementKind.PROMPT in source.kinds()
        dump(path, ElementCollection([tool_element("only")]))
        os.utime(path, ns=(0, 1))  # a different mtime even on coarse-grained file systems
        assert source.kinds() == ElementKind.TOOL

    def test_declared_kinds_win_without_reading(self, tmp_path: Path) -> None:
        """Declared kinds are answered as is, even before the file exists."""
        source = CollectionFileSource(tmp_path / "later.json", kinds=ElementKind.TOOL)
        assert source.kinds() == ElementKind.TOOL

    async def test_one_invalid_entry_costs_only_itself(self, tmp_path: Path) -> None:
        """A bad name, a malformed template, garbage and a repeated ref are skipped one by one."""
        document = json.loads(COLLECTION.to_json())
        records = document["elements"]
        bad_name = json.loads(json.dumps(records[0]))
        bad_name["definition"]["name"] = "bad name!"
        bad_template = json.loads(json.dumps(records[1]))
        bad_template["definition"]["uriTemplate"] = "app://items/{id"
        repeated = json.loads(json.dumps(records[0]))
        document["elements"] = [bad_name, *records, bad_template, 42, repeated]
        path = tmp_path / "elements.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        source = CollectionFileSource(path)
        assert await source.provide() == COLLECTION
        found = [(d.kind, str(d.ref), d.message.split(" is ")[0]) for d in source.diagnostics()]
        assert found == [
            ("skipped", "tool 'bad name!'", "collection element #0"),
            ("skipped", "resource_template 'app://items/{id'", "collection element #4"),
            ("skipped", "None", "collection element #5"),
            (
                "skipped",
                "tool 'a'",
                "collection element #6 repeats tool 'a' of element #1; the first",
            ),
        ]
        assert all(
            d.message.endswith("fix or remove that entry, or re-dump the file")
            for d in source.diagnostics()
        )
        path.write_text(COLLECTION.to_json(), encoding="utf-8")
        await source.provide()
        assert source.diagnostics() == ()

    def test_unreadable_files_advertise_nothing(self, tmp_path: Path) -> None:
        """A missing, corrupt or future-version file advertises NONE: it can provide nothing."""
        (tmp_path / "corrupt.json").write_text("{not json", encoding="utf-8")
        future = json.loads(COLLECTION.to_json())
        future["version"] = COLLECTION_VERSION + 1
        (tmp_path / "future.json").write_text(json.dumps(future), encoding="utf-8")
        for name in ("missing.json", "corrupt.json", "future.json"):
            assert CollectionFileSource(tmp_path / name).kinds() == ElementKind.NONE

    async def test_a_missing_file_is_a_source_error(self, tmp_path: Path) -> None:
        """A missing file raises SourceError (not unavailable) naming the path, from the OSError."""
        path = tmp_path / "missing.json"
        source = CollectionFileSource(path)
        with pytest.raises(SourceError, match="cannot read collection file") as info:
            await source.provide()
        assert not isinstance(info.value, SourceUnavailableError)
        assert str(path) in str(info.value)
        assert info.value.source is source
        assert isinstance(info.value.__cause__, FileNotFoundError)

    async def test_a_corrupt_file_is_a_source_error(self, tmp_path: Path) -> None:
        """A corrupt file raises SourceError naming the path, caused by a CollectionFormatError."""
        path = tmp_path / "elements.json"
        path.write_text(COLLECTION.to_json()[:-10], encoding="utf-8")
        with pytest.raises(SourceError, match="is not usable: collection JSON is corrupt") as info:
            await CollectionFileSource(path).provide()
        assert str(path) in str(info.value)
        assert isinstance(info.value.__cause__, CollectionFormatError)

    async def test_a_future_version_is_a_source_error(self, tmp_path: Path) -> None:
        """A file from a newer format version says so, and how to fix it."""
        document = json.loads(COLLECTION.to_json())
        document["version"] = COLLECTION_VERSION + 1
        path = tmp_path / "elements.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        with pytest.raises(SourceError, match="newer than this mcp-core understands") as info:
            await CollectionFileSource(path).provide()
        assert isinstance(info.value.__cause__, CollectionFormatError)

    async def test_content_outside_declared_kinds_is_rejected(self, tmp_path: Path) -> None:
        """A file holding prompts under kinds=TOOL|RESOURCE_TEMPLATE is a configuration error."""
        path = dump(tmp_path / "elements.json")
        source = CollectionFileSource(path, kinds=ElementKind.TOOL | ElementKind.RESOURCE_TEMPLATE)
        with pytest.raises(SourceError, match="holds prompt elements, outside the declared kinds"):
            await source.provide()

    async def test_relative_paths_are_fixed_at_construction(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A relative path is resolved against the working directory when the source is made."""
        dump(tmp_path / "elements.json")
        monkeypatch.chdir(tmp_path)
        source = CollectionFileSource("elements.json")
        monkeypatch.chdir(tmp_path.parent)
        assert source.path == tmp_path / "elements.json"
        assert await source.provide() == COLLECTION

    def test_repr_shows_path_and_kinds(self, tmp_path: Path) -> None:
        """The repr names the path and any declared kinds."""
        path = tmp_path / "elements.json"
        assert repr(CollectionFileSource(path, kinds=ElementKind.TOOL)) == (
            f"CollectionFileSource({str(path)!r}, kinds=tool)"
        )


class TestHostileFile:
    """A file nested deeper than any decoder allows is an unusable file, never a crash."""

    async def test_deep_nesting(self, tmp_path: Path) -> None:
        """kinds() advertises nothing; provide() raises SourceError naming the file and the cause."""
        path = tmp_path / "deep.json"
        path.write_text("[" * 200_000, encoding="utf-8")
        source = CollectionFileSource(path)
        assert source.kinds() == ElementKind.NONE
        with pytest.raises(SourceError, match="nested too deeply") as caught:
            await source.provide()
        assert str(path) in str(caught.value)
        assert isinstance(caught.value.__cause__, CollectionFormatError)
