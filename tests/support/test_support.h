#pragma once
// Helpers every test uses: fresh random inputs made independently of hwaro's own
// generators, float64 references read straight out of a tensor's memory, and the
// layouts (non-contiguous, broadcast, zero-size, one-element) that every op is tested on.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hwaro/hwaro.h"

namespace hwaro::test {

// A seed that differs from run to run; tests SCOPED_TRACE it so a failure can be replayed
// with HWARO_TEST_SEED=<seed>.
std::uint64_t fresh_seed();

// Values uniform in [lo, hi) for floating dtypes, integers in [lo, hi] (both ends included) for
// integral ones, 0/1 for bool; on `device`.
Tensor random_tensor(IntArrayRef sizes, DType dtype, std::mt19937_64& rng, double lo = -2.0, double hi = 2.0,
                     Device device = Device(DeviceType::CPU));

// Every element in row-major order as double, read through sizes and strides (no hwaro op used).
std::vector<double> values_of(const Tensor& t);

// The same values as `t` but laid out non-contiguously (a strided slice of a larger buffer).
Tensor non_contiguous_copy(const Tensor& t);

// Elementwise |a - e| <= atol + rtol * |e|, NaNs equal to NaNs; reports the first mismatch.
::testing::AssertionResult all_close(const std::vector<double>& actual, const std::vector<double>& expected,
                                     double rtol, double atol);
// Tolerances by dtype for results computed in that dtype (rtol, atol).
double rtol_for(DType dtype);
double atol_for(DType dtype);

// Runs `body` expecting it to throw ErrorType whose what() contains `needle`.
template <typename ErrorType>
::testing::AssertionResult throws_with(const std::function<void()>& body, const std::string& needle) {
  try {
    body();
  } catch (const ErrorType& e) {
    const std::string what = e.what();
    if (what.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << what << "\" lacks \"" << needle << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a different type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// A second device for device-mismatch tests: the test backend's "test:0".
Device other_device();

}  // namespace hwaro::test
