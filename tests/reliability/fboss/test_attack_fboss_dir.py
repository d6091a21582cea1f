"""Attack: `--fboss-dir` (or $TETON_FBOSS_DIR) names any folder, and its IDL files were read whole: a 50 GB sparse
.thrift file was a MemoryError, a FIFO hung the read.  Each reference file is read only when it is a regular file
within its cap (`teton.targets.fboss.bounded`), the IDL folder only up to MAX_IDL_FILES files; one line names it."""

from __future__ import annotations

import os
import time

import pytest

from teton.findings import TetonError
from teton.targets.fboss import bounded
from teton.targets.fboss.idl import preprocessed_tree


def _idl(tmp_path):
    idl = tmp_path / "idl"
    idl.mkdir()
    (idl / "ok.thrift").write_text("struct A {\n  1: i32 a;\n}\n")
    return idl


def test_a_huge_sparse_idl_file_is_refused_by_its_size(tmp_path):
    idl = _idl(tmp_path)
    with open(idl / "big.thrift", "wb") as f:
        f.truncate(50 * 1024**3)
    t = time.monotonic()
    with pytest.raises(TetonError, match=r"big\.thrift: 53,687,091,200 bytes, more than"):
        preprocessed_tree(idl, tmp_path / "out")
    assert time.monotonic() - t < 5


def test_a_fifo_among_the_idl_files_is_refused_not_waited_on(tmp_path):
    idl = _idl(tmp_path)
    os.mkfifo(idl / "pipe.thrift")
    with pytest.raises(TetonError, match=r"pipe\.thrift: not a regular file"):
        preprocessed_tree(idl, tmp_path / "out")


def test_too_many_idl_files_are_refused(tmp_path, monkeypatch):
    idl = _idl(tmp_path)
    for k in range(5):
        (idl / f"f{k}.thrift").write_text("")
    monkeypatch.setattr("teton.targets.fboss.idl.MAX_IDL_FILES", 3)
    with pytest.raises(TetonError, match="6 .thrift files, more than 3"):
        preprocessed_tree(idl, tmp_path / "out")


def test_a_reference_json_file_is_bounded(tmp_path):
    from teton.targets.fboss.data import _json

    path = tmp_path / "PlatformMapping.json"
    with open(path, "wb") as f:
        f.truncate(bounded.MAX_JSON_FILE + 1)
    with pytest.raises(TetonError, match="PlatformMapping.json: .* bytes, more than"):
        _json(path)
