// Normalize, RandomCrop, RandomHorizontalFlip, Lambda and TransformedDataset.
#include "hwaro/data/transforms.h"

#include "hwaro/ops.h"

namespace hwaro::data {

Transform::~Transform() = default;

namespace {
void check_image(const Tensor& data, const char* transform) {
  HWARO_CHECK(data.defined() && (data.dim() == 2 || data.dim() == 3), transform,
              ": expected image data of shape [C, H, W] or [H, W], but found ",
              (data.defined() ? data.sizes() : IntArrayRef{}));
}
}  // namespace

Normalize::Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {
  HWARO_CHECK(!mean_.empty() && mean_.size() == std_.size(), "Normalize: mean and std need the same number (>= 1) of "
              "values, one per channel, but have ", mean_.size(), " and ", std_.size());
  for (double s : std_) HWARO_CHECK(s > 0, "Normalize: every std must be positive, but one is ", s);
}

Example Normalize::apply(Example example, SampleRng&) const {
  Tensor& x = example.data;
  HWARO_CHECK(x.defined() && x.dim() >= 1 && x.is_floating_point(),
              "Normalize: expected floating-point data with a channel dim 0, but found ",
              (x.defined() ? x.sizes() : IntArrayRef{}), " of dtype ", (x.defined() ? x.dtype() : kFloat32),
              "; convert it first, e.g. with Lambda([](auto& t) { return t.to(hw::kFloat32); })");
  const std::int64_t channels = x.size(0);
  HWARO_CHECK(mean_.size() == 1 || static_cast<std::int64_t>(mean_.size()) == channels, "Normalize: ", mean_.size(),
              " means given but the data has ", channels, " channels (dim 0)");
  std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
  shape[0] = static_cast<std::int64_t>(mean_.size());
  const Tensor mean = tensor(mean_, {.dtype = x.dtype()}).view(shape);
  const Tensor std = tensor(std_, {.dtype = x.dtype()}).view(shape);
  example.data = (x - mean) / std;
  return example;
}

RandomCrop::RandomCrop(std::pair<std::int64_t, std::int64_t> height_width, std::int64_t padding)
    : height_(height_width.first), width_(height_width.second), padding_(padding) {
  HWARO_CHECK(height_ > 0 && width_ > 0 && padding >= 0, "RandomCrop: expected positive height and width and ",
              "padding >= 0, but found ", height_, " x ", width_, " with padding ", padding);
}

Example RandomCrop::apply(Example example, SampleRng& rng) const {
  const Tensor& x = example.data;
  check_image(x, "RandomCrop");
  const std::int64_t h = x.size(-2), w = x.size(-1);
  const std::int64_t ph = h + 2 * padding_, pw = w + 2 * padding_;
  HWARO_CHECK(height_ <= ph && width_ <= pw, "RandomCrop: a ", height_, " x ", width_, " crop does not fit in a ", h,
              " x ", w, " image padded by ", padding_, "; use a smaller crop or more padding");
  Tensor padded = x;
  if (padding_ > 0) {
    std::vector<std::int64_t> sizes(x.sizes().begin(), x.sizes().end());
    sizes[sizes.size() - 2] = ph;
    sizes[sizes.size() - 1] = pw;
    padded = zeros(sizes, {.dtype = x.dtype()});
    padded.narrow(-2, padding_, h).narrow(-1, padding_, w).copy_(x);
  }
  const auto top = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(ph - height_ + 1)));
  const auto left = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(pw - width_ + 1)));
  example.data = padded.narrow(-2, top, height_).narrow(-1, left, width_).contiguous();
  return example;
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  HWARO_CHECK(p >= 0 && p <= 1, "RandomHorizontalFlip: p is a probability in [0, 1], but is ", p);
}

Example RandomHorizontalFlip::apply(Example example, SampleRng& rng) const {
  check_image(example.data, "RandomHorizontalFlip");
  if (rng.uniform() < p_) {
    const std::int64_t w = example.data.size(-1);
    const Tensor reversed = arange(w - 1, -1, -1, {.dtype = kInt64});
    example.data = index_select(example.data, -1, reversed);
  }
  return example;
}

Lambda::Lambda(std::function<Tensor(const Tensor&)> fn) : fn_(std::move(fn)) {
  HWARO_CHECK(fn_ != nullptr, "Lambda: the function is empty");
}

Example Lambda::apply(Example example, SampleRng&) const {
  example.data = fn_(example.data);
  return example;
}

TransformedDataset::TransformedDataset(std::shared_ptr<Dataset> base, std::vector<std::shared_ptr<Transform>> transforms)
    : base_(std::move(base)), transforms_(std::move(transforms)) {
  HWARO_CHECK(base_ != nullptr, "TransformedDataset: the base data set is null");
  for (const auto& t : transforms_) HWARO_CHECK(t != nullptr, "TransformedDataset: a transform is null");
}

std::size_t TransformedDataset::size() const { return base_->size(); }

Example TransformedDataset::get(std::size_t index) const {
  const SampleContext context = current_sample_context();
  SampleRng rng = SampleRng::for_sample(context.seed, context.epoch, index);
  Example example = base_->get(index);
  for (const auto& t : transforms_) example = t->apply(std::move(example), rng);
  return example;
}

}  // namespace hwaro::data
