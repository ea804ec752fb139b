# CMake package of attn-tlm: the header-only SystemC/TLM-2.0 models of attention accelerators.
#
#   find_package(attn_tlm CONFIG REQUIRED)      # attn_tlm_DIR=$(attn-tlm config --cmakedir)
#   target_link_libraries(my_vp PRIVATE attn_tlm::models)
#
# attn_tlm::models carries the include directory, C++17 and SystemC. SystemC is taken from, in
# order: the SYSTEMC_HOME CMake variable or environment variable (a SystemC installation with
# include/ and lib/, lib64/ or lib-linux64/), SystemC's own CMake package (SystemCLanguage),
# then pkg-config (systemc.pc, as installed by Debian's libsystemc-dev).
include(CMakeFindDependencyMacro)

get_filename_component(ATTN_TLM_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../../../include" ABSOLUTE)

# Gives up for the reason given (its parts joined as written): a macro, so that its return()
# leaves this file.
macro(_attn_tlm_not_found)
  set(attn_tlm_FOUND FALSE)
  string(CONCAT attn_tlm_NOT_FOUND_MESSAGE ${ARGN})
  return()
endmacro()

if(NOT TARGET attn_tlm::systemc)
  set(_attn_tlm_home "$ENV{SYSTEMC_HOME}")
  if(SYSTEMC_HOME)
    set(_attn_tlm_home "${SYSTEMC_HOME}")
  endif()

  if(_attn_tlm_home)
    find_path(ATTN_TLM_SYSTEMC_INCLUDE_DIR systemc.h
              PATHS "${_attn_tlm_home}/include" NO_DEFAULT_PATH)
    find_library(ATTN_TLM_SYSTEMC_LIBRARY systemc
                 PATHS "${_attn_tlm_home}/lib" "${_attn_tlm_home}/lib64"
                       "${_attn_tlm_home}/lib-linux64"
                 NO_DEFAULT_PATH)
    if(NOT ATTN_TLM_SYSTEMC_INCLUDE_DIR OR NOT ATTN_TLM_SYSTEMC_LIBRARY)
      _attn_tlm_not_found(
          "SYSTEMC_HOME=${_attn_tlm_home} does not hold a SystemC installation: expected "
          "include/systemc.h and libsystemc in lib/, lib64/ or lib-linux64/")
    endif()
    add_library(attn_tlm::systemc UNKNOWN IMPORTED)
    set_target_properties(attn_tlm::systemc PROPERTIES
      IMPORTED_LOCATION "${ATTN_TLM_SYSTEMC_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${ATTN_TLM_SYSTEMC_INCLUDE_DIR}")
  else()
    find_package(SystemCLanguage CONFIG QUIET)
    if(TARGET SystemC::systemc)
      add_library(attn_tlm::systemc INTERFACE IMPORTED)
      set_target_properties(attn_tlm::systemc PROPERTIES
        INTERFACE_LINK_LIBRARIES SystemC::systemc)
    else()
      find_package(PkgConfig QUIET)
      if(PKG_CONFIG_FOUND)
        pkg_check_modules(ATTN_TLM_SYSTEMC QUIET IMPORTED_TARGET systemc)
      endif()
      if(NOT ATTN_TLM_SYSTEMC_FOUND)
        _attn_tlm_not_found(
            "SystemC not found: set SYSTEMC_HOME to a SystemC installation, or install "
            "libsystemc-dev (pkg-config systemc)")
      endif()
      add_library(attn_tlm::systemc INTERFACE IMPORTED)
      set_target_properties(attn_tlm::systemc PROPERTIES
        INTERFACE_LINK_LIBRARIES PkgConfig::ATTN_TLM_SYSTEMC)
    endif()
  endif()
  find_dependency(Threads)
  set_property(TARGET attn_tlm::systemc APPEND PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()

if(NOT TARGET attn_tlm::models)
  add_library(attn_tlm::models INTERFACE IMPORTED)
  set_target_properties(attn_tlm::models PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ATTN_TLM_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES attn_tlm::systemc)
endif()
