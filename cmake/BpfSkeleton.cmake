# libbpf-tools' chain: name.bpf.c -> name.bpf.o (clang -target bpf -g, then
# DWARF stripped so only BTF remains) -> name.skel.h (bpftool gen skeleton).
find_program(CLANG_EXECUTABLE NAMES clang clang-16 clang-15 clang-14 REQUIRED)
find_program(LLVM_STRIP_EXECUTABLE NAMES llvm-strip llvm-strip-16 llvm-strip-15 llvm-strip-14 REQUIRED)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(GPUNOISE_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(GPUNOISE_BPF_ARCH arm64)
else()
  message(FATAL_ERROR "unsupported architecture for eBPF: ${CMAKE_SYSTEM_PROCESSOR}")
endif()

set(GPUNOISE_SKEL_DIR "${CMAKE_BINARY_DIR}/bpf/skel" CACHE INTERNAL "")

# gpunoise_bpf_skeleton(<name> [DEPENDS headers...])
function(gpunoise_bpf_skeleton name)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  set(src "${CMAKE_CURRENT_SOURCE_DIR}/${name}.bpf.c")
  set(obj "${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o")
  set(skel "${GPUNOISE_SKEL_DIR}/${name}.skel.h")
  # Programs outside bpf/ (bench/) include the collectors' headers too.
  file(GLOB shared_headers "${CMAKE_CURRENT_SOURCE_DIR}/*.h" "${PROJECT_SOURCE_DIR}/bpf/*.h")
  add_custom_command(
    OUTPUT "${obj}"
    COMMAND ${CLANG_EXECUTABLE} -g -O2 -target bpf -Wall -Werror
            -D__TARGET_ARCH_${GPUNOISE_BPF_ARCH}
            -I${VMLINUX_H_DIR} -I${CMAKE_CURRENT_SOURCE_DIR}
            -c "${src}" -o "${obj}.tmp"
    COMMAND ${LLVM_STRIP_EXECUTABLE} -g "${obj}.tmp"
    COMMAND ${CMAKE_COMMAND} -E rename "${obj}.tmp" "${obj}"
    DEPENDS "${src}" ${shared_headers} ${ARG_DEPENDS} vmlinux_h "${VMLINUX_H_DIR}/vmlinux.h"
    COMMENT "BPF ${name}.bpf.c"
    VERBATIM)
  add_custom_command(
    OUTPUT "${skel}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${GPUNOISE_SKEL_DIR}"
    COMMAND ${BPFTOOL_EXECUTABLE} gen skeleton "${obj}" name "${name}_bpf" > "${skel}.tmp"
    COMMAND ${CMAKE_COMMAND} -E rename "${skel}.tmp" "${skel}"
    DEPENDS "${obj}"
    COMMENT "skeleton ${name}.skel.h"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY GPUNOISE_SKELETONS "${skel}")
endfunction()
