// CsvDataset on CSV files written here: values against the float64 numbers written, the target
// chosen by index or name, int64 and float32 targets, gzip; each kind of bad file; a fuzz test.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/test_support.h"

namespace hw = hwaro;
namespace fs = std::filesystem;
using hw::data::CsvDataset;
using hw::data::CsvOptions;

namespace {

class CsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = hw::test::fresh_seed();
    rng_.seed(seed_);
    dir_ = fs::temp_directory_path() / ("hwaro_csv_" + std::to_string(seed_));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  // The error CsvDataset(text) throws, or "" when it loads.
  std::string error_of(const std::string& text, const CsvOptions& options = {}) {
    const std::string path = write("bad.csv", text);
    try {
      CsvDataset dataset(path, options);
    } catch (const hw::Error& e) {
      return e.what();
    }
    return "";
  }

  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  fs::path dir_;
};

// A random table of `rows` x `columns` numbers as written (%.9g round-trips a float32 exactly),
// the `label` column holding whole numbers 0..9.
struct Table {
  std::vector<std::vector<double>> values;
  std::string text;
};
Table random_table(std::mt19937_64& rng, int rows, int columns, int label, const std::string& header,
                   const std::string& line_end = "\n") {
  Table t;
  t.text = header.empty() ? "" : header + line_end;
  std::uniform_real_distribution<double> real(-1000.0, 1000.0);
  for (int r = 0; r < rows; ++r) {
    std::vector<double> row;
    for (int c = 0; c < columns; ++c) {
      const double v = c == label ? static_cast<double>(rng() % 10) : static_cast<double>(static_cast<float>(real(rng)));
      char field[32];
      std::snprintf(field, sizeof field, "%.9g", v);
      t.text += (c == 0 ? "" : (r % 2 == 0 ? "," : " , ")) + std::string(field);
      row.push_back(v);
    }
    t.text += line_end;
    t.values.push_back(row);
  }
  return t;
}

void expect_matches(const CsvDataset& dataset, const Table& table, int target) {
  ASSERT_EQ(dataset.size(), table.values.size());
  const std::vector<double> data = hw::test::values_of(dataset.data());
  const std::vector<double> targets = hw::test::values_of(dataset.targets());
  const std::size_t columns = table.values[0].size();
  std::size_t k = 0;
  for (std::size_t r = 0; r < table.values.size(); ++r) {
    for (std::size_t c = 0; c < columns; ++c) {
      if (static_cast<int>(c) == target) {
        EXPECT_EQ(targets[r], table.values[r][c]) << "row " << r;
      } else {
        EXPECT_EQ(data[k++], table.values[r][c]) << "row " << r << " column " << c;
      }
    }
  }
  EXPECT_EQ(k, data.size());
}

}  // namespace

TEST_F(CsvTest, NumbersAndAnInt64TargetByIndexWithoutHeader) {
  SCOPED_TRACE(seed_);
  const Table table = random_table(rng_, 37, 5, 0, "");
  const CsvDataset dataset(write("t.csv", table.text), {.target_column = 0});
  EXPECT_EQ(dataset.data().dtype(), hw::kFloat32);
  EXPECT_EQ(dataset.data().sizes(), hw::IntArrayRef({37, 4}));
  EXPECT_EQ(dataset.targets().dtype(), hw::kInt64);
  EXPECT_TRUE(dataset.feature_names().empty());
  expect_matches(dataset, table, 0);
  const hw::data::Example e = dataset.get(5);
  EXPECT_EQ(e.data.sizes(), hw::IntArrayRef({4}));
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<std::int64_t>(), static_cast<std::int64_t>(table.values[5][0]));
  EXPECT_TRUE(hw::test::throws_with<hw::IndexError>([&] { (void)dataset.get(37); }, "CsvDataset"));
}

TEST_F(CsvTest, HeaderTargetByNameCrlfAndAFloatTarget) {
  SCOPED_TRACE(seed_);
  const Table table = random_table(rng_, 20, 4, 2, "a, \"b\",label,d", "\r\n");
  const CsvDataset by_name(write("h.csv", table.text), {.header = true, .target_name = "label"});
  expect_matches(by_name, table, 2);
  EXPECT_EQ(by_name.feature_names(), (std::vector<std::string>{"a", "b", "d"}));
  const CsvDataset by_index(write("h.csv", table.text), {.header = true, .target_column = -1,
                                                          .target_dtype = hw::kFloat32});
  EXPECT_EQ(by_index.targets().dtype(), hw::kFloat32);
  expect_matches(by_index, table, 3);
}

TEST_F(CsvTest, GzipBlankLinesAndWholeNumbersWrittenAsReals) {
  const std::string text = "\n1.5,2,3.0\n\n  \n-4e2,\"5\",7\n";
  const std::string path = (dir_ / "g.csv.gz").string();
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  const CsvDataset dataset(path);
  EXPECT_EQ(hw::test::values_of(dataset.data()), (std::vector<double>{1.5, 2, -400, 5}));
  EXPECT_EQ(dataset.targets().to_vector<std::int64_t>(), (std::vector<std::int64_t>{3, 7}));
}

TEST_F(CsvTest, ALoaderBatchesItsRows) {
  SCOPED_TRACE(seed_);
  const Table table = random_table(rng_, 10, 3, 2, "");
  auto dataset = std::make_shared<CsvDataset>(write("l.csv", table.text));
  hw::data::DataLoader loader(dataset, {.batch_size = 4, .num_workers = 2});
  std::vector<std::int64_t> targets;
  for (auto& batch : loader) {
    EXPECT_EQ(batch.data.size(1), 2);
    for (std::int64_t t : batch.target.to_vector<std::int64_t>()) targets.push_back(t);
  }
  ASSERT_EQ(targets.size(), 10u);
  for (std::size_t r = 0; r < 10; ++r) EXPECT_EQ(targets[r], static_cast<std::int64_t>(table.values[r][2]));
}

TEST_F(CsvTest, EachKindOfBadFileNamesTheFileLineAndColumn) {
  EXPECT_NE(error_of("").find("has no data rows"), std::string::npos);
  EXPECT_NE(error_of("\n \n").find("has no data rows"), std::string::npos);
  EXPECT_NE(error_of("a,b\n", {.header = true}).find("no data rows after its header"), std::string::npos);
  std::string e = error_of("1,2,3\n4,5,6\n7,8\n");
  EXPECT_NE(e.find("bad.csv', line 3, column 3: expected 3 fields as on line 1, found 2"), std::string::npos) << e;
  e = error_of("1,2\n3,4,5\n");
  EXPECT_NE(e.find("line 2, column 3: expected 2 fields"), std::string::npos) << e;
  e = error_of("1,2\n3,x4\n");
  EXPECT_NE(e.find("line 2, column 2: expected a number, found 'x4'"), std::string::npos) << e;
  e = error_of("1,2\n3,\n");
  EXPECT_NE(e.find("line 2, column 2: expected a number, found ''"), std::string::npos) << e;
  e = error_of("1,1e39\n");
  EXPECT_NE(e.find("beyond the range of float32"), std::string::npos) << e;
  // Beyond even double's range: from_chars reports these out of range, not unparsable.
  e = error_of("1e400,1\n");
  EXPECT_NE(e.find("line 1, column 1: '1e400' is beyond the range of float32"), std::string::npos) << e;
  e = error_of("-1e-400,1\n");
  EXPECT_NE(e.find("line 1, column 1: '-1e-400' is beyond the range of float32"), std::string::npos) << e;
  e = error_of("1,2.5\n");
  EXPECT_NE(e.find("line 1, column 2: the target must be a whole number"), std::string::npos) << e;
  e = error_of("1,\"2\n");
  EXPECT_NE(e.find("line 1, column 2: a stray or unmatched double quote"), std::string::npos) << e;
  e = error_of("1\n2\n");
  EXPECT_NE(e.find("found 1 column"), std::string::npos) << e;
  e = error_of("a,b\n1,2\n", {.header = true, .target_name = "c"});
  EXPECT_NE(e.find("no column named 'c' in the header; its columns are 'a', 'b'"), std::string::npos) << e;
  e = error_of("a,a\n1,2\n", {.header = true, .target_name = "a"});
  EXPECT_NE(e.find("appears twice"), std::string::npos) << e;
  e = error_of("1,2\n", {.target_name = "a"});
  EXPECT_NE(e.find("needs a header row"), std::string::npos) << e;
  e = error_of("1,2\n", {.target_column = 2});
  EXPECT_NE(e.find("target_column 2 is out of range for its 2 columns"), std::string::npos) << e;
  e = error_of("1,2\n", {.target_dtype = hw::kFloat64});
  EXPECT_NE(e.find("target_dtype must be int64"), std::string::npos) << e;
  EXPECT_TRUE(hw::test::throws_with<hw::Error>([&] { CsvDataset((dir_ / "missing.csv").string()); }, "cannot open"));
}

TEST_F(CsvTest, FuzzedFilesGiveErrorsOrValidLoadsNeverCrashes) {
  SCOPED_TRACE(seed_);
  const Table table = random_table(rng_, 12, 4, 3, "w,x,y,label");
  const std::string alphabet = "0123456789,,,\n\n\r\"\" .-+eEnaifx\t";
  int loaded = 0, rejected = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::string text = table.text;
    const int edits = 1 + static_cast<int>(rng_() % 4);
    for (int k = 0; k < edits && !text.empty(); ++k) {
      const std::size_t at = rng_() % text.size();
      switch (rng_() % 4) {
        case 0: text[at] = alphabet[rng_() % alphabet.size()]; break;
        case 1: text.insert(at, 1, alphabet[rng_() % alphabet.size()]); break;
        case 2: text.erase(at, 1); break;
        default: text.resize(at); break;  // truncation
      }
    }
    const std::string path = write("fuzz.csv", text);
    const CsvOptions options{.header = trial % 2 == 0, .target_name = trial % 4 == 0 ? "label" : ""};
    try {
      const CsvDataset dataset(path, options);
      ++loaded;
      ASSERT_GE(dataset.size(), 1u);
      ASSERT_EQ(dataset.data().dim(), 2);
      ASSERT_EQ(dataset.data().size(0), dataset.targets().size(0));
      ASSERT_GE(dataset.data().size(1), 1);
      (void)dataset.get(dataset.size() - 1);
    } catch (const hw::Error& e) {
      ++rejected;
      ASSERT_NE(std::string(e.what()).find("fuzz.csv"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}
