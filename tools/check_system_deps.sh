#!/bin/sh
# Open3D's wheel links against Debian's libusb-1.0-0; without it `import open3d`
# fails with "libusb-1.0.so.0: cannot open shared object file".
if ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0'; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "xslit: installing Debian's libusb-1.0-0 (needed by Open3D)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libusb-1.0-0 >/dev/null
    exit $?
fi
echo "xslit needs the system package libusb-1.0-0 for Open3D: run 'sudo apt-get install libusb-1.0-0'" >&2
exit 1
