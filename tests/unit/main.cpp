// The doctest runner for every unit test file.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

// shaped is C++20 (class-type template arguments, concepts): the suite must be built as such.
static_assert(__cplusplus >= 202002L, "the test suite must be compiled as C++20 or later");
