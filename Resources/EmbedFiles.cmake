# Turns every file of a folder into a C++ source: one byte array per file and the table
# IngestPerf::kEmbeddedUiFiles (Plugin/Ui/UiFiles.h), sorted by path. Run by the build
# (CMakeLists.txt) as:
#   cmake -DFOLDER=<folder> -DOUTPUT=<file.cpp> -P Resources/EmbedFiles.cmake
# CMake only: no xxd, no Python, nothing downloaded.
if(NOT FOLDER OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DFOLDER=<folder> -DOUTPUT=<file.cpp> -P EmbedFiles.cmake")
endif()

file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${FOLDER}" "${FOLDER}/*")
list(SORT files)
if(NOT files)
  message(FATAL_ERROR "EmbedFiles.cmake: no file in ${FOLDER}")
endif()

# 24 bytes a line, so that a compiler's message about the file stays readable (CMake's regular
# expressions have no {n}).
set(line_of_bytes "")
foreach(i RANGE 1 24)
  string(APPEND line_of_bytes "0x..,")
endforeach()

set(arrays "")
set(table "")
set(index 0)
foreach(file IN LISTS files)
  if(NOT file MATCHES "^[A-Za-z0-9._/-]+$")
    message(FATAL_ERROR "EmbedFiles.cmake: '${file}': a served path is letters, digits, '.', '_', '-' and '/' only")
  endif()
  file(READ "${FOLDER}/${file}" hex HEX)
  string(LENGTH "${hex}" digits)
  math(EXPR size "${digits} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(${line_of_bytes})" "\\1\n      " bytes "${bytes}")
  # A trailing 0: an empty file is still an array (size excludes it).
  string(APPEND arrays "    // ${file}\n    const unsigned char kFile${index}[] = {\n      ${bytes}0};\n\n")
  string(APPEND table "    {\"${file}\", kFile${index}, ${size}},\n")
  math(EXPR index "${index} + 1")
endforeach()

set(content "// Generated from ${FOLDER} by Resources/EmbedFiles.cmake at build time: do not edit.
#include \"Ui/UiFiles.h\"

namespace IngestPerf
{
  namespace
  {
${arrays}  }

  const UiFile kEmbeddedUiFiles[] = {
${table}  };

  const size_t kEmbeddedUiFileCount = sizeof(kEmbeddedUiFiles) / sizeof(kEmbeddedUiFiles[0]);
}
")

# Rewritten only when it changed: an unchanged page recompiles nothing.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" previous)
  if(previous STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
