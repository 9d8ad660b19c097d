# headwise_runnable(<target> <out_var>): sets <out_var> to a path that runs <target> on the
# build machine. Natively that is $<TARGET_FILE:target>. In a cross build with
# CMAKE_CROSSCOMPILING_EMULATOR (qemu-user, see platforms/toolchains/) it is a generated shell
# script, build/emulated/<target>, that runs the target under the emulator. Tests that spawn a
# binary themselves (fork/exec, a shell script, a Python fixture) use this path, because
# without binfmt_misc the kernel cannot exec an ARM binary directly.
function(headwise_runnable target out_var)
  if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
    set(wrapper ${CMAKE_BINARY_DIR}/emulated/${target})
    set(${out_var} ${wrapper} PARENT_SCOPE)
    get_property(done GLOBAL PROPERTY HEADWISE_RUNNABLE_${target})
    if(done)
      return()
    endif()
    set_property(GLOBAL PROPERTY HEADWISE_RUNNABLE_${target} TRUE)
    set(emulator "")
    foreach(word IN LISTS CMAKE_CROSSCOMPILING_EMULATOR)
      string(APPEND emulator "'${word}' ")
    endforeach()
    file(GENERATE OUTPUT ${wrapper}
      CONTENT "#!/bin/sh\nexec ${emulator}'$<TARGET_FILE:${target}>' \"$@\"\n"
      FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                       WORLD_READ WORLD_EXECUTE)
  else()
    set(${out_var} $<TARGET_FILE:${target}> PARENT_SCOPE)
  endif()
endfunction()
