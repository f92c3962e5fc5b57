# ctest driver (cmake -P): installs a kscope build into a fresh prefix, checks what landed there,
# then configures, builds and runs tests/cmake/consumer against it, as a user's project would.
# Nothing of kscope is rebuilt: the install copies the build's files.
# -D: BUILD_DIR, WORK_DIR, GENERATOR, CXX_COMPILER, BUILD_TYPE, CXX_LAUNCHER, WITH_CUDA, CUDA_ROOT
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})

function(step name)  # runs ARGN, stops the test with its output when it fails
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${name}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("cmake --install ${BUILD_DIR} --prefix ${prefix}"
     ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --config ${BUILD_TYPE})

set(expected include/kscope/kscope.hpp include/kscope/testing.hpp lib/libkscope.a lib/libkscope_core.a
             lib/libkscope_testing.a lib/cmake/kscope/kscopeConfig.cmake
             lib/cmake/kscope/kscopeConfigVersion.cmake lib/cmake/kscope/kscopeTargets.cmake)
if(WITH_CUDA)
  list(APPEND expected bin/kscope bin/kscope-metrics)
endif()
foreach(file IN LISTS expected)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()

set(configure_args -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
                   -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(CXX_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
if(CUDA_ROOT)  # the toolkit kscope was built with
  list(APPEND configure_args -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
step("configure the consumer" ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/consumer -B ${consumer_build}
     ${configure_args})
step("build the consumer" ${CMAKE_COMMAND} --build ${consumer_build} --config ${BUILD_TYPE})
step("run the consumer" ${consumer_build}/app)
message("${step_output}")
step("run the consumer's test without a GPU" ${consumer_build}/simulated_sweep_test)
message("${step_output}")

if(WITH_CUDA)
  # The installed program starts (its CUDA libraries resolve) and reports; 0, 1 or 2 by the machine.
  execute_process(COMMAND ${prefix}/bin/kscope doctor RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc MATCHES "^[012]$")
    message(FATAL_ERROR "installed kscope doctor failed (${rc}):\n${out}")
  endif()
  message(STATUS "installed kscope doctor: exit code ${rc}")
endif()
