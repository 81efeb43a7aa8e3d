"""One entry-point group, read from the installed distributions without `importlib.metadata`.

Design notes
------------
`jr2 --help` must list the commands plugins add, so it must find the `jr2` entry points, and it
must start within 100 ms (bench/cli_start.py). `importlib.metadata.entry_points()` costs a third
of that on its own: importing it pulls in `email`, `zipfile` and `importlib.resources`, and each
`EntryPoint.dist.name` parses a distribution's whole METADATA with the e-mail parser. The group
we need is one section of one small file per distribution, so this module reads just that:

- every directory on `sys.path`, in order, is listed once; each `*.dist-info` / `*.egg-info`
  directory in it (any case) is a distribution, named by the part of its directory name before
  the first `-`, normalised as `importlib.metadata` does (PEP 503, with `_`), and an old-style
  `*.egg` directory's `EGG-INFO` is one too (named by its PKG-INFO); the first distribution of a
  name wins, as in `importlib.metadata.entry_points()`;
- only a distribution whose `entry_points.txt` has a `[jr2]` section is read further: its
  METADATA's header, up to the first blank line, gives the distribution's name and version.

Where this reading could differ from `importlib.metadata` (a zip archive on `sys.path`, or a
meta-path finder that brings distributions of its own), `entry_points()` asks `importlib.metadata`
instead: the fast path is an optimisation, never a second truth.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

from .records import record


@record(frozen=True)
class EntryPoint:
    """One entry point: `name = value` of a group, and the distribution that declares it."""

    name: str
    value: str
    dist: str | None = None  # the distribution's name as its METADATA spells it
    version: str | None = None

    def load(self) -> Any:
        """Import `module` of `module:attr.path [extras]` and return the attribute (or the
        module), as `importlib.metadata.EntryPoint.load` does."""
        ref = self.value.split("[", 1)[0].strip()
        module, _, attrs = ref.partition(":")
        obj: Any = importlib.import_module(module.strip())
        for attr in filter(None, attrs.strip().split(".")):
            obj = getattr(obj, attr)
        return obj


def normalize(name: str) -> str:
    """A distribution name normalised for comparison (PEP 503, `-` spelt `_`)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of `group` of every installed distribution, in `sys.path` order."""
    if not _plain_paths():
        return _from_importlib_metadata(group)
    found: list[EntryPoint] = []
    seen: set[str] = set()
    for entry in sys.path:
        directory = entry or "."
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        infos: list[tuple[str | None, str]] = [
            (normalize(low.rpartition(".")[0].partition("-")[0]), name)
            for name in names if (low := name.lower()).endswith((".dist-info", ".egg-info"))]
        egg = os.path.basename(directory).lower()
        if egg.endswith(".egg"):  # an old-style egg directory: its EGG-INFO, after the rest
            infos += [(None, name) for name in names if name.lower() == "egg-info"]
        for key, dirname in infos:
            info = os.path.join(directory, dirname)
            section = _section(os.path.join(info, "entry_points.txt"), group)
            dist, version = _name_and_version(info) if section or key is None else (None, None)
            key = key if key is not None else normalize(dist or "")
            if key in seen:
                continue
            seen.add(key)
            found += [EntryPoint(n, v, dist, version) for n, v in section]
    return found


def _plain_paths() -> bool:
    """True when every distribution is a directory on `sys.path`: no zip archive on it, and no
    meta-path finder other than the standard path finder that could bring distributions."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and finder is not _path_finder():
            return False
    return not any(entry and os.path.isfile(entry) for entry in sys.path)


def _path_finder() -> Any:
    import importlib.machinery

    return importlib.machinery.PathFinder


def _section(path: str, group: str) -> list[tuple[str, str]]:
    """`name = value` pairs of `[group]` in an entry_points.txt (INI syntax), or []."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return []
    pairs: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            name, _, value = line.partition("=")
            pairs.append((name.strip(), value.strip()))
    return pairs


def _name_and_version(info: str) -> tuple[str | None, str | None]:
    """`Name` and `Version` from a distribution's METADATA (PKG-INFO in an egg-info) header."""
    name = version = None
    for fname in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(info, fname), encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        break
                    key, sep, value = line.partition(":")
                    if sep and key == "Name":
                        name = value.strip()
                    elif sep and key == "Version":
                        version = value.strip()
        except (OSError, UnicodeDecodeError):
            continue
        return name, version
    return name, version


def _from_importlib_metadata(group: str) -> list[EntryPoint]:
    from importlib import metadata

    return [EntryPoint(ep.name, ep.value, ep.dist.name if ep.dist else None,
                       ep.dist.version if ep.dist else None)
            for ep in metadata.entry_points(group=group)]
