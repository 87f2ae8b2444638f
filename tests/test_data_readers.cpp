// read_idx and MnistDataset on tiny IDX files written here; corruption and truncation fuzzing.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"

namespace hw = hwaro;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> idx_bytes(std::uint8_t type, const std::vector<std::uint32_t>& dims,
                                    const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> b{0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (std::uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(d >> s));
  }
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_gz(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("hwaro_data_" + name + "_" + std::to_string(hw::test::fresh_seed()));
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST(ReadIdx, ValuesOfEveryTypeRawAndGzip) {
  const fs::path dir = temp_dir("types");
  std::mt19937_64 rng(hw::test::fresh_seed());
  std::vector<std::uint8_t> u8(6);
  for (auto& v : u8) v = static_cast<std::uint8_t>(rng());
  write_bytes(dir / "u8.idx", idx_bytes(0x08, {2, 3}, u8));
  write_gz(dir / "u8.idx.gz", idx_bytes(0x08, {2, 3}, u8));
  for (const char* name : {"u8.idx", "u8.idx.gz"}) {
    const hw::Tensor t = hw::data::read_idx((dir / name).string());
    EXPECT_EQ(t.dtype(), hw::kUInt8);
    EXPECT_EQ(t.sizes(), hw::IntArrayRef({2, 3}));
    EXPECT_EQ(t.to_vector<std::uint8_t>(), u8);
  }
  // Big-endian int16 -1, 258 and int32 -5; float 1.5 (0x3FC00000).
  write_bytes(dir / "i16.idx", idx_bytes(0x0B, {2}, {0xFF, 0xFF, 0x01, 0x02}));
  EXPECT_EQ(hw::data::read_idx((dir / "i16.idx").string()).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-1, 258}));
  write_bytes(dir / "i32.idx", idx_bytes(0x0C, {1}, {0xFF, 0xFF, 0xFF, 0xFB}));
  EXPECT_EQ(hw::data::read_idx((dir / "i32.idx").string()).to_vector<std::int32_t>(), (std::vector<std::int32_t>{-5}));
  write_bytes(dir / "f32.idx", idx_bytes(0x0D, {1}, {0x3F, 0xC0, 0x00, 0x00}));
  EXPECT_EQ(hw::data::read_idx((dir / "f32.idx").string()).to_vector<float>(), (std::vector<float>{1.5f}));
  fs::remove_all(dir);
}

TEST(ReadIdx, BadHeadersNameTheFileAndTheProblem) {
  const fs::path dir = temp_dir("bad");
  const std::string p = (dir / "x.idx").string();
  write_bytes(p, {1, 0, 8, 1});
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx(p); }, "magic number"));
  write_bytes(p, idx_bytes(0x07, {1}, {0}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx(p); }, "unknown IDX element type"));
  write_bytes(p, idx_bytes(0x08, {2, 3}, {1, 2, 3}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx(p); }, "x.idx' is truncated"));
  write_bytes(p, idx_bytes(0x08, {2}, {1, 2, 3}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx(p); }, "holds 3 data bytes"));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx((dir / "missing").string()); }, "cannot open"));
  // Not a file: refused at once (gzopen would wait on a named pipe for a writer).
  fs::create_directory(dir / "sub.idx");
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx((dir / "sub.idx").string()); },
                                               "sub.idx': it is not a regular file"));
  ASSERT_EQ(::mkfifo((dir / "pipe.idx").c_str(), 0600), 0);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx((dir / "pipe.idx").string()); },
                                               "pipe.idx': it is not a regular file"));
  fs::remove_all(dir);
}

TEST(ReadIdx, AnEmptyTensorIsValidWhereverItsZeroDimensionIs) {
  const fs::path dir = temp_dir("empty");
  const std::string p = (dir / "e.idx").string();
  // Both the copied (unsigned byte) and the converted (float) element types: the copy once passed
  // memcpy an empty tensor's null pointer, which UBSan reports.
  for (const std::uint8_t type : {std::uint8_t{0x08}, std::uint8_t{0x0D}}) {
    for (const std::vector<std::uint32_t>& dims : {std::vector<std::uint32_t>{0, 2}, {2, 0}, {3, 4, 0}}) {
      write_bytes(p, idx_bytes(type, dims, {}));
      const hw::Tensor t = hw::data::read_idx(p);
      EXPECT_EQ(t.numel(), 0);
      EXPECT_EQ(t.dim(), static_cast<std::int64_t>(dims.size()));
    }
  }
  // Data after an empty tensor's header is a corrupt file, and so are strides past int64.
  write_bytes(p, idx_bytes(0x08, {2, 0}, {7}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx(p); }, "holds 1 data bytes"));
  write_bytes(p, idx_bytes(0x0E, {0, 0xFFFFFFFF, 0xFFFFFFFF}, {}));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::read_idx(p); }, "e.idx': size"));
  fs::remove_all(dir);
}

TEST(ReadIdx, FuzzedCorruptionAndTruncationGiveErrorsNotCrashes) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const fs::path dir = temp_dir("fuzz");
  std::vector<std::uint8_t> payload(4 * 5 * 5);
  for (auto& v : payload) v = static_cast<std::uint8_t>(rng());
  const auto valid = idx_bytes(0x08, {4, 5, 5}, payload);
  int errors = 0;
  for (int round = 0; round < 300; ++round) {
    auto bytes = valid;
    if (round % 2 == 0) {
      bytes.resize(rng() % bytes.size());  // truncated: always an error
    } else {
      for (int k = 0; k < 3; ++k) bytes[rng() % 16] = static_cast<std::uint8_t>(rng());  // header bytes
    }
    const fs::path p = dir / (round % 3 == 0 ? "f.idx.gz" : "f.idx");
    if (round % 3 == 0) {
      write_gz(p, bytes);
      // A truncated gzip stream of the valid file, too.
      auto gz = std::vector<char>(fs::file_size(p));
      std::ifstream(p, std::ios::binary).read(gz.data(), static_cast<std::streamsize>(gz.size()));
      if (round % 2 == 0 && gz.size() > 4) {
        fs::resize_file(p, rng() % gz.size());
      }
    } else {
      write_bytes(p, bytes);
    }
    try {
      const hw::Tensor t = hw::data::read_idx(p.string());
      EXPECT_EQ(static_cast<std::size_t>(t.nbytes()) + 4 + 4 * static_cast<std::size_t>(t.dim()), bytes.size())
          << "a file that reads must be consistent";
    } catch (const hw::Error& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find("f.idx"), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(errors, 150) << "every truncated file must fail";
  fs::remove_all(dir);
}

TEST(MnistDataset, SamplesAreScaledFloatImagesAndInt64Labels) {
  const std::uint64_t seed = hw::test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const fs::path dir = temp_dir("mnist");
  const std::uint32_t n = 5;
  std::vector<std::uint8_t> pixels(n * 28 * 28), labels(n);
  for (auto& v : pixels) v = static_cast<std::uint8_t>(rng());
  for (auto& v : labels) v = static_cast<std::uint8_t>(rng() % 10);
  write_gz(dir / "train-images-idx3-ubyte.gz", idx_bytes(0x08, {n, 28, 28}, pixels));
  write_bytes(dir / "train-labels-idx1-ubyte", idx_bytes(0x08, {n}, labels));
  hw::data::MnistDataset ds(dir.string(), /*train=*/true);
  ASSERT_EQ(ds.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto e = ds.get(i);
    EXPECT_EQ(e.data.dtype(), hw::kFloat32);
    EXPECT_EQ(e.data.sizes(), hw::IntArrayRef({1, 28, 28}));
    EXPECT_EQ(e.target.dtype(), hw::kInt64);
    EXPECT_EQ(e.target.dim(), 0);
    EXPECT_EQ(e.target.item<std::int64_t>(), labels[i]);
    std::vector<double> expected(28 * 28);
    for (std::size_t k = 0; k < expected.size(); ++k) expected[k] = pixels[i * 28 * 28 + k] / 255.0;
    EXPECT_TRUE(hw::test::all_close(hw::test::values_of(e.data), expected, 1e-6, 1e-7));
  }
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::MnistDataset(dir.string(), false); },
                                               "run scripts/fetch-data.sh"));
  labels[2] = 12;
  write_bytes(dir / "train-labels-idx1-ubyte", idx_bytes(0x08, {n}, labels));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::MnistDataset(dir.string(), true); }, "classes are 0..9"));
  write_bytes(dir / "train-labels-idx1-ubyte", idx_bytes(0x08, {n - 1}, std::vector<std::uint8_t>(n - 1, 1)));
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::MnistDataset(dir.string(), true); }, "they must match"));
  fs::remove_all(dir);
}

// exists() on a path it cannot search throws std::filesystem::filesystem_error; MnistDataset must turn
// that into an hw::Error naming the path. A symbolic-link loop fails for root as well; a directory
// without permission only for other users (root may search any directory).
TEST(MnistDataset, APathThatCannotBeSearchedIsAnHwErrorNamingIt) {
  const fs::path dir = temp_dir("mnist_unsearchable");
  const fs::path loop = dir / "loop";
  fs::create_directory_symlink(loop, loop);
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::MnistDataset(loop.string(), true); },
                                               "cannot look for MNIST file '" + loop.string() + "/train-images"));
  if (::geteuid() != 0) {
    const fs::path locked = dir / "locked";
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::none);
    EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { hw::data::MnistDataset((locked / "mnist").string(), true); },
                                                 "cannot look for MNIST file '" + locked.string()));
    fs::permissions(locked, fs::perms::owner_all);
  }
  fs::remove_all(dir);
}
