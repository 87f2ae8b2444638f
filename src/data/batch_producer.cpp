// BatchProducer: see batch_producer.h.
#include "data/batch_producer.h"

#include <chrono>

namespace hwaro::data {

BatchProducer::BatchProducer(int num_workers, std::size_t capacity, LoadFn load)
    : num_workers_(num_workers), capacity_(capacity), load_(std::move(load)) {}

BatchProducer::~BatchProducer() { finish(/*keep_threads=*/false); }

bool BatchProducer::claimable() const {
  return active_ && next_claim_ < plan_.size() && next_claim_ < consumed_ + capacity_;
}

void BatchProducer::start(std::vector<std::vector<std::size_t>> plan, SampleContext context) {
  std::lock_guard<std::mutex> lock(mutex_);
  plan_ = std::move(plan);
  context_ = context;
  ready_.clear();
  next_claim_ = consumed_ = loaded_ = 0;
  load_ns_ = 0;
  active_ = true;
  if (threads_.empty()) {
    for (int w = 0; w < num_workers_; ++w) threads_.emplace_back([this, w] { work(w); });
  }
  work_cv_.notify_all();
}

void BatchProducer::work(int worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || claimable(); });
    if (stop_) return;
    const std::size_t k = next_claim_++;
    const std::uint64_t generation = generation_.load();
    const std::vector<std::size_t> indices = plan_[k];
    const SampleContext context = context_;
    ++busy_;
    lock.unlock();

    Slot slot;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      SampleContextGuard guard(context);
      slot.batch = load_(indices, worker, [&] { return generation_.load() != generation; });
    } catch (...) {
      slot.error = std::current_exception();
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);

    lock.lock();
    --busy_;
    if (generation == generation_.load() && (slot.batch || slot.error)) {
      ready_[k] = std::move(slot);
      ++loaded_;
      load_ns_ += ns.count();
    }
    ready_cv_.notify_all();
  }
}

std::optional<Batch> BatchProducer::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!active_ || consumed_ >= plan_.size()) return std::nullopt;
  ready_cv_.wait(lock, [&] { return ready_.count(consumed_) != 0; });
  auto node = ready_.extract(consumed_);
  ++consumed_;
  work_cv_.notify_all();
  if (node.mapped().error) {
    active_ = false;  // the epoch ends at the first failed batch
    std::rethrow_exception(node.mapped().error);
  }
  return std::move(node.mapped().batch);
}

void BatchProducer::finish(bool keep_threads) {
  std::unique_lock<std::mutex> lock(mutex_);
  generation_.fetch_add(1);
  active_ = false;
  ready_.clear();
  plan_.clear();
  ready_cv_.wait(lock, [&] { return busy_ == 0; });
  if (keep_threads || threads_.empty()) return;
  stop_ = true;
  work_cv_.notify_all();
  std::vector<std::thread> threads = std::move(threads_);
  threads_.clear();
  lock.unlock();
  for (std::thread& t : threads) t.join();
  lock.lock();
  stop_ = false;
}

std::size_t BatchProducer::batches_loaded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return loaded_;
}

double BatchProducer::load_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<double>(load_ns_) * 1e-9;
}

std::size_t BatchProducer::threads_running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

}  // namespace hwaro::data
