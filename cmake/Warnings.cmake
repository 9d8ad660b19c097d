# headwise_warnings: an INTERFACE target every first-party target links to get the warning set.
add_library(headwise_warnings INTERFACE)
target_compile_options(headwise_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wformat=2 -Wimplicit-fallthrough>
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic>)
if(HEADWISE_WERROR)
  target_compile_options(headwise_warnings INTERFACE -Werror)
endif()
