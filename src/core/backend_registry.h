#pragma once
// The backend registry: one Backend per DeviceType. The owner of the only
// global backend state. Built-in backends are registered on first use by
// register_builtin_backends(), which the `hwaro` library target defines (it is
// the one place that names each backend, so nothing in core does).
#include <memory>

#include "core/backend.h"

namespace hwaro::detail {

// Takes ownership. A second registration for the same type replaces nothing and is an error.
void register_backend(std::unique_ptr<Backend> backend);
// nullptr when the backend is not built (or, for the test backend, not enabled).
Backend* find_backend(DeviceType type);
// The backend, or hw::Error "backend 'cuda' is not built; built: cpu".
Backend& backend(DeviceType type);
// 0 where the backend is not built.
int device_count(DeviceType type);
// The backend for a concrete use of `device`; checks that the device exists and says how many do.
// Resolves "cuda" (no index) to the current device.
Backend& backend_for(Device device, int* resolved_index);
Device resolve(Device device);

// Defined by the library target, see src/register_backends.cpp.
void register_builtin_backends();

}  // namespace hwaro::detail
