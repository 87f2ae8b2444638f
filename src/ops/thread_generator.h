#pragma once
// A generator that stands in for the default one on one thread: DataParallel gives each
// replica's thread its own, so that what a replica draws (its dropout masks) does not depend on
// the order in which the replicas' threads happen to run.
#include "hwaro/generator.h"

namespace hwaro::ops {

// Makes `generator` what default_generator() returns on this thread for the guard's lifetime.
// manual_seed() still seeds the process-wide generator.
class ThreadGeneratorGuard {
 public:
  explicit ThreadGeneratorGuard(Generator& generator);
  ~ThreadGeneratorGuard();
  ThreadGeneratorGuard(const ThreadGeneratorGuard&) = delete;
  ThreadGeneratorGuard& operator=(const ThreadGeneratorGuard&) = delete;

 private:
  Generator* previous_;
};

}  // namespace hwaro::ops
