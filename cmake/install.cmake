# install.cmake — what `cmake --install` puts under the prefix: libsotto.a and libsotto.so,
# include/sotto.h, lib/pkgconfig/sotto.pc, the CMake package (lib/cmake/sotto: targets
# sotto::sotto, the shared library, and sotto::sotto_static) and the sotto tool with its
# manual page, share/man/man1/sotto.1, in three components a packager can split: "runtime"
# (libsotto.so.0 and its version: what a program linked against it needs), "dev" (the
# header, libsotto.a, the libsotto.so link, sotto.pc, the CMake package) and "cli" (the tool,
# linked statically, and its manual page); the Python package installs its own component,
# python/CMakeLists.txt. Included by the top-level CMakeLists.txt after the targets exist.
set_target_properties(sotto_shared PROPERTIES EXPORT_NAME sotto)
set_target_properties(sotto PROPERTIES EXPORT_NAME sotto_static)
install(TARGETS sotto sotto_shared EXPORT sottoTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/sotto.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(TARGETS sotto_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
# sotto(1), made from the tool's help by scripts/make_man.py (ctest -R man_page keeps it so)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/../docs/sotto.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)

# sotto.pc: static linking needs what the library links (Libs.private): zlib, libm,
# pthreads; the Vulkan loader and FFmpeg's libraries are opened at run time, so -ldl (part
# of libc since glibc 2.34) stands for them.
# The prefix is found from the .pc file's own place (pkg-config's pcfiledir), so the file
# holds wherever `cmake --install --prefix P` puts it: in LIBDIR/pkgconfig, one level
# below the prefix for pkgconfig and one for each part of LIBDIR.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(SOTTO_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(SOTTO_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(SOTTO_PC_PREFIX "\${pcfiledir}/..")
  string(REPLACE "/" ";" parts "${CMAKE_INSTALL_LIBDIR}")
  foreach(part ${parts})
    string(APPEND SOTTO_PC_PREFIX "/..")
  endforeach()
  set(SOTTO_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(SOTTO_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(SOTTO_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(SOTTO_PC_LIBS_PRIVATE "-lz -lm -pthread")
if(CMAKE_DL_LIBS)
  string(APPEND SOTTO_PC_LIBS_PRIVATE " -l${CMAKE_DL_LIBS}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/sotto.pc.in ${CMAKE_BINARY_DIR}/sotto.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/sotto.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# find_package(sotto): sottoConfig.cmake finds what the static library's users link
# (Threads, ZLIB) and includes the exported targets, which locate themselves from the
# file's own place, so the package holds wherever the prefix is moved. 0.x: a newer minor
# version may change the API, so only the same major.minor is taken as compatible.
include(CMakePackageConfigHelpers)
set(SOTTO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sotto)
install(EXPORT sottoTargets NAMESPACE sotto:: DESTINATION ${SOTTO_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/sottoConfig.cmake.in ${CMAKE_BINARY_DIR}/sottoConfig.cmake
                              INSTALL_DESTINATION ${SOTTO_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/sottoConfigVersion.cmake VERSION ${SOTTO_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/sottoConfig.cmake ${CMAKE_BINARY_DIR}/sottoConfigVersion.cmake
        DESTINATION ${SOTTO_CMAKE_DIR} COMPONENT dev)
