// The target that compiles the tests' precompiled header (tests/CMakeLists.txt); it has no tests
// of its own and is not run.
#include "support/test_support.h"
