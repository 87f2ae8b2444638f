// hw::load's checks: every way a safetensors file can be wrong gives hw::Error naming the file and the
// problem. Each file is written byte by byte here, a valid one changed in exactly one respect.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serialize_test_files.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

// One header entry, e.g. entry("a", "F32", "[2]", 0, 8) -> "a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, std::uint64_t begin,
                  std::uint64_t end) {
  return detail::str_cat("\"", name, "\":{\"dtype\":\"", dtype, "\",\"shape\":", shape, ",\"data_offsets\":[", begin,
                         ",", end, "]}");
}

std::string object(const std::string& members) { return "{" + members + "}"; }

class SerializeValidation : public ::testing::Test {
 protected:
  // Writes `bytes` to a file and checks that load() and load_metadata() both refuse it with an hw::Error
  // whose message starts with the file's path and contains `problem`.
  ::testing::AssertionResult rejected(const std::string& bytes, const std::string& problem) {
    const std::string path = dir_.file("bad.safetensors");
    write_bytes(path, bytes);
    return rejected_file(path, problem);
  }
  ::testing::AssertionResult rejected_file(const std::string& path, const std::string& problem) {
    for (const bool metadata_only : {false, true}) {
      auto result = throws_with<Error>(
          [&] {
            if (metadata_only) load_metadata(path);
            else load(path);
          },
          problem);
      if (!result) return result << (metadata_only ? " (load_metadata)" : " (load)");
      auto named = throws_with<Error>([&] { load(path); }, path + ": ");
      if (!named) return named << " (the message does not name the file)";
    }
    return ::testing::AssertionSuccess();
  }
  // A file whose header is `header` (padded as a writer would) and whose data section is `data_bytes` zeros.
  static std::string file_with(const std::string& header, std::size_t data_bytes) {
    std::string padded = header;
    padded.append((8 - padded.size() % 8) % 8, ' ');
    return safetensors_bytes(padded, std::string(data_bytes, '\0'));
  }

  // A sparse file: the length field `header_length`, then zeros, `data_bytes` more than it announces.
  std::string sparse_file(std::uint64_t header_length, std::uint64_t data_bytes) {
    const std::string path = dir_.file("sparse.safetensors");
    std::string field(8, '\0');
    for (int i = 0; i < 8; ++i) field[i] = static_cast<char>((header_length >> (8 * i)) & 0xff);
    write_bytes(path, field);
    EXPECT_EQ(::truncate(path.c_str(), static_cast<off_t>(8 + header_length + data_bytes)), 0);
    return path;
  }

  ScratchDir dir_;
};

TEST_F(SerializeValidation, TheBaselineFileLoads) {
  // Every case below breaks this file in one way; it must itself be valid.
  const std::string path = dir_.file("good.safetensors");
  write_bytes(path, file_with(object(entry("a", "F32", "[2]", 0, 8)), 8));
  EXPECT_EQ(load(path).at("a").numel(), 2);
}

TEST_F(SerializeValidation, FileShorterThanTheLengthField) {
  EXPECT_TRUE(rejected("", "is 0 bytes long, shorter than the 8-byte header length"));
  EXPECT_TRUE(rejected(std::string("\x10\0\0", 3), "is 3 bytes long, shorter than the 8-byte header length"));
}

TEST_F(SerializeValidation, HeaderLengthPastTheEndOfTheFile) {
  std::string bytes = file_with(object(entry("a", "F32", "[2]", 0, 8)), 8);
  const std::size_t follow = bytes.size() - 8;
  bytes[0] = static_cast<char>(follow + 1);  // the header is shorter than 256 bytes
  EXPECT_TRUE(rejected(bytes, detail::str_cat("header length is ", follow + 1, " bytes but only ", follow,
                                              " bytes follow")));
}

TEST_F(SerializeValidation, HeaderLengthOverTheLimit) {
  // Long enough that the length is in range, so only the 100 MB limit can refuse it.
  EXPECT_TRUE(rejected_file(sparse_file(100'000'008, 8),
                            "header length is 100000008 bytes, more than the 100000000-byte limit"));
}

TEST_F(SerializeValidation, HeaderLengthOfExactlyTheLimitIsAllowed) {
  // As the reference reader: a length equal to the limit passes the length check, so this file
  // of zeros is refused for what its header holds instead.
  EXPECT_TRUE(rejected_file(sparse_file(100'000'000, 0), "its header does not start with '{'"));
}

TEST_F(SerializeValidation, HeaderDoesNotStartWithABrace) {
  EXPECT_TRUE(rejected(file_with(detail::str_cat(" ", object(entry("a", "F32", "[2]", 0, 8))), 8),
                       "does not start with '{'"));
  EXPECT_TRUE(rejected(safetensors_bytes("", ""), "does not start with '{'"));
}

TEST_F(SerializeValidation, DeeplyNestedValuesAreRefusedNotRecursedThrough) {
  // 100,000 levels: building, printing or freeing such a value recursively would overflow the stack.
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"dtype":)" + deep + R"(,"shape":[2],"data_offsets":[0,8]})"), 8),
                       "nests JSON values more than 8 levels deep"));
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"dtype":"F32","shape":)" + deep + R"(,"data_offsets":[0,8]})"), 8),
                       "nests JSON values more than 8 levels deep"));
}

TEST_F(SerializeValidation, ALongValueIsQuotedShortInTheMessage) {
  const std::string path = dir_.file("long.safetensors");
  write_bytes(path, file_with(object(R"("a":{"dtype":"F32","shape":")" + std::string(1'000'000, 'x') +
                                     R"(","data_offsets":[0,8]})"),
                              8));
  try {
    load(path);
    ADD_FAILURE() << "a shape that is a string was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tensor 'a' shape is \"xxxx"), std::string::npos) << what;
    EXPECT_LT(what.size(), 1000u);
  }
}

TEST_F(SerializeValidation, HeaderIsNotJson) {
  EXPECT_TRUE(rejected(file_with("{\"a\":{\"dtype\":", 0), "header is not valid JSON"));
  EXPECT_TRUE(rejected(file_with("{\xff\xfe}", 0), "header is not valid JSON"));
  EXPECT_TRUE(rejected(file_with("\xff\xfe{}", 0), "header does not start with '{'"));
}

TEST_F(SerializeValidation, HeaderIsNotAnObject) {
  EXPECT_TRUE(rejected(file_with("[1,2]", 0), "header does not start with '{'"));
  EXPECT_TRUE(rejected(file_with(object("\"a\":3"), 0), "tensor 'a' is a JSON number, expected an object"));
}

TEST_F(SerializeValidation, EntryLacksAField) {
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"shape":[2],"data_offsets":[0,8]})"), 8), "tensor 'a' lacks \"dtype\""));
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"dtype":"F32","data_offsets":[0,8]})"), 8), "tensor 'a' lacks \"shape\""));
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"dtype":"F32","shape":[2]})"), 8), "tensor 'a' lacks \"data_offsets\""));
}

TEST_F(SerializeValidation, EntryHasAnUnknownField) {
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"stride":[1]})"), 8),
                       "tensor 'a' has an unknown field \"stride\""));
}

TEST_F(SerializeValidation, DTypeNotAStringUnknownOrUnsupported) {
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"dtype":4,"shape":[2],"data_offsets":[0,8]})"), 8),
                       "tensor 'a' dtype is 4, expected a string"));
  EXPECT_TRUE(rejected(file_with(object(entry("a", "Q7", "[2]", 0, 8)), 8), "\"Q7\", which is not a safetensors dtype"));
  for (const char* unsupported : {"I8", "I16", "U16", "U32", "U64", "F8_E4M3", "F6_E3M2", "F8_E5M2FNUZ", "C64"}) {
    SCOPED_TRACE(unsupported);
    EXPECT_TRUE(rejected(file_with(object(entry("a", unsupported, "[2]", 0, 2)), 2),
                         detail::str_cat("\"", unsupported, "\", which hwaro does not support; supported: F64, F32")));
  }
}

TEST_F(SerializeValidation, ShapeNotAnArrayOfNonNegativeIntegers) {
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "2", 0, 8)), 8), "tensor 'a' shape is 2, expected an array"));
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[-2]", 0, 8)), 8),
                       "tensor 'a' shape holds -2, expected a non-negative integer"));
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[2.0]", 0, 8)), 8),
                       "tensor 'a' shape holds 2.0, expected a non-negative integer"));
  std::string many = "[1";
  for (int i = 1; i < 65; ++i) many += ",1";
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", many + "]", 0, 4)), 4), "tensor 'a' has 65 dimensions"));
}

TEST_F(SerializeValidation, ShapeTooLargeToAddress) {
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[4294967296,4294967296]", 0, 8)), 8),
                       "tensor 'a' shape [4294967296,4294967296] is too large to address"));
  // As the reference reader, an overflowing product is refused even where a later dimension is 0;
  // and a leading 0 does not hide strides that overflow.
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[4611686018427387904,4,4611686018427387904,0]", 0, 0)), 0),
                       "is too large to address"));
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[0,4611686018427387904,4]", 0, 0)), 0),
                       "tensor 'a' shape [0,4611686018427387904,4] is too large to address"));
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[9223372036854775808]", 0, 0)), 0),
                       "is too large to address"));
}

TEST_F(SerializeValidation, OffsetsMalformed) {
  EXPECT_TRUE(rejected(file_with(object(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0]})"), 8),
                       "tensor 'a' data_offsets is [0], expected [begin, end]"));
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[0]", 8, 0)), 8),
                       "tensor 'a' data_offsets [8, 0] end before they begin"));
}

TEST_F(SerializeValidation, OffsetsDoNotMatchTheShape) {
  // The brief's own example message, word for word.
  EXPECT_TRUE(rejected(file_with(object(entry("fc1.weight", "F32", "[10,20]", 0, 100)), 100),
                       "tensor 'fc1.weight' data_offsets [0, 100] do not match shape [10, 20] of F32 (800 bytes)"));
}

TEST_F(SerializeValidation, OffsetsRunPastTheData) {
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[2]", 0, 8)), 4),
                       "tensor 'a' data_offsets [0, 8] run past the data section (4 bytes)"));
}

TEST_F(SerializeValidation, OffsetsLeaveAGap) {
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 16, 24)), 24),
                       "bytes [8, 16) of the data section belong to no tensor (before 'b')"));
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[2]", 0, 8)), 12),
                       "the tensors cover 8 bytes of the data section but it holds 12 bytes"));
}

TEST_F(SerializeValidation, OffsetsOverlap) {
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12)), 12),
                       "tensor 'b' data_offsets [4, 12] overlap tensor 'a' [0, 8]"));
}

TEST_F(SerializeValidation, DuplicateNames) {
  EXPECT_TRUE(rejected(file_with(object(entry("a", "F32", "[2]", 0, 8) + "," + entry("a", "F32", "[2]", 8, 16)), 16),
                       "header names 'a' twice"));
}

TEST_F(SerializeValidation, MetadataNullIsNoMetadata) {
  // The Python package reads "__metadata__": null as none, so hwaro does too.
  const std::string path = dir_.file("null.safetensors");
  write_bytes(path, file_with(object(R"("__metadata__":null,)" + entry("a", "F32", "[2]", 0, 8)), 8));
  EXPECT_TRUE(load_metadata(path).empty());
  EXPECT_EQ(load(path).at("a").numel(), 2);
}

TEST_F(SerializeValidation, MetadataNotAnObjectOfStrings) {
  EXPECT_TRUE(rejected(file_with(object(R"("__metadata__":["x"])"), 0), "\"__metadata__\" is a JSON array"));
  EXPECT_TRUE(rejected(file_with(object(R"("__metadata__":{"epoch":7})"), 0),
                       "\"__metadata__\" value of 'epoch' is a JSON number, expected a string"));
}

TEST_F(SerializeValidation, BoolBytesOtherThanZeroOrOne) {
  std::string bytes = file_with(object(entry("m", "BOOL", "[3]", 0, 3)), 3);
  bytes[bytes.size() - 2] = 2;
  const std::string path = dir_.file("bool.safetensors");
  write_bytes(path, bytes);
  EXPECT_TRUE(throws_with<Error>([&] { load(path); }, path + ": tensor 'm' of BOOL holds byte 2 at element 1"));
}

TEST_F(SerializeValidation, MissingFileOrADirectory) {
  const std::string missing = dir_.file("missing.safetensors");
  EXPECT_TRUE(throws_with<Error>([&] { load(missing); }, missing + ": cannot open it for reading"));
  const std::string directory = dir_.file("");
  EXPECT_TRUE(throws_with<Error>([&] { load(directory); }, "is not a regular file"));
  // A named pipe is refused at once; opening it to read would wait for a writer that never comes.
  const std::string fifo = dir_.file("pipe.safetensors");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(throws_with<Error>([&] { load(fifo); }, fifo + ": is not a regular file"));
}

TEST_F(SerializeValidation, SaveRefusesWhatTheFormatCannotHold) {
  const std::string path = dir_.file("out.safetensors");
  const Tensor x = zeros({2});
  EXPECT_TRUE(throws_with<Error>([&] { save({{"__metadata__", x}}, path); }, "may not be named \"__metadata__\""));
  EXPECT_TRUE(throws_with<Error>([&] { save({{"w", Tensor()}}, path); }, "tensor 'w' is undefined"));
  EXPECT_TRUE(throws_with<Error>([&] { save({{"bad\xff", x}}, path); }, "is not valid UTF-8"));
  EXPECT_TRUE(throws_with<Error>([&] { save({{"w", x}}, path, {{"k", "bad\xc3"}}); }, "is not valid UTF-8"));
  // A header over the readers' limit would make a file that nothing, hw::load included, opens.
  EXPECT_TRUE(throws_with<Error>([&] { save({{"w", x}}, path, {{"history", std::string(100'000'000, 'x')}}); },
                                 "more than the 100000000 bytes safetensors readers accept; nothing was written"));
  EXPECT_EQ(dir_.entry_count(), 0u) << "nothing, not even a temporary file, is left behind";
}

}  // namespace
}  // namespace hwaro::test
