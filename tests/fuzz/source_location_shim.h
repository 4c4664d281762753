/** \file std::source_location for clang 14, whose libstdc++ 12 header is empty without __builtin_source_location. */
#pragma once

#include <source_location>

#ifndef __cpp_lib_source_location
#include <cstdint>
namespace std {
// Only what nki/error.h uses. The parsers under fuzz record no source locations, so a
// location that is always unknown ("", line 0) loses nothing.
struct source_location {
  static constexpr source_location current() noexcept { return {}; }
  constexpr const char* file_name() const noexcept { return ""; }
  constexpr const char* function_name() const noexcept { return ""; }
  constexpr std::uint_least32_t line() const noexcept { return 0; }
  constexpr std::uint_least32_t column() const noexcept { return 0; }
};
}  // namespace std
#endif
