#pragma once
// HWARO_ARG(type, name) declares an option with LibTorch's accessors: options.name(value) sets it
// and returns the options (so setters chain: Conv2dOptions(1, 32, 3).stride(2).padding(1)),
// options.name() reads it. Use it inside a struct; the default follows as `= value;`.
#define HWARO_ARG(T, name)                  \
 public:                                    \
  auto& name(const T& new_value) {          \
    this->name##_ = new_value;              \
    return *this;                           \
  }                                         \
  const T& name() const { return name##_; } \
                                            \
 private:                                   \
  T name##_
