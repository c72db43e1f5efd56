// Errors are values: a Result<T> holds a T or an Error, and callers must look.
// C++20 has no std::expected; this is the small subset gpunoise needs.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace gpunoise {

struct Error {
  std::string message;  // one line, "failed to <verb> <object>: <reason>"
};

template <typename... Args>
Error MakeError(fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : storage_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(storage_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<Error>(storage_); }

 private:
  std::variant<T, Error> storage_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Status OkStatus() { return {}; }

}  // namespace gpunoise

// Propagates an error from an expression returning Result<...>.
#define GN_RETURN_IF_ERROR(expr)          \
  do {                                    \
    auto gn_status_ = (expr);             \
    if (!gn_status_.ok()) return gn_status_.error(); \
  } while (0)

#define GN_CONCAT_INNER(a, b) a##b
#define GN_CONCAT(a, b) GN_CONCAT_INNER(a, b)
#define GN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.error();             \
  lhs = std::move(tmp).value()
#define GN_ASSIGN_OR_RETURN(lhs, expr) \
  GN_ASSIGN_OR_RETURN_IMPL(GN_CONCAT(gn_result_, __LINE__), lhs, expr)
