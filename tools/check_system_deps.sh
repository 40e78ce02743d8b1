#!/bin/sh
# System libraries xslit needs from Debian/Ubuntu packages.
#
# Required: Open3D's wheel links against them, and `import open3d` fails without them
# ("libusb-1.0.so.0: cannot open shared object file", likewise libEGL, libGL, libX11).
#   libusb-1.0-0 libegl1 libgl1 libx11-6
# Recommended: Mesa's EGL driver and software rasteriser, with which Open3D renders previews
# offscreen on a machine without a display or GPU (xslit.viz.preview_png; without them the
# previews are drawn by xslit's numpy renderer instead).
#   libegl-mesa0 libgl1-mesa-dri
#
# As root with apt-get, missing packages are installed; otherwise one line names them, and the
# script fails only when a required one is missing.
REQUIRED="libusb-1.0-0 libegl1 libgl1 libx11-6"
RECOMMENDED="libegl-mesa0 libgl1-mesa-dri"

# has_package NAME: the package is installed (dpkg), or, without dpkg, its library is found.
has_package() {
    if command -v dpkg-query >/dev/null 2>&1; then
        [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]
        return $?
    fi
    case "$1" in
        libusb-1.0-0) lib='libusb-1.0.so.0' ;;
        libegl1) lib='libEGL.so.1' ;;
        libgl1) lib='libGL.so.1' ;;
        libx11-6) lib='libX11.so.6' ;;
        libegl-mesa0) lib='libEGL_mesa.so.0' ;;
        *) return 0 ;;
    esac
    ldconfig -p 2>/dev/null | grep -q "$lib"
}

missing_required=""
missing_recommended=""
for p in $REQUIRED; do
    has_package "$p" || missing_required="$missing_required $p"
done
for p in $RECOMMENDED; do
    has_package "$p" || missing_recommended="$missing_recommended $p"
done
missing="$missing_required$missing_recommended"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "xslit: installing Debian packages:$missing (Open3D and its offscreen rendering)"
    # shellcheck disable=SC2086
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    exit $?
fi
if [ -n "$missing_required" ]; then
    echo "xslit needs the system packages$missing for Open3D: run 'sudo apt-get install$missing'" >&2
    exit 1
fi
echo "xslit: for offscreen previews with Open3D install$missing ('sudo apt-get install$missing'); previews use the numpy renderer meanwhile" >&2
exit 0
