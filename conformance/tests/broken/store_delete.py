"""Breaks store.delete: ``delete_prefix`` matches ``prefix*`` as a glob (an unescaped Redis ``MATCH``).

A prefix holding ``*``, ``?`` or ``[`` then removes keys that do not start with it.
"""

from __future__ import annotations

import fnmatch

from ._cache_store import DictStore


class _GlobPrefix(DictStore):
    def matches(self, key: str, prefix: str) -> bool:
        return fnmatch.fnmatchcase(key, prefix + "*")


make_cache_store = _GlobPrefix
