"""Dataset format, JSON/PNG/PLY helpers, atomic writes and a progress bar.

See ``datasets/FORMAT.md`` for the on-disk format.
"""

from .dataset import (
    FORMAT_NAME,
    FORMAT_VERSION,
    Correspondences,
    Dataset,
    DatasetWriter,
    View,
    intrinsics_from_dict,
    load_dataset,
    verify_dataset,
    write_dataset,
)
from .files import atomic_write_bytes, sha256_of_file
from .jsonio import read_json, to_jsonable, write_json
from .ply import read_ply, write_ply
from .progress import ProgressBar

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Correspondences",
    "Dataset",
    "DatasetWriter",
    "ProgressBar",
    "View",
    "atomic_write_bytes",
    "intrinsics_from_dict",
    "load_dataset",
    "read_json",
    "read_ply",
    "sha256_of_file",
    "to_jsonable",
    "verify_dataset",
    "write_dataset",
    "write_json",
    "write_ply",
]
