# Links gRPC, Protobuf, Abseil and their helpers (upb, gpr, address_sorting,
# c-ares, RE2) from the static archives Debian's -dev packages ship beside the
# shared objects, instead of loading ~60 shared objects in every process.
#
# Why: the dynamic loader's work (mapping, relocating and write-protecting 40
# Abseil objects and the rest) is paid by every daemon at start, and a demo
# starts eleven of them on two cores. Measured (docs/archive/benchmarks-2026.md,
# "Static archives"): a party's start 900 -> 600 page faults, and job running 0.95-0.98
# -> 0.75-0.81 s into `fedmf demo --setting hfl --parties 10` (the demo's wall:
# -0.25 s, the median difference of 13 interleaved pairs). PIE and RELRO
# stay: the archives are position independent code (Debian builds them with
# its default -fPIE).
#
# Only these families move together: a process must never hold two copies of
# one of them (a static Abseil beside a shared gRPC that loads its own
# Abseil would have two sets of globals). No shared object fedmf still loads
# (OpenSSL, zlib, spdlog, fmt, yaml-cpp, cpp-httplib, SQLite, libsodium)
# depends on any of them. -DFEDMF_STATIC_DEPS=OFF links the shared objects.

# Replaces the shared object an imported target names with the archive of the
# same name in the same directory; a missing archive is a configuration
# error that names the package to install.
function(fedmf_link_archive_of target)
  foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE
               IMPORTED_LOCATION_DEBUG IMPORTED_LOCATION_RELWITHDEBINFO)
    get_target_property(location ${target} ${prop})
    if(location AND location MATCHES "\\.so(\\.[0-9.]+)?$")
      string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" archive "${location}")
      if(NOT EXISTS "${archive}")
        message(FATAL_ERROR "FEDMF_STATIC_DEPS: ${target} has no static archive ${archive} "
                            "(install the -dev package that owns ${location}, "
                            "or configure with -DFEDMF_STATIC_DEPS=OFF)")
      endif()
      set_target_properties(${target} PROPERTIES ${prop} "${archive}")
    endif()
  endforeach()
endfunction()

function(fedmf_link_static_archives)
  get_property(imported DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY IMPORTED_TARGETS)
  set(count 0)
  foreach(t IN LISTS imported)
    if(t MATCHES "^(absl|gRPC|protobuf|c-ares)::")
      get_target_property(type ${t} TYPE)
      if(type MATCHES "^(SHARED|STATIC|UNKNOWN)_LIBRARY$")
        fedmf_link_archive_of(${t})
        math(EXPR count "${count} + 1")
      endif()
    endif()
  endforeach()
  # gRPC's Findre2 makes re2::re2 an interface target naming "re2" (from
  # pkg-config), which the linker resolves to the shared object.
  if(TARGET re2::re2)
    find_library(FEDMF_RE2_ARCHIVE NAMES libre2.a REQUIRED)
    set_target_properties(re2::re2 PROPERTIES INTERFACE_LINK_LIBRARIES "${FEDMF_RE2_ARCHIVE}")
  endif()
  message(STATUS "FEDMF_STATIC_DEPS: ${count} Abseil/gRPC/Protobuf/c-ares targets link their archives")
endfunction()
