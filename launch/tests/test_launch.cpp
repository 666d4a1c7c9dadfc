// launch.h: the place in a job from the launchers' variables (untrusted
// values refused with their name), launcher command lines and the command
// mri suggests instead.
#include "launch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace {

using mri::launch::find_program;
using mri::launch::job_place;
using mri::launch::launch_under;
using mri::launch::launcher_command;
using mri::launch::shell_quoted;

// An environment of its own for each test: nothing from the machine's.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  mri::launch::Lookup lookup() const {
    return [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

TEST(JobPlace, OutsideAJob) {
  FakeEnv env{{{"PATH", "/bin"}}};
  std::string problem;
  EXPECT_FALSE(job_place(&problem, env.lookup()));
  EXPECT_EQ(problem, "");
}

TEST(JobPlace, OpenMpi) {
  FakeEnv env{{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "16"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
               {"PMIX_RANK", "3"}}};
  const auto p = job_place(nullptr, env.lookup());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rank, 3);
  EXPECT_EQ(p->size, 16);
  EXPECT_EQ(p->local_rank, 1);
  EXPECT_EQ(p->launcher, "Open MPI");
}

TEST(JobPlace, PmixGivesNoSize) {
  FakeEnv env{{{"PMIX_RANK", "7"}}};
  const auto p = job_place(nullptr, env.lookup());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rank, 7);
  EXPECT_EQ(p->size, 0);
  EXPECT_EQ(p->local_rank, -1);
  EXPECT_EQ(p->launcher, "PMIx");
}

TEST(JobPlace, MpichAndSlurm) {
  FakeEnv mpich{{{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}};
  auto p = job_place(nullptr, mpich.lookup());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->launcher, "MPICH");
  EXPECT_EQ(p->size, 2);
  FakeEnv slurm{{{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_LOCALID", "0"}}};
  p = job_place(nullptr, slurm.lookup());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->launcher, "Slurm");
  EXPECT_EQ(p->rank, 5);
  EXPECT_EQ(p->local_rank, 0);
}

TEST(JobPlace, MalformedValuesAreNamedAndNotUsed) {
  const char* bad[] = {"", "x", "-1", "+1", " 1", "1 ", "0x10", "2147483648", "99999999999", "1e3"};
  for (const char* v : bad) {
    FakeEnv env{{{"OMPI_COMM_WORLD_RANK", v}, {"OMPI_COMM_WORLD_SIZE", "4"}}};
    std::string problem;
    EXPECT_FALSE(job_place(&problem, env.lookup())) << v;
    EXPECT_EQ(problem.rfind("OMPI_COMM_WORLD_RANK='", 0), 0u) << problem;
    EXPECT_NE(problem.find("is not a whole number from 0 to 2147483647"), std::string::npos) << problem;
  }
  FakeEnv size{{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "four"}}};
  std::string problem;
  EXPECT_FALSE(job_place(&problem, size.lookup()));
  EXPECT_EQ(problem, "OMPI_COMM_WORLD_SIZE='four' is not a whole number from 0 to 2147483647");
}

TEST(JobPlace, LongValuesAreCutInTheMessage) {
  FakeEnv env{{{"SLURM_PROCID", std::string(100000, '7') + "x"}}};
  std::string problem;
  EXPECT_FALSE(job_place(&problem, env.lookup()));
  EXPECT_EQ(problem, "SLURM_PROCID='" + std::string(32, '7') + "...' is not a whole number from 0 to 2147483647");
}

TEST(JobPlace, RankMustBeBelowSize) {
  FakeEnv env{{{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}}};
  std::string problem;
  EXPECT_FALSE(job_place(&problem, env.lookup()));
  EXPECT_EQ(problem, "OMPI_COMM_WORLD_RANK=4 is not below OMPI_COMM_WORLD_SIZE=4");
}

TEST(LauncherCommand, RecognisesLaunchersOnly) {
  for (const char* l : {"mpirun", "/usr/bin/mpiexec", "orterun", "mpirun.openmpi", "mpiexec.hydra", "srun", "prterun"})
    EXPECT_TRUE(launcher_command({l, "-np", "2", "/bin/true"})) << l;
  for (const char* l : {"./app", "mpirun2", "xsrun", "mpi", "/usr/bin/env"})
    EXPECT_FALSE(launcher_command({l, "-np", "2", "/bin/true"})) << l;
  EXPECT_FALSE(launcher_command({}));
}

TEST(LauncherCommand, FindsTheProgramAfterOptionsAndTheirValues) {
  auto c = launcher_command({"mpirun", "-np", "4", "--oversubscribe", "/bin/true", "-n", "3"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->name, "mpirun");
  EXPECT_EQ(c->program, 4u);
  c = launcher_command({"mpirun", "--mca", "btl", "self,vader", "-x", "A=1", "--map-by=ppr:1:node", "true"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->program, 7u);  // "true" on PATH
  c = launcher_command({"mpiexec", "-n", "2", "--", "/bin/true"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->program, 4u);
}

TEST(LauncherCommand, UnknownWhenTheWordAfterTheOptionsIsNoProgram) {
  // An option this component does not know, taking a value: "4" is no program.
  auto c = launcher_command({"mpirun", "--unknown-with-value", "4", "/bin/true"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->program, 0u);
  c = launcher_command({"mpirun", "-np", "4"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->program, 0u);
  c = launcher_command({"mpirun", "-np", "4", "/nonexistent/app"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->program, 0u);
}

// PATH set to directories of the test's own: a directory and a file that
// is not executable are passed over for the executable file after them.
TEST(FindProgram, SearchesPathAsTheLaunchDoes) {
  char tmpl[] = "/tmp/mri-find-program-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  for (const char* d : {"/a", "/b", "/c", "/a/prog"}) ASSERT_EQ(::mkdir((root + d).c_str(), 0700), 0);
  std::ofstream(root + "/b/prog") << "#!/bin/sh\n";
  ASSERT_EQ(::chmod((root + "/b/prog").c_str(), 0600), 0);
  std::ofstream(root + "/c/prog") << "#!/bin/sh\n";
  ASSERT_EQ(::chmod((root + "/c/prog").c_str(), 0700), 0);
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", (root + "/a:" + root + "/b:" + root + "/c").c_str(), 1);
  EXPECT_EQ(find_program("prog"), root + "/c/prog");
  EXPECT_EQ(find_program("absent"), "");
  EXPECT_EQ(find_program(""), "");
  EXPECT_EQ(find_program("./prog"), "./prog");  // a word with a slash is taken as it is
  if (old) ::setenv("PATH", saved.c_str(), 1);
  else ::unsetenv("PATH");
  for (const char* f : {"/b/prog", "/c/prog"}) ::unlink((root + f).c_str());
  for (const char* d : {"/a/prog", "/a", "/b", "/c", ""}) ::rmdir((root + d).c_str());
}

TEST(LaunchUnder, PutsMriBeforeTheProgram) {
  const std::vector<std::string> argv{"mpirun", "-np", "4", "/bin/true", "a b", "it's"};
  const auto c = launcher_command(argv);
  ASSERT_TRUE(c);
  EXPECT_EQ(launch_under(argv, *c, "mri profile --fit 2"),
            "mpirun -np 4 mri profile --fit 2 /bin/true 'a b' 'it'\\''s'");
  const std::vector<std::string> dashed{"mpiexec", "-n", "2", "--", "/bin/true"};
  EXPECT_EQ(launch_under(dashed, *launcher_command(dashed), "mri trace -o t.%r.otf2"),
            "mpiexec -n 2 mri trace -o t.%r.otf2 /bin/true");
  const std::vector<std::string> unknown{"srun", "--weird", "x"};
  EXPECT_EQ(launch_under(unknown, *launcher_command(unknown), "mri profile"),
            "srun [OPTIONS] mri profile PROGRAM [ARGS]");
}

TEST(ShellQuoted, QuotesOnlyWhatAShellWouldRead) {
  EXPECT_EQ(shell_quoted("prof.%r.out"), "prof.%r.out");
  EXPECT_EQ(shell_quoted(""), "''");
  EXPECT_EQ(shell_quoted("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quoted("a*"), "'a*'");
}

}  // namespace
