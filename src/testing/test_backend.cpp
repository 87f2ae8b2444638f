#include "testing/test_backend.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>

#include "core/backend_registry.h"
#include "core/host_block_cache.h"
#include "hwaro/errors.h"

namespace hwaro::testing {
namespace {

void* aligned_host_alloc(std::size_t nbytes) { return std::aligned_alloc(64, (nbytes + 63) / 64 * 64); }

class HostAllocator final : public Allocator {
 public:
  explicit HostAllocator(int index) : device_(DeviceType::Test, index) {}
  DataPtr allocate(std::size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device_);
    if (fail_countdown_.load() > 0 && fail_countdown_.fetch_sub(1) == 1) {
      throw OutOfMemoryError(detail::str_cat(device_, " out of memory allocating ", nbytes, " bytes (fail_allocation)"));
    }
    void* p = aligned_host_alloc(nbytes);
    HWARO_CHECK_AS(OutOfMemoryError, p != nullptr, "test device out of memory allocating ", nbytes, " bytes");
    return DataPtr(p, nullptr, [](void*, void* data) { std::free(data); }, device_);
  }
  void fail_allocation(int nth) { fail_countdown_.store(nth); }

 private:
  Device device_;
  std::atomic<int> fail_countdown_{0};  // the allocation that throws, counted down; 0: none
};

// Copy completion for every test stream at once: events are sequence numbers, complete up to
// completed_. Held copies leave completed_ behind until complete_all().
class CopyEvents final : public HostEvents {
 public:
  EventHandle record(int /*device*/, StreamId /*stream*/) override {
    const EventHandle event = ++recorded_;
    if (!held_) complete_all();
    return event;
  }
  bool query(EventHandle event) override { return event <= completed_; }
  void release(EventHandle /*event*/) override {}
  void synchronize_stream(int /*device*/, StreamId /*stream*/) override { complete_all(); }
  void complete_all() { completed_ = recorded_.load(); }
  void hold(bool held) { held_ = held; }

 private:
  std::atomic<EventHandle> recorded_{0};
  std::atomic<EventHandle> completed_{0};
  std::atomic<bool> held_{false};
};

class AlignedBacking final : public BackingAllocator {
 public:
  void* raw_alloc(std::size_t nbytes) override { return aligned_host_alloc(nbytes); }
  void raw_free(void* ptr) override { std::free(ptr); }
};

class PinnedAllocator final : public Allocator {
 public:
  DataPtr allocate(std::size_t nbytes) override {
    return DataPtr(cache_.allocate(nbytes), &cache_,
                   [](void* cache, void* data) { static_cast<HostBlockCache*>(cache)->free(data); },
                   Device(DeviceType::CPU));
  }
  bool is_pinned() const override { return true; }
  bool copies_pending(const void* ptr) override { return cache_.copies_pending(ptr); }
  void record_event(const void* ptr, int device) { cache_.record_event(ptr, device, static_cast<StreamId>(device)); }
  CopyEvents& events() { return events_; }

 private:
  AlignedBacking backing_;
  CopyEvents events_;
  HostBlockCache cache_{backing_, events_};
};

// Each thread's current fake stream of each test device (set_current_stream; nullptr: the default).
thread_local std::array<void*, kTestDeviceCount> current_fake_streams{};

class ImmediateStream final : public Stream {
 public:
  ImmediateStream(int index, PinnedAllocator& pinned) : device_(DeviceType::Test, index), pinned_(pinned) {}
  Device device() const override { return device_; }
  void synchronize() override { pinned_.events().complete_all(); }
  void* native_handle() const override { return current_fake_streams[static_cast<std::size_t>(device_.index())]; }

 private:
  Device device_;
  PinnedAllocator& pinned_;
};

class TestBackend final : public Backend {
 public:
  TestBackend() {
    for (int i = 0; i < kTestDeviceCount; ++i) {
      allocators_[i] = std::make_unique<HostAllocator>(i);
      streams_[i] = std::make_unique<ImmediateStream>(i, pinned_);
    }
  }
  DeviceType type() const override { return DeviceType::Test; }
  int device_count() const override { return kTestDeviceCount; }
  Allocator& allocator(int index) override { return *allocators_[index]; }
  HostAllocator& allocator_of(int index) { return *allocators_[index]; }
  Allocator* pinned_host_allocator() override { return pinned_enabled_ ? &pinned_ : nullptr; }
  Stream& current_stream(int index) override { return *streams_[index]; }
  // Both sides are host memory, so the CPU's copy kernel moves (and converts) the data.
  void copy(const TensorView& src, const TensorView& dst, Stream& stream) override {
    Backend& cpu = detail::backend(DeviceType::CPU);
    cpu.copy(src, dst, stream);
    const int index = dst.device.is_cpu() ? src.device.index() : dst.device.index();
    if (src.device.is_cpu()) pinned_.record_event(src.data, index);
    if (dst.device.is_cpu()) pinned_.record_event(dst.data, index);
  }
  void synchronize(int /*index*/) override { pinned_.events().complete_all(); }
  // The CPU's kernel behind a trampoline that counts the launch (kernel_launches).
  KernelFn kernel(OpId op, DType dtype) const override;

  std::atomic<std::int64_t>& launches(OpId op) { return launches_[static_cast<std::size_t>(op)]; }

  // Fake streams: work runs at once; what was asked is logged while logging is on.
  void set_current_stream(int index, void* stream) override {
    current_fake_streams.at(static_cast<std::size_t>(index)) = stream;
  }
  void wait_stream(int index, void* waiter, void* producer) override {
    log_call({StreamCall::Kind::Wait, index, producer, waiter});
  }
  void record_stream(int index, const void* base, void* stream) override {
    log_call({StreamCall::Kind::RecordStream, index, base, stream});
  }
  void log_launch(OpId op, const KernelArgs& args) {
    if (!logging_) return;
    std::lock_guard<std::mutex> lock(log_mutex_);
    log_.launches.push_back({op, args.stream->device().index(), args.stream->native_handle()});
  }
  void start_log() {
    std::lock_guard<std::mutex> lock(log_mutex_);
    log_ = {};
    logging_ = true;
  }
  StreamLog take_log() {
    std::lock_guard<std::mutex> lock(log_mutex_);
    logging_ = false;
    return std::exchange(log_, {});
  }

  void enable_pinned() { pinned_enabled_ = true; }
  PinnedAllocator& pinned() { return pinned_; }

 private:
  PinnedAllocator pinned_;  // first: the streams refer to it
  std::atomic<bool> pinned_enabled_{false};
  std::unique_ptr<HostAllocator> allocators_[kTestDeviceCount];
  std::unique_ptr<ImmediateStream> streams_[kTestDeviceCount];
  std::array<std::atomic<std::int64_t>, kNumOps> launches_{};
  std::mutex log_mutex_;
  std::atomic<bool> logging_{false};
  StreamLog log_;

  void log_call(const StreamCall& call) {
    if (!logging_) return;
    std::lock_guard<std::mutex> lock(log_mutex_);
    log_.calls.push_back(call);
  }
};

TestBackend& test_backend() {
  enable_test_backend();
  return static_cast<TestBackend&>(detail::backend(DeviceType::Test));
}

// One trampoline per (op, dtype) slot: counts, then runs the CPU's kernel for that slot.
template <std::size_t Slot> void counted_kernel(const KernelArgs& args) {
  constexpr auto op = static_cast<OpId>(Slot / kNumDTypes);
  constexpr auto dtype = static_cast<DType>(Slot % kNumDTypes);
  test_backend().launches(op).fetch_add(1, std::memory_order_relaxed);
  test_backend().log_launch(op, args);
  detail::backend(DeviceType::CPU).kernel(op, dtype)(args);
}

template <std::size_t... Slots>
constexpr std::array<KernelFn, sizeof...(Slots)> counted_kernels(std::index_sequence<Slots...> /*slots*/) {
  return {&counted_kernel<Slots>...};
}
constexpr auto kCountedKernels = counted_kernels(std::make_index_sequence<std::size_t{kNumOps} * kNumDTypes>());

KernelFn TestBackend::kernel(OpId op, DType dtype) const {
  if (detail::backend(DeviceType::CPU).kernel(op, dtype) == nullptr) return nullptr;
  return kCountedKernels[static_cast<std::size_t>(op) * kNumDTypes + static_cast<std::size_t>(dtype)];
}

}  // namespace

void set_current_stream(int index, void* stream) { test_backend().set_current_stream(index, stream); }
void start_stream_log() { test_backend().start_log(); }
StreamLog take_stream_log() { return test_backend().take_log(); }

std::int64_t kernel_launches(OpId op) { return test_backend().launches(op).load(std::memory_order_relaxed); }

void enable_test_backend() {
  static std::once_flag once;
  std::call_once(once, [] { detail::register_backend(std::make_unique<TestBackend>()); });
}

void fail_allocation(int index, int nth) { test_backend().allocator_of(index).fail_allocation(nth); }

void enable_test_pinned_memory() { test_backend().enable_pinned(); }
void hold_copies(bool hold) { test_backend().pinned().events().hold(hold); }
void complete_copies() { test_backend().pinned().events().complete_all(); }

}  // namespace hwaro::testing
