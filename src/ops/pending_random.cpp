// TEMPORARY (being replaced by src/ops/random.cpp): lets the library link meanwhile.
#include "hwaro/ops.h"
namespace hwaro {
Tensor rand(IntArrayRef, const TensorOptions&, Generator*) { throw Error("rand: not implemented yet"); }
Tensor randn(IntArrayRef, const TensorOptions&, Generator*) { throw Error("randn: not implemented yet"); }
}  // namespace hwaro
