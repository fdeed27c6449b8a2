# Writes every ```cpp block of a Markdown file into one header, so the tests compile the documentation's examples.
# Usage: cmake -DDOC=docs/lockstep.md -DOUT=build/generated/doc_lockstep.hpp -P ExtractDocExamples.cmake
# Semicolons and brackets are masked while the blocks travel through CMake lists, which would split on them. A block
# may hold backticks (a comment's `name`), not a run of three, which ends it.
file(READ "${DOC}" text)
string(REPLACE ";" "@SEMI@" text "${text}")
string(REPLACE "[" "@LB@" text "${text}")
string(REPLACE "]" "@RB@" text "${text}")
string(REGEX MATCHALL "```cpp\n([^`]|`[^`]|``[^`])*```" blocks "${text}")
set(out "// Generated from ${DOC} by cmake/ExtractDocExamples.cmake. Edit the document, not this file.\n")
foreach(block IN LISTS blocks)
  string(REGEX REPLACE "^```cpp\n" "" block "${block}")
  string(REGEX REPLACE "```$" "" block "${block}")
  string(APPEND out "${block}\n")
endforeach()
string(REPLACE "@SEMI@" ";" out "${out}")
string(REPLACE "@LB@" "[" out "${out}")
string(REPLACE "@RB@" "]" out "${out}")
file(WRITE "${OUT}.tmp" "${out}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
