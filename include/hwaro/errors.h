#pragma once
// The error types every hwaro call may throw, and the checks that build them.
//
// HWARO_CHECK(cond, parts...) is for what a user can get wrong: it throws
// hw::Error and builds its message (the parts streamed together) only when the
// check fails. HWARO_ASSERT(cond, parts...) guards hwaro's own invariants; its
// message names the file and line and asks for a bug report.
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "hwaro/macros.h"

namespace hwaro {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Two tensor arguments of one op live on different devices (Dev Tip 1).
class DeviceMismatchError : public Error {
 public:
  using Error::Error;
};

// A device allocator could not satisfy a request even after freeing its cache.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// An index outside the valid range (dimension, element, device index).
class IndexError : public Error {
 public:
  using Error::Error;
};

namespace detail {

template <typename... Parts>
std::string str_cat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

[[noreturn]] void throw_internal_error(const char* file, int line, const std::string& message);

}  // namespace detail
}  // namespace hwaro

#define HWARO_CHECK_AS(ErrorType, cond, ...)                            \
  do {                                                                  \
    if (HWARO_UNLIKELY(!(cond))) {                                      \
      throw ErrorType(::hwaro::detail::str_cat(__VA_ARGS__));           \
    }                                                                   \
  } while (false)

#define HWARO_CHECK(cond, ...) HWARO_CHECK_AS(::hwaro::Error, cond, __VA_ARGS__)

#define HWARO_ASSERT(cond, ...)                                                         \
  do {                                                                                  \
    if (HWARO_UNLIKELY(!(cond))) {                                                      \
      ::hwaro::detail::throw_internal_error(__FILE__, __LINE__,                         \
                                            ::hwaro::detail::str_cat(#cond, ": ", ##__VA_ARGS__)); \
    }                                                                                   \
  } while (false)
