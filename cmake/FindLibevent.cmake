# SPDX-License-Identifier: BSD-3-Clause
# Finds libevent (libevent.so, event2/event.h) and defines the imported target
# Libevent::Libevent. libpaxos's public headers take libevent's struct event_base, so
# paxos::paxos carries this target: the build uses this module, and the installed CMake package
# (paxosConfig.cmake) ships it and finds libevent with it, since libevent's Debian package has
# no CMake package of its own. pkg-config's libevent module, when there is one, gives the hints.
# Sets Libevent_FOUND, Libevent_VERSION, Libevent_INCLUDE_DIR and Libevent_LIBRARY.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_LIBEVENT QUIET libevent)
endif()
find_path(Libevent_INCLUDE_DIR event2/event.h HINTS ${PC_LIBEVENT_INCLUDE_DIRS})
find_library(Libevent_LIBRARY NAMES event HINTS ${PC_LIBEVENT_LIBRARY_DIRS})
if(PC_LIBEVENT_VERSION)
  set(Libevent_VERSION ${PC_LIBEVENT_VERSION})
elseif(Libevent_INCLUDE_DIR AND EXISTS "${Libevent_INCLUDE_DIR}/event2/event-config.h")
  file(STRINGS "${Libevent_INCLUDE_DIR}/event2/event-config.h" version_line
       REGEX "#define EVENT__VERSION \"[^\"]*\"")
  string(REGEX REPLACE ".*\"([^\"]*)\".*" "\\1" Libevent_VERSION "${version_line}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libevent REQUIRED_VARS Libevent_LIBRARY Libevent_INCLUDE_DIR
                                  VERSION_VAR Libevent_VERSION)
if(Libevent_FOUND AND NOT TARGET Libevent::Libevent)
  add_library(Libevent::Libevent UNKNOWN IMPORTED)
  set_target_properties(Libevent::Libevent PROPERTIES IMPORTED_LOCATION "${Libevent_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${Libevent_INCLUDE_DIR}")
endif()
mark_as_advanced(Libevent_INCLUDE_DIR Libevent_LIBRARY)
