#!/usr/bin/env bash
# Set up an arm64 (AArch64) Python 3.11 with TVM's runtime that runs on an x86 Debian machine under
# qemu-user, so that libraries built with target "llvm -mtriple=aarch64-linux-gnu" can be RUN in CI
# (relay_tvm.testing.aarch64, tests/backend/test_aarch64_qemu.py).
#
# Nothing arm64 is installed system-wide: Debian's arm64 packages (python3.11, libc, libstdc++ ...)
# are fetched with `apt-get download` and unpacked with `dpkg -x` into a sysroot, and the aarch64
# wheels of apache-tvm / apache-tvm-ffi / numpy (and cloudpickle, psutil for TVM's RPC server) from
# the package index are unzipped into a site
# directory (TVM's 240 MB compiler library is dropped: the runtime is all that runs there).
#
# Usage: [PYTHON=python3] tools/setup_aarch64_qemu.sh [CACHE_DIR]
#   CACHE_DIR defaults to $RELAY_TVM_AARCH64_DIR, else ~/.cache/relay_tvm/aarch64.
#   A second run with the same versions is instant (a stamp file records a finished setup).
# Needs: Debian/Ubuntu with apt-get (root, to install qemu-user and add the arm64 architecture
# to dpkg's list), pip with access to the package index.
set -euo pipefail

PYTHON="${PYTHON:-python3}"  # the host Python whose pip downloads the wheels
CACHE="${1:-${RELAY_TVM_AARCH64_DIR:-$HOME/.cache/relay_tvm/aarch64}}"
TVM_VERSION="0.27.0.post1"
TVM_FFI_VERSION="0.1.14.post1"
NUMPY_VERSION="1.26.4"
ML_DTYPES_VERSION="0.5.4"
TYPING_EXT_VERSION="4.15.0"
# TVM's RPC server (python -m tvm.exec.rpc_server) forks its sessions through these two.
CLOUDPICKLE_VERSION="2.1.0"
PSUTIL_VERSION="7.2.2"
DEBS=(libc6 libgcc-s1 libstdc++6 zlib1g libexpat1 libssl3 libffi8 libbz2-1.0 liblzma5
      libcrypt1 libuuid1 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib)
KEY="tvm=$TVM_VERSION ffi=$TVM_FFI_VERSION numpy=$NUMPY_VERSION ml_dtypes=$ML_DTYPES_VERSION"
KEY="$KEY cloudpickle=$CLOUDPICKLE_VERSION psutil=$PSUTIL_VERSION debs=${DEBS[*]} v3"

SYSROOT="$CACHE/sysroot"
SITE="$CACHE/site"
STAMP="$CACHE/READY"

if [[ -f "$STAMP" ]] && [[ "$(cat "$STAMP")" == "$KEY" ]] && command -v qemu-aarch64 >/dev/null; then
  echo "aarch64 qemu environment ready in $CACHE"
  exit 0
fi

die() { echo "setup_aarch64_qemu: $*" >&2; exit 1; }
command -v apt-get >/dev/null || die "needs apt-get (Debian/Ubuntu) to fetch the arm64 packages"
SUDO=""
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null || die "needs root (or sudo) to install qemu-user / add arm64"
  SUDO="sudo"
fi

if ! command -v qemu-aarch64 >/dev/null; then
  echo "installing qemu-user"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq qemu-user >/dev/null
fi

# apt-get download of :arm64 packages needs arm64 in dpkg's list of foreign architectures; it
# installs nothing arm64.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "adding the arm64 architecture to dpkg (download only) and updating apt's lists"
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
fi

rm -rf "$CACHE/tmp" "$SYSROOT" "$SITE" "$STAMP"
mkdir -p "$CACHE/debs" "$CACHE/wheels" "$CACHE/tmp" "$SYSROOT" "$SITE"

echo "downloading arm64 Debian packages: ${DEBS[*]}"
(cd "$CACHE/debs" && \
  apt-get download -qq "${DEBS[@]/%/:arm64}" 2>&1 | grep -v "^W: Download is performed" || true)
for d in "${DEBS[@]}"; do
  ls "$CACHE/debs/${d}_"*_arm64.deb >/dev/null 2>&1 || die "apt-get download $d:arm64 failed"
done
for deb in "$CACHE/debs/"*.deb; do dpkg -x "$deb" "$SYSROOT"; done
# Debian's merged /usr: the loader is looked up as /lib/ld-linux-aarch64.so.1 (inside -L SYSROOT).
for d in lib lib64 bin sbin; do
  if [[ -d "$SYSROOT/usr/$d" && ! -e "$SYSROOT/$d" ]]; then ln -s "usr/$d" "$SYSROOT/$d"; fi
done
[[ -x "$SYSROOT/usr/bin/python3.11" ]] || die "no usr/bin/python3.11 in the unpacked packages"

echo "downloading aarch64 wheels"
PLATFORMS=(--platform manylinux_2_28_aarch64 --platform manylinux_2_27_aarch64
           --platform manylinux_2_24_aarch64 --platform manylinux_2_17_aarch64
           --platform manylinux2014_aarch64)
(cd "$CACHE/wheels" && "$PYTHON" -m pip download -q --no-deps \
  --only-binary=:all: --python-version 3.11 --implementation cp "${PLATFORMS[@]}" -d . \
  "apache-tvm==$TVM_VERSION" "apache-tvm-ffi==$TVM_FFI_VERSION" "numpy==$NUMPY_VERSION" \
  "ml_dtypes==$ML_DTYPES_VERSION" "typing_extensions==$TYPING_EXT_VERSION" \
  "cloudpickle==$CLOUDPICKLE_VERSION" "psutil==$PSUTIL_VERSION") \
  || die "pip download of the aarch64 wheels failed"
for whl in "$CACHE/wheels/"*.whl; do
  "$PYTHON" -m zipfile -e "$whl" "$SITE"
done
# The runtime is what runs under qemu: drop the compiler library (240 MB, and minutes to load
# under qemu) and the bundled C++ headers / sources. tvm imports runtime-only without them
# (TVM_USE_RUNTIME_LIB=1, see tvm/base.py).
rm -f "$SITE/tvm/lib/libtvm_compiler.so"
rm -rf "$SITE/tvm/3rdparty" "$SITE/tvm_ffi/3rdparty" "$SITE/tvm/include" "$SITE/tvm_ffi/include"

# Byte-compile once (Debian builds the stdlib's .pyc in postinst, which dpkg -x does not run);
# compiling under qemu at every import would cost seconds. The host's Python 3.11 writes the same
# .pyc format; otherwise the arm64 Python does it, slower.
QPY=(qemu-aarch64 -L "$SYSROOT" "$SYSROOT/usr/bin/python3.11")
if "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  "$PYTHON" -m compileall -q -j 0 "$SYSROOT/usr/lib/python3.11" "$SITE" >/dev/null || true
else
  "${QPY[@]}" -m compileall -q "$SYSROOT/usr/lib/python3.11" "$SITE" >/dev/null || true
fi

echo "checking: import tvm under qemu-aarch64"
TVM_USE_RUNTIME_LIB=1 PYTHONNOUSERSITE=1 PYTHONPATH="$SITE" \
  qemu-aarch64 -L "$SYSROOT" "$SYSROOT/usr/bin/python3.11" -c \
  "import platform, numpy, tvm, tvm.rpc, psutil, cloudpickle; print(platform.machine(), 'python', platform.python_version(),
'tvm', tvm.__version__, 'numpy', numpy.__version__)" \
  || die "import tvm under qemu-aarch64 failed"

rm -rf "$CACHE/tmp" "$CACHE/debs" "$CACHE/wheels"
echo "$KEY" > "$STAMP"
echo "aarch64 qemu environment ready in $CACHE"
