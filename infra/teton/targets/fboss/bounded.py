"""Reading the FBOSS reference folder (`--fboss-dir`, $TETON_FBOSS_DIR) with bounds: it may be any folder the user
names, so each file is read only when it is a regular file (a FIFO is not waited on) of at most its cap, and the IDL
tree only up to a number of files.  FBOSS's own are far below: 27 IDL files of at most 83 kB, platform mappings of at
most 1.7 MB."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from teton.findings import TetonError

MiB = 1024 * 1024
MAX_IDL_FILE = 4 * MiB          # one .thrift file
MAX_IDL_FILES = 1_000           # .thrift files under the IDL folder
MAX_JSON_FILE = 64 * MiB        # a platform mapping or base config


def read_text(path: Path, cap: int) -> str:
    """The text of the regular file `path`, at most `cap` bytes; TetonError naming the file otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise TetonError(f"FBOSS reference file {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TetonError(f"FBOSS reference file {path}: not a regular file")
        if st.st_size > cap:
            raise TetonError(f"FBOSS reference file {path}: {st.st_size:,} bytes, more than {cap:,}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(cap + 1)
        if len(data) > cap:
            raise TetonError(f"FBOSS reference file {path}: more than {cap:,} bytes")
        return data.decode("utf-8")
    except OSError as exc:
        raise TetonError(f"FBOSS reference file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise TetonError(f"FBOSS reference file {path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    finally:
        os.close(fd)
