#pragma once
// Library handles (cuBLAS, cuDNN) of one kind, per device, shared by the threads that use them, as
// PyTorch's DeviceThreadHandlePool. A handle is used by one thread at a time: a thread takes one
// from the pool on its first use of a device and gives it back when the thread ends. A thread
// started for every step (DataParallel's replicas) thus finds the handles that the last step's
// threads made, instead of creating new ones each step (cudnnCreate costs milliseconds).
//
// `Library` says how to make and end a handle: a struct with Handle, kName and static
// create(Handle*) (throwing on failure) and destroy(Handle) (never throwing). The caller makes
// the device current before a handle of it is first taken, since a library binds a handle to the
// device that is current when it is created.
#include <array>
#include <cstddef>
#include <mutex>
#include <vector>

#include "hwaro/errors.h"

namespace hwaro {

template <typename Library> class HandlePool {
 public:
  using Handle = typename Library::Handle;
  static constexpr int kMaxDevices = 64;

  HandlePool() = default;
  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;
  ~HandlePool() {
    for (const std::vector<Handle>& handles : free_) {
      for (Handle h : handles) Library::destroy(h);
    }
  }

  // A handle of `device` (in [0, kMaxDevices)) that no other thread holds: a returned one, else a new one.
  Handle take(int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<Handle>& handles = free_[static_cast<std::size_t>(device)];
      if (!handles.empty()) {
        const Handle h = handles.back();
        handles.pop_back();
        return h;
      }
    }
    Handle h{};
    Library::create(&h);
    return h;
  }

  void give_back(int device, Handle h) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[static_cast<std::size_t>(device)].push_back(h);
  }

 private:
  std::mutex mutex_;
  std::array<std::vector<Handle>, kMaxDevices> free_{};
};

// The handles one thread holds, one per device, taken from a pool on first use and given back
// when the thread's copy of this object ends (at thread exit, for a thread_local one). The pool
// must outlive the lease.
template <typename Library> class ThreadHandleLease {
 public:
  using Handle = typename Library::Handle;

  explicit ThreadHandleLease(HandlePool<Library>& pool) : pool_(pool) {}
  ThreadHandleLease(const ThreadHandleLease&) = delete;
  ThreadHandleLease& operator=(const ThreadHandleLease&) = delete;
  ~ThreadHandleLease() {
    for (std::size_t device = 0; device < held_.size(); ++device) {
      if (held_[device] != Handle{}) pool_.give_back(static_cast<int>(device), held_[device]);
    }
  }

  Handle get(int device) {
    HWARO_CHECK(device >= 0 && device < HandlePool<Library>::kMaxDevices, Library::kName,
                " handles: device index ", device, " is beyond ", HandlePool<Library>::kMaxDevices);
    Handle& h = held_[static_cast<std::size_t>(device)];
    if (h == Handle{}) h = pool_.take(device);
    return h;
  }

 private:
  HandlePool<Library>& pool_;
  std::array<Handle, HandlePool<Library>::kMaxDevices> held_{};
};

}  // namespace hwaro
