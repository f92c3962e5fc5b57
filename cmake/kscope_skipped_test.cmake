# kscope_skipped_test(NAME LABEL REASON): a test standing in for tests that cannot be built or run
# here (a package is missing): ctest reports it skipped, and its one line of output says why.
function(kscope_skipped_test name label reason)
  message(WARNING "${reason}")
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: ${reason}")
  set_tests_properties(${name} PROPERTIES LABELS ${label} SKIP_REGULAR_EXPRESSION "^SKIPPED: ")
endfunction()
