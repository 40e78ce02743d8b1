"""Dataset format, JSON/PNG/PLY helpers, atomic writes, termination signals and a progress bar.

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
from .files import atomic_write_bytes, make_temporary_dir, sha256_of_file
from .jsonio import read_json, to_jsonable, write_json
from .ply import check_colors, read_ply, read_ply_cloud, read_ply_elements, write_ply
from .progress import ProgressBar
from .signals import Terminated, TerminationGuard, exit_code_for_interrupt, interruptible

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Correspondences",
    "Dataset",
    "DatasetWriter",
    "ProgressBar",
    "Terminated",
    "TerminationGuard",
    "View",
    "atomic_write_bytes",
    "check_colors",
    "exit_code_for_interrupt",
    "interruptible",
    "intrinsics_from_dict",
    "load_dataset",
    "make_temporary_dir",
    "read_json",
    "read_ply",
    "read_ply_cloud",
    "read_ply_elements",
    "sha256_of_file",
    "to_jsonable",
    "verify_dataset",
    "write_dataset",
    "write_json",
    "write_ply",
]
