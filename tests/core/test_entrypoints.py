"""The `jr2` entry-point group read without importlib.metadata (`jr2_core.entrypoints`): it must
find exactly what `importlib.metadata.entry_points(group=...)` finds, in the same order, with the
same distribution names and versions, so `jr2 --help` can skip importlib.metadata."""

from __future__ import annotations

import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from jr2_core import entrypoints
from jr2_core.entrypoints import EntryPoint


def _dist(site: Path, dirname: str, name: str, version: str, eps: str | None,
          meta_file: str = "METADATA") -> None:
    info = site / dirname
    info.mkdir(parents=True)
    (info / meta_file).write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                  "Summary: x\n\nName: not-a-header\nVersion: 9\n")
    if eps is not None:
        (info / "entry_points.txt").write_text(eps)


def _theirs(group: str) -> list[EntryPoint]:
    return [EntryPoint(ep.name, ep.value, ep.dist.name if ep.dist else None,
                       ep.dist.version if ep.dist else None)
            for ep in metadata.entry_points(group=group)]


@pytest.fixture
def sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "Alpha_Plug-1.0.dist-info", "Alpha.Plug", "1.0",
          "# comment\n[console_scripts]\nalpha = alpha:main\n\n[jr2]\n"
          "alpha = alpha_plug.plugin\n # another comment\nextra = alpha_plug.more:obj.attr [x]\n"
          "[other]\nnot = this\n")
    _dist(first, "beta-2.0.dist-info", "beta", "2.0", "[console_scripts]\nbeta = beta:main\n")
    _dist(first, "gamma-0.1.egg-info", "gamma", "0.1", "[jr2]\ngamma = gamma_mod\n",
          meta_file="PKG-INFO")
    _dist(first, "delta-3.dist-info", "delta", "3", None)
    # the same distribution again, later on the path: importlib.metadata keeps the first
    _dist(second, "alpha_plug-9.9.dist-info", "alpha-plug", "9.9", "[jr2]\nshadowed = nope\n")
    _dist(second, "epsilon-5.dist-info", "epsilon", "5", "[jr2]\neps = eps_mod:thing\n")
    _dist(first, "Zeta-1.0.DIST-INFO", "zeta", "1.0", "[jr2]\nzeta = zeta_mod\n")
    egg = tmp_path / "old_plug-0.5-py3.11.egg"
    _dist(egg, "EGG-INFO", "old-plug", "0.5", "[jr2]\nold = old_plug.plugin\n",
          meta_file="PKG-INFO")
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second),
                                      str(egg), *sys.path])
    return first, second


def test_reads_the_group_as_importlib_metadata_does(sites: tuple[Path, Path]) -> None:
    ours = entrypoints.entry_points("jr2")
    assert ours == _theirs("jr2")
    mine = [e for e in ours if e.dist in {"Alpha.Plug", "gamma", "epsilon", "zeta", "old-plug"}]
    # (the order within one directory is the directory's listing order, as in importlib)
    assert sorted((e.name, e.value, e.dist, e.version) for e in mine) == [
        ("alpha", "alpha_plug.plugin", "Alpha.Plug", "1.0"),
        ("eps", "eps_mod:thing", "epsilon", "5"),
        ("extra", "alpha_plug.more:obj.attr [x]", "Alpha.Plug", "1.0"),
        ("gamma", "gamma_mod", "gamma", "0.1"),
        ("old", "old_plug.plugin", "old-plug", "0.5"),
        ("zeta", "zeta_mod", "zeta", "1.0"),
    ]
    assert entrypoints.entry_points("console_scripts") == _theirs("console_scripts")


def test_a_zip_on_sys_path_is_read_by_importlib_metadata(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugs.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
        zf.writestr("zipped-1.0.dist-info/entry_points.txt", "[jr2]\nzipped = zipped_mod\n")
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    ours = entrypoints.entry_points("jr2")
    assert EntryPoint("zipped", "zipped_mod", "zipped", "1.0") in ours
    assert ours == _theirs("jr2")


def test_load_imports_the_module_and_walks_the_attributes() -> None:
    assert EntryPoint("x", "jr2_core.entrypoints").load() is entrypoints
    assert EntryPoint("x", "jr2_core.entrypoints:EntryPoint.load [extra]").load() \
        is EntryPoint.load
