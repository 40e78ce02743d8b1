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
    FM_13POINT,
    FM_LINEAR,
    FM_LMEDS,
    FM_RANSAC,
    LOCAL_OPTIM_INNER_LO,
    LOCAL_OPTIM_NULL,
    LSQ_POLISHER,
    NONE_POLISHER,
    SAMPLING_JOINT_DENSITY,
    SAMPLING_PROSAC,
    SAMPLING_UNIFORM,
    SCORE_METHOD_LMEDS,
    SCORE_METHOD_MSAC,
    SCORE_METHOD_RANSAC,
    USAC_ACCURATE,
    USAC_DEFAULT,
    UsacParams,
    computeEpipolarTensor,
    findEpipolarTensor,
)

__all__ += [
    "FM_13POINT",
    "FM_LINEAR",
    "FM_LMEDS",
    "FM_RANSAC",
    "LOCAL_OPTIM_INNER_LO",
    "LOCAL_OPTIM_NULL",
    "LSQ_POLISHER",
    "NONE_POLISHER",
    "SAMPLING_JOINT_DENSITY",
    "SAMPLING_PROSAC",
    "SAMPLING_UNIFORM",
    "SCORE_METHOD_LMEDS",
    "SCORE_METHOD_MSAC",
    "SCORE_METHOD_RANSAC",
    "USAC_ACCURATE",
    "USAC_DEFAULT",
    "UsacParams",
    "computeEpipolarTensor",
    "findEpipolarTensor",
]

from .api.pose import recoverTwoSlitPose, triangulateTwoSlitPoints  # noqa: E402

__all__ += ["recoverTwoSlitPose", "triangulateTwoSlitPoints"]

from .api.autocalibration import (  # noqa: E402
    SELFCALIB_FIX_THETA,
    SELFCALIB_USE_LINEAR,
    SELFCALIB_ZERO_PRINCIPAL_POINT,
    selfCalibrateTwoSlit,
)

__all__ += ["SELFCALIB_FIX_THETA", "SELFCALIB_USE_LINEAR", "SELFCALIB_ZERO_PRINCIPAL_POINT",
            "selfCalibrateTwoSlit"]

from .api.resection import (  # noqa: E402
    SOLVEPNP_ITERATIVE,
    SOLVEPNP_LINEAR,
    solveTwoSlitPnP,
    solveTwoSlitPnPRansac,
)

__all__ += ["SOLVEPNP_ITERATIVE", "SOLVEPNP_LINEAR", "solveTwoSlitPnP", "solveTwoSlitPnPRansac"]

from .api.calibration import (  # noqa: E402
    CALIB_FIX_D,
    CALIB_FIX_FOCAL_LENGTH,
    CALIB_FIX_PRINCIPAL_POINT,
    CALIB_FIX_THETA,
    CALIB_PARALLEL,
    CALIB_PUSHBROOM,
    CALIB_USE_INTRINSIC_GUESS,
    calibrateTwoSlit,
    calibrateTwoSlitExtended,
)

__all__ += ["CALIB_FIX_D", "CALIB_FIX_FOCAL_LENGTH", "CALIB_FIX_PRINCIPAL_POINT",
            "CALIB_FIX_THETA", "CALIB_PARALLEL", "CALIB_PUSHBROOM", "CALIB_USE_INTRINSIC_GUESS",
            "calibrateTwoSlit", "calibrateTwoSlitExtended"]

from .api.features import (  # noqa: E402
    computeCorrespondEpilines,
    drawEpipolarCurves,
    drawMatchesMask,
    matchFeatures,
    matchFeaturesExtended,
)

__all__ += ["computeCorrespondEpilines", "drawEpipolarCurves", "drawMatchesMask",
            "matchFeatures", "matchFeaturesExtended"]

# Open3D-backed names load on first use, so that `import xslit` stays light.
_LAZY = {
    "renderImage": ("xslit.render", "renderImage"),
    "Scene": ("xslit.render", "Scene"),
    "make_room_scene": ("xslit.render", "make_room_scene"),
    "make_terrain_scene": ("xslit.render", "make_terrain_scene"),
    "make_calibration_target": ("xslit.render", "make_calibration_target"),
    "correspondences_between": ("xslit.render", "correspondences_between"),
    "load_dataset": ("xslit.io", "load_dataset"),
    "verify_dataset": ("xslit.io", "verify_dataset"),
}
__all__ += list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'xslit' has no attribute {name!r}")
