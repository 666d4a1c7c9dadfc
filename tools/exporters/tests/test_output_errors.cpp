// Output errors of all writers: unusable paths, a full file system (a 64 KiB
// tmpfs in a private mount namespace, which needs CAP_SYS_ADMIN) and a file
// size limit (RLIMIT_FSIZE, for everyone). After a failure no file may exist
// at the final path, and no temporary file may be left behind.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "mri_export.h"
#include "test_helpers.h"

namespace mri::exporters {
namespace {

using testing::ScratchDir;

TEST(OutputErrors, MissingDirectory) {
  ScratchDir dir;
  const std::string missing = dir / "missing";
  std::string error;
  auto vtf3 = make_vtf3_writer();
  EXPECT_FALSE(vtf3->begin(missing + "/t.vtf", testing::sample_definitions(1), error));
  EXPECT_EQ(error, "cannot create a file in " + missing + ": No such file or directory");
  EXPECT_FALSE(write_callgrind(missing + "/callgrind.out", Profile{{}, {}, {"Ir"}, {}, {}, {}, {}}, error));
  EXPECT_EQ(error, "cannot create a file in " + missing + ": No such file or directory");
  if (otf2_supported()) {
    auto otf2 = make_otf2_writer();
    EXPECT_FALSE(otf2->begin(missing + "/t.otf2", testing::sample_definitions(1), error));
    EXPECT_EQ(error, "cannot write OTF2 archive into " + missing + ": No such file or directory");
  }
  EXPECT_TRUE(dir.entries().empty()) << "no directory may be created on the way";
}

TEST(OutputErrors, RegularFileUsedAsDirectory) {
  ScratchDir dir;
  { std::ofstream(dir / "plain") << "x"; }
  ::chmod((dir / "plain").c_str(), 0444);
  std::string error;
  auto vtf3 = make_vtf3_writer();
  EXPECT_FALSE(vtf3->begin(dir / "plain/t.vtf", testing::sample_definitions(1), error));
  EXPECT_EQ(error, "cannot create a file in " + (dir / "plain") + ": Not a directory");
  if (otf2_supported()) {
    auto otf2 = make_otf2_writer();
    EXPECT_FALSE(otf2->begin(dir / "plain/t.otf2", testing::sample_definitions(1), error));
    EXPECT_EQ(error, "cannot write OTF2 archive into " + (dir / "plain") + ": not a directory");
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"plain"});
}

TEST(OutputErrors, PathIsADirectory) {
  ScratchDir dir;
  ::mkdir((dir / "d").c_str(), 0755);
  std::string error;
  auto vtf3 = make_vtf3_writer();
  EXPECT_FALSE(vtf3->begin(dir / "d", testing::sample_definitions(1), error));
  EXPECT_EQ(error, "cannot write " + (dir / "d") + ": it exists and is not a regular file");
  EXPECT_FALSE(write_callgrind(dir / "d", Profile{{}, {}, {"Ir"}, {}, {}, {}, {}}, error));
  EXPECT_EQ(error, "cannot write " + (dir / "d") + ": it exists and is not a regular file");
}

// A symbolic link as the output path keeps pointing where it did: the file
// it names gets the output (a relative link into another directory, and a
// dangling one, which creates its file).
TEST(OutputPaths, SymbolicLinkKeepsPointingAtItsFile) {
  ScratchDir dir;
  ::mkdir((dir / "runs").c_str(), 0755);
  { std::ofstream(dir / "runs/old.out") << "old"; }
  ASSERT_EQ(::symlink("runs/old.out", (dir / "latest.out").c_str()), 0);
  ASSERT_EQ(::symlink("runs/new.vtf", (dir / "trace.vtf").c_str()), 0);
  std::string error;
  ASSERT_TRUE(write_callgrind(dir / "latest.out", Profile{{}, {}, {"Ir"}, {}, {}, {}, {}}, error)) << error;
  auto vtf3 = make_vtf3_writer();
  ASSERT_TRUE(vtf3->begin(dir / "trace.vtf", testing::sample_definitions(1), error)) << error;
  ASSERT_TRUE(vtf3->finish(error)) << error;
  struct stat st;
  for (const char* link : {"latest.out", "trace.vtf"}) {
    ASSERT_EQ(::lstat((dir / link).c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << link << " was replaced by a file";
  }
  std::ifstream in(dir / "runs/old.out");
  const std::string first((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(first.rfind("# callgrind format", 0), 0u) << "the link's file holds: " << first;
  ASSERT_EQ(::stat((dir / "runs/new.vtf").c_str(), &st), 0) << "the dangling link's file was not created";
  EXPECT_GT(st.st_size, 0);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"latest.out", "runs", "trace.vtf"}));
}

// A file that is replaced keeps its mode: a profile the user made private
// (0640) does not come back readable by everyone. A new file gets 0666
// less the umask.
TEST(OutputPaths, ReplacedFileKeepsItsMode) {
  ScratchDir dir;
  { std::ofstream(dir / "private.out") << "old"; }
  ASSERT_EQ(::chmod((dir / "private.out").c_str(), 0640), 0);
  std::string error;
  ASSERT_TRUE(write_callgrind(dir / "private.out", Profile{{}, {}, {"Ir"}, {}, {}, {}, {}}, error)) << error;
  auto vtf3 = make_vtf3_writer();
  ASSERT_TRUE(vtf3->begin(dir / "new.vtf", testing::sample_definitions(1), error)) << error;
  ASSERT_TRUE(vtf3->finish(error)) << error;
  struct stat st;
  ASSERT_EQ(::stat((dir / "private.out").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::stat((dir / "new.vtf").c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 07777, 0666u & ~mask);
}

// A name of 250 bytes is a valid file name (NAME_MAX is 255), but the
// temporary name ".<name>.tmp-XXXXXX" would not be: the writer then uses
// a short temporary name of its own, and leaves nothing else behind.
TEST(OutputPaths, LongestFileNamesAreWritten) {
  ScratchDir dir;
  const std::string name(250, 'a');
  std::string error;
  ASSERT_TRUE(write_callgrind(dir / name, Profile{{}, {}, {"Ir"}, {}, {}, {}, {}}, error)) << error;
  auto vtf3 = make_vtf3_writer();
  const std::string trace = std::string(251, 'b');
  ASSERT_TRUE(vtf3->begin(dir / trace, testing::sample_definitions(1), error)) << error;
  ASSERT_TRUE(vtf3->finish(error)) << error;
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{name, trace}));
}

// --- the writers against a failing file system ----------------------------

std::vector<TraceEvent> many_events(size_t count) {
  std::vector<TraceEvent> events;
  for (size_t i = 0; i < count; ++i) {
    events.push_back({1000 + i, 0, static_cast<uint32_t>((i / 2) % 3),
                      i % 2 == 0 ? EventKind::Enter : EventKind::Leave, 0, 0});
  }
  return events;
}

std::string leftovers(const std::string& dir) {
  std::string names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names += e.path().filename().string() + " ";
  return names;
}

// Writes `events` and finishes; the run must fail with `reason` and the
// final path in the message and leave `dir` empty. "" when it did.
std::string trace_fails(TraceWriter& w, const std::string& dir, const std::string& file,
                        const std::vector<TraceEvent>& events, const std::string& reason) {
  const std::string path = dir + "/" + file;
  std::string error;
  if (!w.begin(path, testing::sample_definitions(1), error)) return "begin failed: " + error;
  bool ok = true;
  for (size_t i = 0; ok && i < events.size(); i += 1000) {
    ok = w.write(events.data() + i, std::min<size_t>(1000, events.size() - i), error);
  }
  if (ok) ok = w.finish(error);
  if (ok) return "the writer did not notice the failure";
  if (error.find(reason) == std::string::npos) return "error without '" + reason + "': " + error;
  if (error.find(path) == std::string::npos) return "error without the path: " + error;
  std::string again;
  if (w.finish(again) || again != error) return "a failed writer must keep reporting its first error: " + again;
  if (!leftovers(dir).empty()) return "left behind: " + leftovers(dir);
  return "";
}

std::string callgrind_fails(const std::string& dir, const std::string& reason) {
  Profile p;
  p.events = {"Time_ns"};
  for (uint32_t i = 0; i < 20000; ++i) {
    p.regions.push_back(Region{i, "function_with_a_long_name_" + std::to_string(i), "file.c", int32_t(i), "ROUTINE"});
    p.functions.push_back(ProfileFunction{i, {i}});
  }
  const std::string path = dir + "/callgrind.out";
  std::string error;
  if (write_callgrind(path, p, error)) return "write_callgrind did not notice the failure";
  if (error.find(reason) == std::string::npos) return "error without '" + reason + "': " + error;
  if (error.find(path) == std::string::npos) return "error without the path: " + error;
  if (!leftovers(dir).empty()) return "left behind: " + leftovers(dir);
  return "";
}

// Every writer, one after the other, against the same broken directory.
std::string all_writers_fail(const std::string& dir, const std::string& reason) {
  const std::vector<TraceEvent> events = many_events(200000);  // ~4 MB of VTF3 text, ~2 MB of OTF2
  std::vector<std::string> problems;
  {
    auto w = make_vtf3_writer();
    if (auto p = trace_fails(*w, dir, "t.vtf", events, reason); !p.empty()) problems.push_back("VTF3: " + p);
  }
  {
    // A 16 KiB budget: the spill files hit the limit during write().
    auto w = make_vtf3_writer(16 << 10);
    if (auto p = trace_fails(*w, dir, "spill.vtf", events, reason); !p.empty()) problems.push_back("VTF3 spill: " + p);
  }
  if (auto p = callgrind_fails(dir, reason); !p.empty()) problems.push_back("callgrind: " + p);
  if (otf2_supported()) {
    auto w = make_otf2_writer();
    if (auto p = trace_fails(*w, dir, "t.otf2", events, reason); !p.empty()) problems.push_back("OTF2: " + p);
  }
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  return all;
}

TEST(OutputErrors, FullFileSystem) {
  ScratchDir scratch;
  const std::string dir = scratch / "tiny";
  ::mkdir(dir.c_str(), 0755);
  const std::string verdict = testing::run_in_child([&]() -> std::string {
    // Private mount namespace: the tmpfs is invisible outside this child
    // and disappears with it.
    if (::unshare(CLONE_NEWNS) != 0) return std::string("SKIP unshare(CLONE_NEWNS): ") + std::strerror(errno);
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return std::string("SKIP making mounts private: ") + std::strerror(errno);
    }
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755") != 0) {
      return std::string("SKIP mounting a 64 KiB tmpfs: ") + std::strerror(errno);
    }
    return all_writers_fail(dir, "No space left on device");
  });
  if (verdict.rfind("SKIP", 0) == 0) GTEST_SKIP() << verdict.substr(5) << " (needs CAP_SYS_ADMIN)";
  EXPECT_EQ(verdict, "");
}

TEST(OutputErrors, FileSizeLimit) {
  ScratchDir dir;
  const std::string verdict = testing::run_in_child([&]() -> std::string {
    // Writes past the limit fail with EFBIG once SIGXFSZ is ignored.
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 << 10, 64 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::string("setrlimit: ") + std::strerror(errno);
    return all_writers_fail(dir.path(), "File too large");
  });
  EXPECT_EQ(verdict, "");
}

TEST(OutputErrors, KilledWriterLeavesNothingUnderTheFinalName) {
  ScratchDir dir;
  testing::run_in_child([&]() -> std::string {
    const std::vector<TraceEvent> events = many_events(100000);
    std::string error;
    auto vtf3 = make_vtf3_writer(16 << 10);  // with spill files, too
    vtf3->begin(dir / "killed.vtf", testing::sample_definitions(1), error);
    vtf3->write(events.data(), events.size(), error);
    if (otf2_supported()) {
      auto otf2 = make_otf2_writer();
      otf2->begin(dir / "killed.otf2", testing::sample_definitions(1), error);
      otf2->write(events.data(), events.size(), error);
      ::raise(SIGKILL);  // no destructor, no cleanup
    }
    ::raise(SIGKILL);
    return "";
  });
  EXPECT_FALSE(testing::file_exists(dir / "killed.vtf"));
  EXPECT_FALSE(testing::file_exists(dir / "killed.otf2"));
  EXPECT_FALSE(testing::file_exists(dir / "killed.def"));
  EXPECT_FALSE(testing::file_exists(dir / "killed"));
  // What a kill leaves are the temporary names (hidden), not spill files:
  // one per writer, which also shows that the child got that far.
  EXPECT_EQ(dir.entries().size(), otf2_supported() ? 2u : 1u);
  for (const std::string& name : dir.entries()) {
    EXPECT_TRUE(name.rfind(".killed.vtf.tmp-", 0) == 0 || name.rfind(".killed.otf2-tmp-", 0) == 0) << name;
  }
}

// A writer killed meanwhile (SIGKILL, as above) leaves its temporary file;
// the next writer of the same output removes it, and only it: not one of
// a writer that lives (this process), nor one locked by a writer elsewhere
// (a pid namespace or host of its own), nor another output's, nor a name
// that does not say its writer's pid.
TEST(OutputPaths, StaleTemporariesOfTheOutputAreRemoved) {
  ScratchDir dir;
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const std::string stale = ".t.vtf.tmp-" + std::to_string(dead) + "-AbC123";
  const std::string live = ".t.vtf.tmp-" + std::to_string(::getpid()) + "-XyZ789";
  const std::string locked = ".t.vtf.tmp-" + std::to_string(dead) + "-LoCk00";
  const std::string other = ".u.vtf.tmp-" + std::to_string(dead) + "-QwE456";
  const std::string old_form = ".t.vtf.tmp-AbCdEf";
  for (const std::string& name : {stale, live, locked, other, old_form}) { std::ofstream(dir / name) << ""; }
  const int held = ::open((dir / locked).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  std::string error;
  auto vtf3 = make_vtf3_writer();
  ASSERT_TRUE(vtf3->begin(dir / "t.vtf", testing::sample_definitions(1), error)) << error;
  ASSERT_TRUE(vtf3->finish(error)) << error;
  ::close(held);
  std::vector<std::string> want{old_form, live, locked, other, "t.vtf"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(dir.entries(), want);
  // The callgrind writer (the same temporary files) alike.
  const std::string stale_profile = ".callgrind.out.tmp-" + std::to_string(dead) + "-ZZZ999";
  { std::ofstream(dir / stale_profile) << ""; }
  ASSERT_TRUE(write_callgrind(dir / "callgrind.out", Profile{{}, {}, {"Ir"}, {}, {}, {}, {}}, error)) << error;
  EXPECT_FALSE(testing::file_exists(dir / stale_profile));
}

}  // namespace
}  // namespace mri::exporters
