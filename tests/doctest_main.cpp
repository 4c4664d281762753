/** \file The doctest main, compiled once for the whole suite. */
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // One compile cache for the suite, inside the build tree, unless the environment names one.
  ::setenv("NKI_CACHE_DIR", NKI_TEST_CACHE_DIR, 0);
  return doctest::Context(argc, argv).run();
}
