// The one Catch2 main shared by every test binary.
#define CATCH_CONFIG_MAIN
// Catch wraps listed test names at the console width; ctest's test discovery
// reads that listing, so a long name would become two bogus tests.
#define CATCH_CONFIG_CONSOLE_WIDTH 1000
#include <catch2/catch.hpp>
