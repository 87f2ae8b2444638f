// hw::save is atomic: a write that fails midway, or a rename that fails, leaves the previous file
// byte-identical and no temporary file behind.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "serialize_test_files.h"
#include "support/test_support.h"

namespace hwaro::test {
namespace {

TEST(SerializeAtomic, AWriteFailingMidwayLeavesTheOldFileByteIdentical) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  save({{"w", random_tensor({4, 4}, kFloat32, rng)}}, path, {{"epoch", "1"}});
  const std::string before = read_bytes(path);

  // A file size limit makes write() fail with EFBIG partway through the 4 MB tensor (SIGXFSZ ignored).
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto result = throws_with<Error>(
      [&] { save({{"w", random_tensor({1024, 1024}, kFloat32, rng)}}, path, {{"epoch", "2"}}); }, "writing failed");
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(result);
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.entry_count(), 1u) << "the temporary file is removed";
  EXPECT_EQ(load_metadata(path).at("epoch"), "1");
}

TEST(SerializeAtomic, ARenameFailingLeavesNoTemporaryFile) {
  ScratchDir dir;
  const std::string target = dir.file("taken");
  std::filesystem::create_directory(target);
  write_bytes(dir.file("taken/inside"), "keep");
  EXPECT_TRUE(throws_with<Error>([&] { save({{"w", zeros({2})}}, target); }, "renaming"));
  EXPECT_EQ(read_bytes(dir.file("taken/inside")), "keep");
  EXPECT_EQ(dir.entry_count(), 1u) << "only the directory remains";
}

TEST(SerializeAtomic, ASuccessfulSaveReplacesTheFile) {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  save({{"w", zeros({2})}}, path, {{"epoch", "1"}});
  save({{"w", ones({3})}}, path, {{"epoch", "2"}});
  EXPECT_EQ(load_metadata(path).at("epoch"), "2");
  EXPECT_EQ(load(path).at("w").numel(), 3);
  EXPECT_EQ(dir.entry_count(), 1u);
}

}  // namespace
}  // namespace hwaro::test

namespace hwaro::test {
namespace {

TEST(SerializeAtomic, TheReplacementKeepsTheOldFilesPermissions) {
  ScratchDir dir;
  const std::string path = dir.file("private.safetensors");
  save({{"w", zeros({2})}}, path);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  save({{"w", ones({2})}}, path);
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u) << "a private checkpoint stays private";
}

TEST(SerializeAtomic, ANewFileGetsTheUmasksPermissions) {
  ScratchDir dir;
  const mode_t old_mask = ::umask(027);
  save({{"w", zeros({2})}}, dir.file("new.safetensors"));
  ::umask(old_mask);
  struct stat info {};
  ASSERT_EQ(::stat(dir.file("new.safetensors").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u) << "0666 less the umask, as for any file the program creates";
}

TEST(SerializeAtomic, ASymbolicLinkIsWrittenThroughNotReplaced) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("runs"));
  const std::string real = dir.file("runs/epoch-3.safetensors");
  save({{"w", zeros({2})}}, real);
  const std::string link = dir.file("latest.safetensors");
  std::filesystem::create_symlink("runs/epoch-3.safetensors", link);
  save({{"w", ones({5})}}, link);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(load(real).at("w").numel(), 5);
  EXPECT_EQ(dir.entry_count(), 2u) << "no temporary file left, in either directory";
  EXPECT_EQ(static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir.file("runs")), {})), 1u);
}

// A link whose target does not exist yet (a "latest" link made before the first save) gets its
// target written, as open(O_CREAT) would, and stays a link.
TEST(SerializeAtomic, ADanglingSymbolicLinkGetsItsTargetWritten) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("runs"));
  const std::string link = dir.file("latest.safetensors");
  std::filesystem::create_symlink("runs/next.safetensors", link);
  std::filesystem::create_symlink("../latest.safetensors", dir.file("runs/chained.safetensors"));
  save({{"w", ones({2})}}, dir.file("runs/chained.safetensors"));
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("runs/chained.safetensors")));
  EXPECT_EQ(load(dir.file("runs/next.safetensors")).at("w").numel(), 2);
}

TEST(SerializeAtomic, ANameNearTheLengthLimitStillSaves) {
  // "<name>.tmp-XXXXXX" would pass the 255-byte name limit; the temporary name is cut short instead.
  ScratchDir dir;
  const std::string path = dir.file(std::string(250, 'n') + ".st");
  save({{"w", ones({3})}}, path);
  EXPECT_EQ(load(path).at("w").numel(), 3);
  EXPECT_EQ(dir.entry_count(), 1u);
}

TEST(SerializeAtomic, WriteFileAtomicallyReplacesTextFiles) {
  ScratchDir dir;
  const std::string path = dir.file("metrics.jsonl");
  write_file_atomically(path, "{\"epoch\": 1}\n");
  write_file_atomically(path, "{\"epoch\": 1}\n{\"epoch\": 2}\n");
  EXPECT_EQ(read_bytes(path), "{\"epoch\": 1}\n{\"epoch\": 2}\n");
  EXPECT_EQ(dir.entry_count(), 1u);
  EXPECT_TRUE(throws_with<Error>([&] { write_file_atomically(dir.file("no/such/dir/x"), "x"); }, "no/such/dir/x"));
}

}  // namespace
}  // namespace hwaro::test
