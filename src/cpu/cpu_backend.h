#pragma once
// The CPU backend's entry point for the library's start-up registration.
namespace hwaro::cpu {
void register_cpu_backend();
}  // namespace hwaro::cpu
