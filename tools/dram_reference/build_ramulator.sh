#!/bin/sh
# Builds the cycle-level DRAM reference Ramulator 2 outside the project tree, offline, as a C++
# library (no Python bindings) against Debian's yaml-cpp and fmt (libyaml-cpp-dev,
# libfmt-dev), then ramulator_driver.cpp (next to this script) against it. Its configurations
# are written by its own pure-Python package, which needs PyYAML: a virtual environment of its
# own holds that. Nothing of it enters the project: the clone, the environment and the build
# live under $RAMULATOR_WORK; the one CMake file the build needs changed (its downloads of
# yaml-cpp and fmt become find_package) is restored after.
#   RAMULATOR_SOURCE  git URL or path to clone (default: the public repository)
#   RAMULATOR_REV     revision to build (default: the clone's HEAD)
#   RAMULATOR_WORK    where to clone and build (default /work/ref, or ~/.cache/attn-tlm/ref)
# Prints the path of the built driver on its last line.
set -eu
SOURCE=${RAMULATOR_SOURCE:-https://github.com/CMU-SAFARI/ramulator2.git}
WORK=${RAMULATOR_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/attn-tlm/ref}
JOBS=${JOBS:-2}
PYTHON=${PYTHON:-python3}
SRC="$WORK/ramulator2"
BUILD="$WORK/ramulator2-build"
VENV="$WORK/ramulator2-venv"

for header in yaml-cpp/yaml.h fmt/format.h; do
  [ -f "/usr/include/$header" ] || {
    echo "build_ramulator.sh: /usr/include/$header missing: apt-get install libyaml-cpp-dev libfmt-dev" >&2
    exit 1
  }
done
mkdir -p "$WORK"
if [ ! -d "$SRC/.git" ]; then
  git clone -q "$SOURCE" "$SRC"
fi
if [ -n "${RAMULATOR_REV:-}" ]; then
  git -C "$SRC" checkout -q "$RAMULATOR_REV"
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q pyyaml

# The reference's "External libraries" block, between its two markers, becomes find_package.
awk '
  /^#### External libraries ####/ { skip = 1
    print "find_package(yaml-cpp REQUIRED)"
    print "if(NOT TARGET yaml-cpp::yaml-cpp)"
    print "  add_library(yaml-cpp::yaml-cpp INTERFACE IMPORTED)"
    print "  target_link_libraries(yaml-cpp::yaml-cpp INTERFACE yaml-cpp)"
    print "endif()"
    print "find_package(fmt REQUIRED)"
    print "option(RAMULATOR_PYTHON_BINDINGS \"Build Python nanobind bindings\" OFF)"
    next }
  skip && /^##################################$/ { skip = 0; next }
  !skip { print }
' "$SRC/CMakeLists.txt" >"$SRC/CMakeLists.txt.offline"
mv "$SRC/CMakeLists.txt.offline" "$SRC/CMakeLists.txt"

status=0
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DRAMULATOR_PYTHON_BINDINGS=OFF \
  >"$BUILD.cmake.log" 2>&1 ||
  { tail -30 "$BUILD.cmake.log"; status=1; }
if [ $status = 0 ]; then
  cmake --build "$BUILD" -j "$JOBS" >"$BUILD.build.log" 2>&1 || { tail -40 "$BUILD.build.log"; status=1; }
fi
git -C "$SRC" checkout -q -- CMakeLists.txt
[ $status = 0 ] || exit 1
PYTHONPATH="$SRC/python" "$VENV/bin/python" -c "import ramulator.dram" >&2
DRIVER="$BUILD/ramulator_driver"
g++ -std=c++20 -O2 -Wall -Wextra -Werror -isystem "$SRC/src" "$(dirname "$0")/ramulator_driver.cpp" \
  -L"$SRC" -lramulator -lyaml-cpp -lfmt -Wl,-rpath,"$SRC" -o "$DRIVER"
echo "$DRIVER"
