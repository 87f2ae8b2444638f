#pragma once
// Data loading (guide §3.2, Dev Tip 3): data sets, transforms, readers, the DistributedSampler,
// the DataLoader and its DevicePrefetcher.
#include "hwaro/data/dataloader.h"
#include "hwaro/data/dataset.h"
#include "hwaro/data/device_prefetcher.h"
#include "hwaro/data/distributed_sampler.h"
#include "hwaro/data/sample_rng.h"
#include "hwaro/data/transforms.h"
#include "hwaro/data/readers.h"
