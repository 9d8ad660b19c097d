# install() rules, the CMake package config (find_package(headwise)) and the CPack .deb.
#
# Installed: libheadwise (shared in the Raspberry Pi / cross builds, static in the default host
# build; the static case also installs libheadwise_format.a and libheadwise_common.a, which it
# needs, and, from python/CMakeLists.txt, a shared libheadwise.so.M.N for the Python module),
# headwise-translate, headwise-convert, include/headwise/*, lib/<multiarch>/cmake/headwise/, and the shipped model
# models/en-de/*.hwm (when present) in share/headwise/models/en-de/, and the Python module
# (python/CMakeLists.txt: lib/python3/dist-packages/headwise).
# The package config (cmake/headwiseConfig.cmake.in) finds Debian's libraries the way
# cmake/Dependencies.cmake does, for the host and for a cross sysroot.
include(CMakePackageConfigHelpers)
if(NOT DEFINED CMAKE_INSTALL_LIBDIR AND CMAKE_LIBRARY_ARCHITECTURE)
  set(CMAKE_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE})  # Debian multiarch
endif()
include(GNUInstallDirs)
set(HEADWISE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/headwise)

if(NOT TARGET headwise)
  return()
endif()

get_target_property(HEADWISE_LIBRARY_TYPE headwise TYPE)
if(HEADWISE_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
  set_target_properties(headwise PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  install(TARGETS headwise LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
else()
  install(TARGETS headwise headwise_format headwise_common ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS headwise-convert RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# headwise-translate installs itself (examples/translate/CMakeLists.txt).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/headwise
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

file(GLOB HEADWISE_SHIPPED_MODELS ${PROJECT_SOURCE_DIR}/models/en-de/*.hwm)
if(HEADWISE_SHIPPED_MODELS)
  install(FILES ${HEADWISE_SHIPPED_MODELS}
    DESTINATION ${CMAKE_INSTALL_DATADIR}/headwise/models/en-de)
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/headwiseConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/headwiseConfig.cmake
  INSTALL_DESTINATION ${HEADWISE_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/headwiseConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/headwiseConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/headwiseConfigVersion.cmake
  DESTINATION ${HEADWISE_CMAKE_DIR})

# --- CPack: one .deb per architecture, named headwise_<version>_<debian arch>.deb ----------
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(HEADWISE_DEB_ARCH arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^arm")
  set(HEADWISE_DEB_ARCH armhf)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
  set(HEADWISE_DEB_ARCH amd64)
else()
  set(HEADWISE_DEB_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()
# Debian's runtime packages of what libheadwise and the tools link dynamically. No
# dpkg-shlibdeps: it needs the target architecture's packages installed, which a cross build
# does not have. tests/platforms/deb_package_test.sh checks that every DT_NEEDED library in the
# package is provided by one of these.
set(HEADWISE_DEB_DEPENDS
  "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 12)"
  "libxnnpack0 (>= 0.0~git20220216)" "libpthreadpool0" "libcpuinfo0"
  "libsentencepiece0 (>= 0.1.97)")
get_target_property(_hw_fb_type flatbuffers::flatbuffers TYPE)
if(_hw_fb_type STREQUAL "SHARED_LIBRARY")
  list(APPEND HEADWISE_DEB_DEPENDS "libflatbuffers2")
endif()
list(JOIN HEADWISE_DEB_DEPENDS ", " CPACK_DEBIAN_PACKAGE_DEPENDS)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME headwise)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "headwise maintainers <headwise@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "On-device translation runtime for pruned MarianMT models (XNNPACK)")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "headwise runs head-pruned MarianMT Transformer models converted to .hwm files.\n This package holds libheadwise, headwise-translate, headwise-convert, the C/C++ headers,\n the CMake package config, the Python module (import headwise) and, when built with one,\n the shipped en-de model.")
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${HEADWISE_DEB_ARCH})
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
if(CMAKE_CROSSCOMPILING)
  set(CPACK_STRIP_FILES OFF)  # the host strip cannot read ARM objects; cross strip below
  find_program(HEADWISE_CROSS_STRIP ${CMAKE_LIBRARY_ARCHITECTURE}-strip)
  if(HEADWISE_CROSS_STRIP)
    set(CMAKE_STRIP ${HEADWISE_CROSS_STRIP})
    set(CPACK_STRIP_FILES ON)
  endif()
endif()
include(CPack)
