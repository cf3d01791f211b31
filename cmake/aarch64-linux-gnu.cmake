# Cross build for 64-bit ARM Linux (issue 34) with Debian's cross compiler (g++-aarch64-linux-gnu)
# and arm64 multiarch libraries (/usr/lib/aarch64-linux-gnu). scripts/test-aarch64 uses it with
# -DBRISK_CORE_ONLY=ON: the layers up to the engine and their tests, run under qemu-aarch64-static.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Libraries and headers: the cross toolchain's own, then the multiarch arm64 packages; programs
# (ccache, ninja) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Tests run through the emulator (ctest and gtest_discover_tests).
find_program(BRISK_QEMU_AARCH64 qemu-aarch64-static)
if(BRISK_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${BRISK_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu)
endif()
# Static executables: qemu-aarch64-static 7.2 (Debian 12) hangs dynamically linked multi-threaded
# programs (a thread start or exit never returns), static ones run; nothing is lost for tests.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
