"""Pure projective geometry: Plücker lines, join and meet, homogeneous helpers."""

from .plucker import *  # noqa: F403
from .plucker import __all__ as _plucker_all
from .projective import *  # noqa: F403
from .projective import __all__ as _projective_all

__all__ = [*_plucker_all, *_projective_all]
