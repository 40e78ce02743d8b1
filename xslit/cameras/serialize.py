"""JSON-serialisable dictionaries of cameras (used by the dataset format)."""

from __future__ import annotations

__all__ = ["camera_from_dict"]


def camera_from_dict(data: dict):
    """Rebuild a camera from :meth:`Camera.to_dict` output; ValueError on a malformed dict."""
    from .pinhole import PinholeCamera
    from .pushbroom import PushbroomCamera
    from .rational import RationalCamera
    from .two_slit import TwoSlitCamera

    if not isinstance(data, dict) or "model" not in data:
        raise ValueError(f"data must be a dict with a 'model' key, got {type(data).__name__}")
    model = data["model"]
    try:
        if model == "two_slit":
            return TwoSlitCamera(data["A1"], data["A2"])
        if model == "pushbroom":
            return PushbroomCamera(data["A1"], data["A2"])
        if model == "pinhole":
            return PinholeCamera(data["P"])
        if model == "rational":
            kind = data.get("kind")
            if kind == "pinhole":
                return RationalCamera.pinhole(data["center"], data["frame"])
            if kind == "two_slit":
                return RationalCamera.two_slit(data["slit1"], data["slit2"], data["frame"])
            if kind == "transversal":
                return RationalCamera.transversal(data["f"], data["g"], data["h"], data["frame"])
            raise ValueError(f"data['kind'] must be pinhole, two_slit or transversal, got {kind!r}")
    except KeyError as exc:
        raise ValueError(f"data for a {model!r} camera lacks the key {exc.args[0]!r}") from None
    raise ValueError("data['model'] must be one of two_slit, pushbroom, pinhole, rational, "
                     f"got {model!r}")
