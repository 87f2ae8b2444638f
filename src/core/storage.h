#pragma once
// Storage: one allocation that tensors view. Views of one tensor share it, and
// with it the version counter that autograd uses to detect in-place changes.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/allocator.h"

namespace hwaro {

class Storage {
 public:
  // pinned_from: the page-locked host allocator `data` came from; nullptr for other memory.
  Storage(DataPtr data, std::size_t nbytes, Allocator* pinned_from = nullptr)
      : data_(std::move(data)), nbytes_(nbytes), pinned_from_(pinned_from) {}

  // Allocates nbytes from the allocator of `device`'s backend.
  static std::shared_ptr<Storage> allocate(Device device, std::size_t nbytes, bool pinned = false);

  void* data() const { return data_.get(); }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  bool is_pinned() const { return pinned_from_ != nullptr; }
  // A non_blocking copy from or into this (pinned) memory may still be running: whoever
  // reuses the storage for new data must wait until this is false.
  bool copies_pending() const { return pinned_from_ != nullptr && pinned_from_->copies_pending(data()); }

  std::uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  std::size_t nbytes_;
  Allocator* pinned_from_;
  std::atomic<std::uint32_t> version_{0};
};

}  // namespace hwaro
