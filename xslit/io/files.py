"""Atomic file writes and checksums: an interrupted write never leaves a half-written file.

Files and folders are created with the modes the user's umask gives (0644 and 0755 under the
usual umask 022), not the private 0600 and 0700 of ``tempfile.mkstemp`` and ``mkdtemp``.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

__all__ = ["atomic_write_bytes", "make_temporary_dir", "sha256_of_file"]


def _create_exclusive(folder: Path, prefix: str, suffix: str) -> tuple[int, Path]:
    """Open a new file ``folder/prefix<random>suffix`` with mode 0666 less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = folder / f"{prefix}{uuid.uuid4().hex[:12]}{suffix}"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file in {folder}")


def make_temporary_dir(folder, prefix: str) -> Path:
    """Create a new folder ``folder/prefix<random>`` with mode 0777 less the umask.

    Parameters
    ----------
    folder : str or Path
        An existing folder.
    prefix : str

    Returns
    -------
    Path
    """
    for _ in range(100):
        tmp = Path(folder) / f"{prefix}{uuid.uuid4().hex[:12]}"
        try:
            tmp.mkdir(mode=0o777)
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary folder in {folder}")


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    Readers see either the old file or the complete new one, never a partial file. The file
    gets mode 0666 less the umask, as ``open(path, "wb")`` would give it.
    """
    path = Path(path)
    fd, tmp = _create_exclusive(path.parent, f".{path.name}.", ".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_of_file(path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()
