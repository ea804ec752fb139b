#!/bin/sh
# Builds the cycle-accurate DRAM reference (DRAMSys, tag $DRAMSYS_TAG) outside the project tree,
# offline, against Debian's SystemC and SQLite. Nothing of it enters the project: the clone,
# the build and two small CMake stand-ins written here live under $DRAMSYS_WORK.
#   DRAMSYS_SOURCE  git URL or path to clone (default: the public repository)
#   DRAMSYS_TAG     tag to build (default v5.0)
#   DRAMSYS_WORK    where to clone and build (default $XDG_CACHE_HOME/attn-tlm/ref, or ~/.cache/attn-tlm/ref)
# Prints the path of the built simulator binary on its last line.
set -eu
SOURCE=${DRAMSYS_SOURCE:-https://github.com/tukl-msd/DRAMSys.git}
TAG=${DRAMSYS_TAG:-v5.0}
WORK=${DRAMSYS_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/attn-tlm/ref}
JOBS=${JOBS:-2}
SRC="$WORK/DRAMSys"
BUILD="$WORK/DRAMSys-build-$TAG"
STANDIN="$WORK/cmake-standins"

mkdir -p "$WORK"
if [ ! -d "$SRC/.git" ]; then
  git clone -q "$SOURCE" "$SRC"
fi
git -C "$SRC" checkout -q "$TAG"

# SystemC: Debian's libsystemc-dev has no CMake package; this one names its header and library.
mkdir -p "$STANDIN/SystemCLanguage"
cat > "$STANDIN/SystemCLanguage/SystemCLanguageConfig.cmake" <<'CMAKE'
find_library(SYSTEMC_LIB NAMES systemc REQUIRED)
find_path(SYSTEMC_INC NAMES systemc.h REQUIRED)
if(NOT TARGET SystemC::systemc)
  add_library(SystemC::systemc SHARED IMPORTED)
  set_target_properties(SystemC::systemc PROPERTIES IMPORTED_LOCATION "${SYSTEMC_LIB}"
    INTERFACE_INCLUDE_DIRECTORIES "${SYSTEMC_INC}" INTERFACE_COMPILE_DEFINITIONS "SC_CPLUSPLUS=201703L")
endif()
set(SystemCLanguage_FOUND TRUE)
CMAKE

# SQLite: the system library (3.40 series, as the reference pins) instead of the download.
cat > "$SRC/lib/sqlite3/CMakeLists.txt" <<'CMAKE'
find_library(SQLITE3_LIB NAMES sqlite3 REQUIRED)
add_library(sqlite3 INTERFACE)
target_link_libraries(sqlite3 INTERFACE "${SQLITE3_LIB}")
add_library(sqlite3::sqlite3 ALIAS sqlite3)
CMAKE

cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 \
  -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DCMAKE_PREFIX_PATH="$STANDIN/SystemCLanguage" \
  -DSystemCLanguage_DIR="$STANDIN/SystemCLanguage" -DDRAMSYS_BUILD_TESTS=OFF >"$BUILD.cmake.log" 2>&1 ||
  { tail -30 "$BUILD.cmake.log"; exit 1; }
cmake --build "$BUILD" -j "$JOBS" >"$BUILD.build.log" 2>&1 || { tail -40 "$BUILD.build.log"; exit 1; }
git -C "$SRC" checkout -q -- lib/sqlite3/CMakeLists.txt
find "$BUILD" -type f -name DRAMSys -perm -u+x | head -1
