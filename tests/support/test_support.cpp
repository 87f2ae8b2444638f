#include "support/test_support.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/dtype_dispatch.h"
#include "testing/test_backend.h"

namespace hwaro::test {

std::uint64_t fresh_seed() {
  if (const char* forced = std::getenv("HWARO_TEST_SEED")) return std::strtoull(forced, nullptr, 10);
  static std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

Tensor random_tensor(IntArrayRef sizes, DType dtype, std::mt19937_64& rng, double lo, double hi, Device device) {
  Tensor host = empty(sizes, {.dtype = dtype});
  const std::int64_t n = host.numel();
  visit_dtype(dtype, [&]<typename T>() {
    T* p = static_cast<T*>(host.data_ptr());
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      } else if constexpr (std::is_integral_v<T>) {
        const auto a = static_cast<std::int64_t>(std::is_unsigned_v<T> ? std::max(0.0, lo) : lo);
        const auto b = static_cast<std::int64_t>(hi);
        p[i] = static_cast<T>(std::uniform_int_distribution<std::int64_t>(a, std::max(a, b))(rng));
      } else {
        p[i] = T(static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(rng)));
        if constexpr (std::is_same_v<T, double>) p[i] = std::uniform_real_distribution<double>(lo, hi)(rng);
      }
    }
  });
  return host.to(device);
}

std::vector<double> values_of(const Tensor& t) {
  const Tensor host = t.cpu();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(host.numel()));
  const auto sizes = host.sizes();
  const auto strides = host.strides();
  std::vector<std::int64_t> index(sizes.size(), 0);
  visit_dtype(host.dtype(), [&]<typename T>() {
    const T* base = static_cast<const T*>(host.data_ptr());
    for (std::int64_t i = 0; i < host.numel(); ++i) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < sizes.size(); ++d) offset += index[d] * strides[d];
      out.push_back(static_cast<double>(static_cast<std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>>(base[offset])));
      for (std::size_t d = sizes.size(); d-- > 0;) {
        if (++index[d] < sizes[d]) break;
        index[d] = 0;
      }
    }
  });
  return out;
}

Tensor non_contiguous_copy(const Tensor& t) {
  // Place the values at every other element of the last dimension of a buffer twice as wide.
  std::vector<std::int64_t> wide(t.sizes().begin(), t.sizes().end());
  if (wide.empty()) return t.clone();
  wide.back() *= 2;
  Tensor buffer = zeros(wide, {.dtype = t.dtype(), .device = t.device()});
  Tensor view = buffer.slice(-1, 0, std::nullopt, 2);
  view.copy_(t);
  EXPECT_TRUE(t.numel() <= 1 || t.size(-1) <= 1 || !view.is_contiguous());
  return view;
}

::testing::AssertionResult all_close(const std::vector<double>& actual, const std::vector<double>& expected,
                                     double rtol, double atol) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(e) && a == e) continue;
    if (!(std::abs(a - e) <= atol + rtol * std::abs(e))) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << a << ", expected " << e
                                           << " (rtol " << rtol << ", atol " << atol << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

double rtol_for(DType dtype) {
  switch (dtype) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 1e-5;
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    default: return 0.0;
  }
}

double atol_for(DType dtype) {
  switch (dtype) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 1e-6;
    case DType::Float16: return 1e-3;
    case DType::BFloat16: return 1e-2;
    default: return 0.0;
  }
}

Device other_device() {
  testing::enable_test_backend();
  return Device(DeviceType::Test, 0);
}

}  // namespace hwaro::test
