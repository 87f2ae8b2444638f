#pragma once
// DevicePrefetcher (issue 5, Dev Tip 3): a DataLoader's batches, already on `device`.
//
//   hw::data::DataLoader loader(dataset, {.batch_size = 128, .num_workers = 4, .pin_memory = true});
//   hw::data::DevicePrefetcher batches(loader, hw::Device("cuda:0"));
//   for (auto& batch : batches) { auto out = model->forward(batch.data); ... }
//
// On a CUDA device, batch k+1 is copied on a side stream of the device (non_blocking, so
// from pinned memory it is truly asynchronous) while the loop computes on batch k. A batch
// is handed over with an event: the loop's current stream waits for the copy (the host does
// not), and the batch's memory is marked as used on that stream (record_stream) so that the
// caching allocator does not give it to the next copy while the loop may still read it.
// On any other device (cpu, test:N) each batch is copied with to(device) when it is taken:
// a pass-through that behaves the same, without the overlap. An exception of the loader
// (a worker's, naming the sample) or of a batch's copy (out of memory on the device) reaches the
// loop when the batch it belongs to is due.
// A batch without a target (a custom collate's, for unlabelled data) keeps none.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>

#include "hwaro/data/dataloader.h"

namespace hwaro::data {

class DevicePrefetcher {
 public:
  // `loader` must outlive the prefetcher. A CUDA device without a usable GPU is an hw::Error.
  DevicePrefetcher(DataLoader& loader, Device device);
  ~DevicePrefetcher();
  DevicePrefetcher(const DevicePrefetcher&) = delete;
  DevicePrefetcher& operator=(const DevicePrefetcher&) = delete;

  class iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(iterator&& other) noexcept;
    iterator& operator=(iterator&& other) noexcept;
    // Leaving the loop early (break, an exception) ends the epoch as the loader's iterator does:
    // the loader's workers stop, and the prefetched batch and the current one are let go.
    ~iterator();
    Batch& operator*() { return owner_->current_; }
    Batch* operator->() { return &owner_->current_; }
    iterator& operator++();
    bool operator==(const iterator& other) const { return done() == other.done(); }

   private:
    friend class DevicePrefetcher;
    iterator(DevicePrefetcher* owner, std::uint64_t epoch) : owner_(owner), epoch_(epoch) {}
    bool done() const { return owner_ == nullptr; }
    DevicePrefetcher* owner_ = nullptr;
    std::uint64_t epoch_ = 0;
  };

  // Starts a new epoch of the loader (ending any previous one, whose iterator then throws hw::Error
  // on ++ rather than take this epoch's batches) and returns its first batch.
  iterator begin();
  iterator end() { return {}; }
  std::size_t size() const { return loader_.size(); }
  Device device() const { return device_; }

 private:
  struct CudaState;  // the side stream and the copy's event
  bool advance();    // makes the next batch current; false at the end of the epoch
  void end_epoch(std::uint64_t epoch);  // an iterator of `epoch` is gone: stop its loading
  void start_copy();  // takes the loader's next batch and starts its copy
  void copy_to_device(Batch host);  // starts the copy of `host` into next_

  DataLoader& loader_;
  Device device_;
  std::unique_ptr<CudaState> cuda_;  // null off CUDA
  DataLoader::iterator source_;
  std::optional<Batch> next_;  // on the device (or being copied there)
  std::exception_ptr error_;   // the loader's or a copy's error for the batch after current_, thrown in its turn
  Batch current_;
  std::uint64_t epoch_ = 0;  // epochs begun; the running one is epoch_ - 1
};

}  // namespace hwaro::data
