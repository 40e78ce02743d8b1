"""xslit: two-slit (crossed-slit) and pushbroom cameras, the way cv2.calib3d does pinholes.

The top level is the OpenCV-style surface: camera classes, camelCase functions and flags.
The layers underneath (``xslit.geometry``, ``xslit.cameras``, ...) are plain Python.
Importing xslit is light: Open3D and OpenCV load only in the modules that need them.
"""

from .api.cameras import (
    composePushbroomProjection,
    composeTwoSlitProjection,
    decomposePushbroomProjection,
    decomposeTwoSlitProjection,
    projectTwoSlitPoints,
)
from .cameras import (
    Camera,
    PinholeCamera,
    PushbroomCamera,
    PushbroomIntrinsics,
    RationalCamera,
    TwoSlitCamera,
    TwoSlitIntrinsics,
    camera_from_dict,
    retinal_plane_homography,
)

__version__ = "0.1.0"

__all__ = [
    "Camera",
    "PinholeCamera",
    "PushbroomCamera",
    "PushbroomIntrinsics",
    "RationalCamera",
    "TwoSlitCamera",
    "TwoSlitIntrinsics",
    "__version__",
    "camera_from_dict",
    "composePushbroomProjection",
    "composeTwoSlitProjection",
    "decomposePushbroomProjection",
    "decomposeTwoSlitProjection",
    "projectTwoSlitPoints",
    "retinal_plane_homography",
]

from .api.epipolar import (
    FM_LINEAR,
    FM_LMEDS,
    FM_RANSAC,
    USAC_ACCURATE,
    USAC_DEFAULT,
    UsacParams,
    computeEpipolarTensor,
    findEpipolarTensor,
)

__all__ += [
    "FM_LINEAR",
    "FM_LMEDS",
    "FM_RANSAC",
    "USAC_ACCURATE",
    "USAC_DEFAULT",
    "UsacParams",
    "computeEpipolarTensor",
    "findEpipolarTensor",
]

from .api.pose import recoverTwoSlitPose, triangulateTwoSlitPoints  # noqa: E402

__all__ += ["recoverTwoSlitPose", "triangulateTwoSlitPoints"]
