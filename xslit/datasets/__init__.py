"""Dataset recipes, camera rigs and the ``python -m xslit.datasets`` command.

``generate_dataset(recipe, out, size, seed)`` renders one of :data:`RECIPES` (an X-slit stereo
pair or a circle of X-slit views in a textured room, pushbroom strips over a terrain) and writes
it in the format of :mod:`xslit.io` (``datasets/FORMAT.md``). Rendering needs Open3D, which is
imported only when a dataset is generated.
"""

from .generate import DEFAULT_VIEWS, RECIPES, generate_dataset, parse_size
from .rigs import RigView, pushbroom_strips_rig, xslit_circle_rig, xslit_stereo_rig

__all__ = [
    "DEFAULT_VIEWS",
    "RECIPES",
    "RigView",
    "generate_dataset",
    "parse_size",
    "pushbroom_strips_rig",
    "xslit_circle_rig",
    "xslit_stereo_rig",
]
