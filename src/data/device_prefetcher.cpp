// DevicePrefetcher: see hwaro/data/device_prefetcher.h. Through the public CUDA API only, so
// the same code builds with and without the CUDA backend.
#include "hwaro/data/device_prefetcher.h"

#include <utility>

#include "hwaro/cuda.h"
#include "hwaro/errors.h"

namespace hwaro::data {

struct DevicePrefetcher::CudaState {
  explicit CudaState(int device) : side(cuda::new_stream(device)) {}
  cuda::Stream side;  // where the copies run
  cuda::Event copied;  // recorded on `side` after the copy of next_
};

DevicePrefetcher::DevicePrefetcher(DataLoader& loader, Device device) : loader_(loader), device_(device) {
  if (!device_.is_cuda()) return;
  HWARO_CHECK(cuda::is_available(), "DevicePrefetcher: ", device_, " needs a GPU, but ", cuda::unavailable_reason(),
              "; prefetch to the CPU instead, or iterate over the DataLoader directly");
  if (!device_.has_index()) device_ = Device(DeviceType::CUDA, cuda::current_device());
  cuda_ = std::make_unique<CudaState>(device_.index());
}

DevicePrefetcher::~DevicePrefetcher() = default;

namespace {
// t on `device`, or an undefined tensor where t is one (a batch without a target).
Tensor moved(const Tensor& t, Device device, bool non_blocking) {
  return t.defined() ? t.to(device, non_blocking) : Tensor();
}
}  // namespace

void DevicePrefetcher::start_copy() {
  next_.reset();
  if (source_ == loader_.end()) return;
  Batch host = std::move(*source_);
  try {
    ++source_;  // the loader already fetches the batch after this one
  } catch (...) {
    error_ = std::current_exception();
    source_ = DataLoader::iterator();
  }
  try {
    copy_to_device(std::move(host));
  } catch (...) {
    // The copy's error (out of memory on the device) belongs to this batch: it is thrown when this
    // batch is due, not from the ++ that should have handed over the one before. No batch after
    // it is loaded.
    error_ = std::current_exception();
    source_ = DataLoader::iterator();
    next_.reset();
  }
}

void DevicePrefetcher::copy_to_device(Batch host) {
  if (!cuda_) {
    next_ = Batch{moved(host.data, device_, false), moved(host.target, device_, false)};
    return;
  }
  const cuda::StreamGuard on_side(cuda_->side);
  next_ = Batch{moved(host.data, device_, /*non_blocking=*/true), moved(host.target, device_, /*non_blocking=*/true)};
  cuda_->copied.record(cuda_->side);
  // The host batch may go now: its pinned block is not reused before the copy's own event.
}

bool DevicePrefetcher::advance() {
  if (!next_) {
    current_ = Batch{};
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return false;
  }
  current_ = std::move(*next_);
  if (cuda_) {
    const cuda::Stream loop = cuda::current_stream(device_.index());
    cuda_->copied.wait(loop);  // the loop's work on the batch starts after its copy
    // Made on the side stream, used on the loop's: a freed block must wait for the loop's work.
    for (const Tensor& t : {current_.data, current_.target}) {
      if (t.defined()) cuda::record_stream(t, loop);
    }
  }
  start_copy();  // batch k+1 is copied while the loop computes on batch k
  return true;
}

DevicePrefetcher::iterator DevicePrefetcher::begin() {
  const std::uint64_t epoch = epoch_++;
  error_ = nullptr;
  next_.reset();
  source_ = loader_.begin();
  start_copy();
  return advance() ? iterator(this, epoch) : iterator();
}

void DevicePrefetcher::end_epoch(std::uint64_t epoch) {
  if (epoch + 1 != epoch_) return;  // a later begin() has already ended it
  source_ = DataLoader::iterator();  // the loader's iterator ends the loader's epoch
  next_.reset();
  error_ = nullptr;
  current_ = Batch{};
}

DevicePrefetcher::iterator::iterator(iterator&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), epoch_(other.epoch_) {}

DevicePrefetcher::iterator& DevicePrefetcher::iterator::operator=(iterator&& other) noexcept {
  if (this != &other) {
    if (owner_) owner_->end_epoch(epoch_);
    owner_ = std::exchange(other.owner_, nullptr);
    epoch_ = other.epoch_;
  }
  return *this;
}

DevicePrefetcher::iterator::~iterator() {
  if (owner_) owner_->end_epoch(epoch_);
}

DevicePrefetcher::iterator& DevicePrefetcher::iterator::operator++() {
  // A later begin() started another epoch; advancing would take its batches from its own iterator.
  if (owner_->epoch_ != epoch_ + 1) {
    owner_ = nullptr;
    throw Error(detail::str_cat("DevicePrefetcher: this iterator's epoch ", epoch_,
                                " was ended by a later begin(); a prefetcher runs one iteration at a time, so "
                                "finish (or leave) one loop before the next"));
  }
  if (!owner_->advance()) owner_ = nullptr;
  return *this;
}

}  // namespace hwaro::data
