"""The OpenCV-style functions (camelCase), thin wrappers that validate and call the layers."""
