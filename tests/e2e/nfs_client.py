"""A user-space NFSv4 client for the storage test: libnfs (Debian's libnfs13) through ctypes, run with the system's
Python inside a GPU host's network namespace (the kernel here has no NFS client module).

    python3 nfs_client.py write SERVER EXPORT PATH SOURCE   -> writes SOURCE to EXPORT/PATH, prints its sha256
    python3 nfs_client.py read SERVER EXPORT PATH           -> prints the sha256 and size of EXPORT/PATH

Why this way: libnfs 4.0 speaks NFSv4.0 only (no 4.1 or 4.2), and its NFSv4 WRITE encodes the data into a fixed
request buffer, so a write much over ~3.5 KiB fails on the client ("ZDR error: Failed to encode COMPOUND4args":
`nfs-cp` of a 64 MiB file leaves an empty file).  Writing in CHUNK-byte WRITEs works (64 MiB in ~2 s on loopback);
reads are not limited (1 MiB READs).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys

CHUNK = 2048             # bytes per NFSv4 WRITE: under libnfs 4.0's encode limit
READ = 1 << 20           # bytes per READ

lib = ctypes.CDLL("libnfs.so.13")
lib.nfs_init_context.restype = ctypes.c_void_p
lib.nfs_get_error.restype = ctypes.c_char_p
lib.nfs_get_error.argtypes = [ctypes.c_void_p]
lib.nfs_set_version.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.nfs_mount.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
lib.nfs_open2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                          ctypes.POINTER(ctypes.c_void_p)]
lib.nfs_pwrite.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_char_p]
lib.nfs_pread.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p]
lib.nfs_close.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.nfs_destroy_context.argtypes = [ctypes.c_void_p]


def _check(nfs: int, rc: int, what: str) -> int:
    if rc < 0:
        raise SystemExit(f"{what}: {lib.nfs_get_error(nfs).decode()}")
    return rc


def main(argv: list[str]) -> None:
    op, server, export, path = argv[:4]
    nfs = lib.nfs_init_context()
    _check(nfs, lib.nfs_set_version(nfs, 4), "version")
    _check(nfs, lib.nfs_mount(nfs, server.encode(), export.encode()), f"mount {server}:{export}")
    fh = ctypes.c_void_p()
    digest = hashlib.sha256()
    size = 0
    if op == "write":
        data = open(argv[4], "rb").read()      # noqa: SIM115 - a short script
        _check(nfs, lib.nfs_open2(nfs, path.encode(), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644,
                                  ctypes.byref(fh)), f"create {path}")
        while size < len(data):
            piece = data[size:size + CHUNK]
            size += _check(nfs, lib.nfs_pwrite(nfs, fh, size, len(piece), piece), f"write {path}")
        digest.update(data)
    else:
        _check(nfs, lib.nfs_open2(nfs, path.encode(), os.O_RDONLY, 0, ctypes.byref(fh)), f"open {path}")
        buf = ctypes.create_string_buffer(READ)
        while n := _check(nfs, lib.nfs_pread(nfs, fh, size, READ, buf), f"read {path}"):
            digest.update(buf.raw[:n])
            size += n
    _check(nfs, lib.nfs_close(nfs, fh), f"close {path}")
    lib.nfs_destroy_context(nfs)
    print(digest.hexdigest(), size)


if __name__ == "__main__":
    main(sys.argv[1:])
