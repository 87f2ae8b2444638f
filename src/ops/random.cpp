// Random creation ops: rand, randn, randint, randperm; the default generator and manual_seed.
// Each draw reserves its counters from the generator (kernels/philox.h gives the layout), so a
// seeded program gets the same numbers on any thread count and on any device.
#include <utility>
#include <vector>

#include "hwaro/ops.h"
#include "kernels/philox.h"
#include "ops/op_helpers.h"
#include "ops/thread_generator.h"

namespace hwaro {

namespace {

Generator& process_generator() {
  static Generator generator;
  return generator;
}

thread_local Generator* thread_generator = nullptr;  // ops::ThreadGeneratorGuard's

}  // namespace

Generator& default_generator() { return thread_generator != nullptr ? *thread_generator : process_generator(); }

void manual_seed(std::uint64_t seed) { process_generator().manual_seed(seed); }

ops::ThreadGeneratorGuard::ThreadGeneratorGuard(Generator& generator)
    : previous_(std::exchange(thread_generator, &generator)) {}

ops::ThreadGeneratorGuard::~ThreadGeneratorGuard() { thread_generator = previous_; }

namespace {

Generator& generator_or_default(Generator* generator) { return generator != nullptr ? *generator : default_generator(); }

// An uninitialised tensor for a draw; requires_grad is set once the values are in.
Tensor draw_target(IntArrayRef sizes, DType dtype, const TensorOptions& options) {
  return empty(sizes, {.dtype = dtype, .device = options.device, .requires_grad = false,
                       .pin_memory = options.pin_memory});
}

// Fills t by `op`, reserving the counters its numel needs from the generator.
void draw(OpId op, Tensor& t, bool wide, Generator& generator, KernelArgs& args) {
  const auto counters = kernels::counters_for(static_cast<std::uint64_t>(t.numel()), kernels::values_per_counter(wide));
  args.tensors[0] = ops::view_of(t);
  args.num_tensors = 1;
  args.ints[0] = static_cast<std::int64_t>(generator.seed());
  args.ints[1] = static_cast<std::int64_t>(generator.take(counters));
  ops::launch(op, t.dtype(), t.device(), args);
}

Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad) t.set_requires_grad(true);
  return t;
}

DType floating_dtype(const char* op, const TensorOptions& options) {
  const DType dtype = options.dtype_or(kDefaultFloatDType);
  HWARO_CHECK(is_floating_point(dtype), op, ": expected a floating-point dtype (float16, bfloat16, float32, float64), got ",
              dtype, "; use randint for integers");
  return dtype;
}

// The smallest and largest integers a dtype holds exactly (floats: their significand's range).
std::pair<double, double> exact_integer_range(DType dtype) {
  switch (dtype) {
    case DType::Bool: return {0.0, 1.0};
    case DType::UInt8: return {0.0, 255.0};
    case DType::Int32: return {-2147483648.0, 2147483647.0};
    case DType::Int64: return {-9223372036854775808.0, 9223372036854775807.0};
    case DType::Float16: return {-2048.0, 2048.0};
    case DType::BFloat16: return {-256.0, 256.0};
    case DType::Float32: return {-16777216.0, 16777216.0};
    case DType::Float64: return {-9007199254740992.0, 9007199254740992.0};
  }
  return {0.0, 0.0};
}

}  // namespace

namespace {
// rand and randn: a floating tensor from a standard distribution (U[0, 1) or N(0, 1)).
Tensor standard_draw(OpId op, const char* name, IntArrayRef sizes, const TensorOptions& options,
                     Generator* generator) {
  const DType dtype = floating_dtype(name, options);
  Tensor t = draw_target(sizes, dtype, options);
  KernelArgs args;
  args.scalars[0] = 0.0;
  args.scalars[1] = 1.0;
  draw(op, t, dtype == kFloat64, generator_or_default(generator), args);
  return finish(t, options);
}
}  // namespace

Tensor rand(IntArrayRef sizes, const TensorOptions& options, Generator* generator) {
  return standard_draw(OpId::RandUniform, "rand", sizes, options, generator);
}

Tensor randn(IntArrayRef sizes, const TensorOptions& options, Generator* generator) {
  return standard_draw(OpId::RandNormal, "randn", sizes, options, generator);
}

Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef sizes, const TensorOptions& options,
               Generator* generator) {
  const DType dtype = options.dtype_or(kInt64);
  HWARO_CHECK(low < high, "randint: expected low < high, but got low=", low, " >= high=", high);
  const auto [lowest, highest] = exact_integer_range(dtype);
  HWARO_CHECK(static_cast<double>(low) >= lowest && static_cast<double>(high - 1) <= highest, "randint: [", low,
              ", ", high, ") does not fit in ", dtype, ", whose values range over [", static_cast<std::int64_t>(lowest),
              ", ", static_cast<std::int64_t>(highest), "]; use a wider dtype");
  Tensor t = draw_target(sizes, dtype, options);
  KernelArgs args;
  args.ints[2] = low;
  args.ints[3] = high;
  draw(OpId::RandInt, t, kernels::randint_is_wide(low, high), generator_or_default(generator), args);
  return finish(t, options);
}

Tensor randperm(std::int64_t n, const TensorOptions& options, Generator* generator) {
  const DType dtype = options.dtype_or(kInt64);
  HWARO_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  HWARO_CHECK(dtype != kBool, "randperm: bool cannot hold a permutation; use an integer dtype such as int64");
  const double highest = exact_integer_range(dtype).second;
  HWARO_CHECK(n == 0 || static_cast<double>(n - 1) <= highest, "randperm: n = ", n, " is too large for ", dtype,
              ", which holds integers up to ", static_cast<std::int64_t>(highest), " exactly; use a wider dtype");
  Generator& gen = generator_or_default(generator);
  // Fisher-Yates on the host: step k swaps position n-1-k with a uniform j in [0, n-1-k], j drawn
  // from 64 bits of word pair k % 2 of counter offset + k / 2.
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  const std::uint64_t seed = gen.seed();
  const std::uint64_t offset = gen.take(kernels::counters_for(static_cast<std::uint64_t>(n), kernels::values_per_counter(true)));
  kernels::Philox4 words{};
  for (std::int64_t k = 0; k + 1 < n; ++k) {
    if (k % 2 == 0) words = kernels::philox4x32_10(offset + static_cast<std::uint64_t>(k / 2), seed);
    const int lane = static_cast<int>(k % 2);
    const std::uint64_t bits = kernels::join64(words.w[2 * lane], words.w[2 * lane + 1]);
    const std::int64_t i = n - 1 - k;
    const auto j = static_cast<std::int64_t>(bits % static_cast<std::uint64_t>(i + 1));
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
  }
  Tensor t = tensor(perm).to(dtype).to(ops::creation_device(options));
  if (options.pin_memory) t = t.pin_memory();
  return finish(t, options);
}

}  // namespace hwaro
