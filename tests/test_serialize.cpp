// hw::save / hw::load: every dtype round-trips bit for bit (through the GPU too, where there is
// one), strided inputs, the byte layout read by hand,
// and a file written byte by byte as the Python safetensors package writes it.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "hwaro/nn/layers.h"
#include "serialize_test_files.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

const DType kAllDTypes[] = {kFloat64, kFloat32, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool};

// Random bit patterns, so floats include NaNs with arbitrary payloads, infinities, subnormals, -0.
Tensor random_bits(IntArrayRef sizes, DType dtype, std::mt19937_64& rng) {
  Tensor t = empty(sizes, {.dtype = dtype});
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  for (std::size_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<unsigned char>(rng());
  if (dtype == kBool) {
    for (std::size_t i = 0; i < t.nbytes(); ++i) bytes[i] &= 1;
  }
  return t;
}

std::string raw_bytes(const Tensor& t) {
  Tensor c = t.cpu().contiguous();
  return {static_cast<const char*>(c.data_ptr()), c.nbytes()};
}

TEST(Serialize, EveryDTypeRoundTripsBitForBit) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  nn::StateDict saved;
  for (DType dtype : kAllDTypes) {
    saved[std::string("t_") + dtype_name(dtype)] = random_bits({3, 5, 7}, dtype, rng);
  }
  // Special values placed on purpose, in case the random bits missed them.
  Tensor specials = tensor(std::vector<float>{std::numeric_limits<float>::infinity(),
                                              -std::numeric_limits<float>::infinity(), -0.0f,
                                              std::numeric_limits<float>::denorm_min()},
                           {4});
  std::uint32_t payload_nan = 0x7fa12345u;  // a signalling NaN with a payload
  std::uint32_t negative_nan = 0xffc0beefu;
  Tensor nans = empty({2}, {.dtype = kFloat32});
  std::memcpy(nans.data_ptr<float>(), &payload_nan, 4);
  std::memcpy(nans.data_ptr<float>() + 1, &negative_nan, 4);
  saved["specials"] = specials;
  saved["nans"] = nans;
  saved["scalar"] = random_bits({}, kFloat64, rng);
  saved["empty"] = empty({0, 4}, {.dtype = kInt32});

  const std::string path = dir.file("all.safetensors");
  save(saved, path);
  const nn::StateDict loaded = load(path);
  ASSERT_EQ(loaded.size(), saved.size());
  for (const auto& [name, t] : saved) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(loaded.count(name));
    const Tensor& back = loaded.at(name);
    EXPECT_EQ(back.dtype(), t.dtype());
    EXPECT_EQ(std::vector<std::int64_t>(back.sizes().begin(), back.sizes().end()),
              std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()));
    EXPECT_TRUE(back.device().is_cpu());
    EXPECT_EQ(raw_bytes(back), raw_bytes(t));
  }
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// CPU -> file -> GPU (map_location) -> file: every dtype's bits arrive on the GPU unchanged, and
// saving them from there writes the same file byte for byte. Skipped without a GPU.
TEST(Serialize, ACheckpointLoadsOntoTheGpuAndBackBitForBit) {
  if (!cuda::is_available()) GTEST_SKIP() << "no GPU: " << cuda::unavailable_reason();
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  nn::StateDict saved;
  for (DType dtype : kAllDTypes) saved[std::string("t_") + dtype_name(dtype)] = random_bits({3, 5, 7}, dtype, rng);
  const std::string path = dir.file("cpu.safetensors"), again = dir.file("gpu.safetensors");
  save(saved, path);
  const Device gpu("cuda:0");
  const nn::StateDict on_gpu = load(path, gpu);
  ASSERT_EQ(on_gpu.size(), saved.size());
  for (const auto& [name, t] : saved) {
    SCOPED_TRACE(name);
    const Tensor& back = on_gpu.at(name);
    EXPECT_EQ(back.device(), gpu);
    EXPECT_EQ(back.dtype(), t.dtype());
    EXPECT_EQ(raw_bytes(back), raw_bytes(t));
  }
  save(on_gpu, again);
  EXPECT_EQ(file_bytes(again), file_bytes(path));
}

TEST(Serialize, NonContiguousTensorsAreSavedInRowMajorOrder) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const Tensor base = random_tensor({4, 6}, kFloat32, rng);
  const Tensor strided = non_contiguous_copy(random_tensor({5, 3}, kInt64, rng, -100, 100));
  const Tensor transposed = base.transpose(0, 1);
  ASSERT_FALSE(strided.is_contiguous());
  ASSERT_FALSE(transposed.is_contiguous());
  const std::string path = dir.file("views.safetensors");
  save({{"strided", strided}, {"transposed", transposed}}, path);
  const nn::StateDict loaded = load(path);
  EXPECT_TRUE(all_close(values_of(loaded.at("strided")), values_of(strided), 0, 0));
  EXPECT_TRUE(all_close(values_of(loaded.at("transposed")), values_of(transposed), 0, 0));
  EXPECT_EQ(loaded.at("transposed").sizes()[0], 6);
}

TEST(Serialize, ByteLayoutMatchesTheFormat) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const Tensor b = random_tensor({2, 3}, kFloat32, rng);
  const Tensor a = random_tensor({3}, kInt64, rng, -50, 50);
  const Tensor m = random_tensor({5}, kBool, rng);
  const std::string path = dir.file("layout.safetensors");
  save({{"b", b}, {"a", a}, {"m", m}}, path, {{"epoch", "7"}, {"note", "héllo"}});

  const std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 8u);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u) << "the header is padded to a multiple of 8";
  ASSERT_LE(8 + n, bytes.size());
  const std::string header_text = bytes.substr(8, n);
  const auto header = nlohmann::json::parse(header_text);
  ASSERT_TRUE(header.is_object());
  EXPECT_EQ(header["__metadata__"], (nlohmann::json{{"epoch", "7"}, {"note", "héllo"}}));
  // Widest dtype first: a (I64, 24 bytes), b (F32, 24 bytes), m (BOOL, 5 bytes).
  EXPECT_EQ(header["a"], (nlohmann::json{{"dtype", "I64"}, {"shape", {3}}, {"data_offsets", {0, 24}}}));
  EXPECT_EQ(header["b"], (nlohmann::json{{"dtype", "F32"}, {"shape", {2, 3}}, {"data_offsets", {24, 48}}}));
  EXPECT_EQ(header["m"], (nlohmann::json{{"dtype", "BOOL"}, {"shape", {5}}, {"data_offsets", {48, 53}}}));
  EXPECT_EQ(bytes.size(), 8 + n + 53);
  const std::string data = bytes.substr(8 + n);
  EXPECT_EQ(data.substr(0, 24), raw_bytes(a));
  EXPECT_EQ(data.substr(24, 24), raw_bytes(b));
  EXPECT_EQ(data.substr(48, 5), raw_bytes(m));

  EXPECT_EQ(load_metadata(path), (std::map<std::string, std::string>{{"epoch", "7"}, {"note", "héllo"}}));
}

// The bytes the Python package writes for
//   save_file({"weight": torch.tensor([[1., -2.5], [.5, 3.]]), "scale": torch.tensor([1.], dtype=torch.bfloat16),
//              "mask": torch.tensor([True, False, True])}, path, metadata={"format": "pt"})
// length 216 (0xd8), compact JSON, spaces to a multiple of 8, data widest dtype first.
TEST(Serialize, LoadsAFileWrittenByHandAsPythonWritesIt) {
  ScratchDir dir;
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("scale":{"dtype":"BF16","shape":[1],"data_offsets":[16,18]},)"
      R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[18,21]}})"
      "    ";
  const unsigned char length[8] = {0xd8, 0, 0, 0, 0, 0, 0, 0};
  const unsigned char data[21] = {0x00, 0x00, 0x80, 0x3f,  0x00, 0x00, 0x20, 0xc0,  // 1.0, -2.5
                                  0x00, 0x00, 0x00, 0x3f,  0x00, 0x00, 0x40, 0x40,  // 0.5, 3.0
                                  0x80, 0x3f,                                       // bf16 1.0
                                  0x01, 0x00, 0x01};                                // true, false, true
  ASSERT_EQ(header.size(), 0xd8u);
  const std::string path = dir.file("golden.safetensors");
  write_bytes(path, std::string(reinterpret_cast<const char*>(length), 8) + header +
                        std::string(reinterpret_cast<const char*>(data), sizeof data));

  const nn::StateDict loaded = load(path);
  ASSERT_EQ(loaded.size(), 3u);
  EXPECT_EQ(loaded.at("weight").dtype(), kFloat32);
  EXPECT_EQ(loaded.at("weight").sizes()[1], 2);
  EXPECT_EQ(values_of(loaded.at("weight")), (std::vector<double>{1.0, -2.5, 0.5, 3.0}));
  EXPECT_EQ(loaded.at("scale").dtype(), kBFloat16);
  EXPECT_EQ(values_of(loaded.at("scale")), (std::vector<double>{1.0}));
  EXPECT_EQ(loaded.at("mask").dtype(), kBool);
  EXPECT_EQ(values_of(loaded.at("mask")), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(load_metadata(path), (std::map<std::string, std::string>{{"format", "pt"}}));
}

TEST(Serialize, MapLocationMovesEveryTensor) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const Tensor w = random_tensor({3, 4}, kFloat64, rng);
  const std::string path = dir.file("moved.safetensors");
  save({{"w", w.to(other_device())}}, path);  // a tensor elsewhere is copied to the CPU to be written
  const nn::StateDict loaded = load(path, other_device());
  EXPECT_EQ(loaded.at("w").device(), other_device());
  EXPECT_TRUE(all_close(values_of(loaded.at("w")), values_of(w), 0, 0));
}

// load() returns a name-ordered map that converts to the state dict type implicitly, so a model goes
// through a file without a conversion written out.
static_assert(std::is_convertible_v<decltype(load("")), nn::StateDict>);

TEST(Serialize, AModulesStateDictGoesThroughAFile) {
  ScratchDir dir;
  nn::Linear source(5, 3), target(5, 3);
  const std::string path = dir.file("linear.safetensors");
  ASSERT_NE(raw_bytes(target->weight), raw_bytes(source->weight)) << "two random initialisations";
  save(source->state_dict(), path);
  target->load_state_dict(load(path));
  EXPECT_EQ(raw_bytes(target->weight), raw_bytes(source->weight));
  EXPECT_EQ(raw_bytes(target->bias), raw_bytes(source->bias));
}

TEST(Serialize, NoMetadataAndNoTensorsAreValid) {
  ScratchDir dir;
  const std::string path = dir.file("empty.safetensors");
  save({}, path);
  EXPECT_TRUE(load(path).empty());
  EXPECT_TRUE(load_metadata(path).empty());
}

}  // namespace
}  // namespace hwaro::test
