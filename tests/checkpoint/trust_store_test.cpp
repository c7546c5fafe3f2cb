// Trust (issue 40) rows 4 and 5: a checkpoint of the same name never leaves
// LATEST naming a missing folder (it goes in as the next generation, LATEST
// first, then the old one goes), and one run owns a checkpoint dir (DIR/LOCK;
// another live process's temporary folder is left alone, a dead one's is
// removed).
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint/cpr_files.hpp"
#include "checkpoint/dir_lock.hpp"
#include "checkpoint/model_files.hpp"
#include "checkpoint/store.hpp"

#include "tests/checkpoint/trust_fixture.hpp"

namespace fs = std::filesystem;
using namespace checkpoint;
using trust_test::trust_dir;

TEST_CASE("trust row 4: a checkpoint of the same name goes in under another name, LATEST first") {
  trust_dir d("row4");
  std::string err, first, second;
  auto commit_one = [&](float value, std::string* folder) {
    folder_writer w;
    REQUIRE(w.begin(d.str(), checkpoint_name(100), &err));
    std::vector<float> dense(5, value);
    REQUIRE(write_replica(w, 0, dense.data(), dense.data(), dense.size(), &err));
    manifest m;
    m.mode = "sequential";
    m.examples = 100;
    REQUIRE_MESSAGE(w.commit(m, 1, folder, &err), err);
  };
  commit_one(1.0f, &first);
  std::ifstream f0(d.str() + "/LATEST");
  std::string latest0;
  std::getline(f0, latest0);
  commit_one(2.0f, &second);
  std::ifstream f1(d.str() + "/LATEST");
  std::string latest1;
  std::getline(f1, latest1);
  // The new checkpoint is not written over the folder LATEST named: it has
  // a name of its own, LATEST switched to it, and the old one is gone after.
  CHECK(latest1 != latest0);
  CHECK(second != first);
  CHECK(!fs::exists(first));
  opened_checkpoint c;
  REQUIRE(!open_checkpoint(d.str(), c));
  CHECK(c.folder == second);
  CHECK(c.m.examples == 100);
  std::vector<replica_state> reps;
  REQUIRE(!load_replicas(c, 5, reps));
  CHECK(reps.at(0).params[0] == 2.0f);
  // A third at the same count, and a newer one: prune order stays by count,
  // then by generation; keep=1 keeps exactly what LATEST names.
  std::string third;
  commit_one(3.0f, &third);
  REQUIRE(!open_checkpoint(d.str(), c));
  CHECK(c.folder == third);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(d.p))
    if (e.is_directory())
      names.push_back(e.path().filename().string());
  CHECK(names.size() == 1);
}

TEST_CASE("trust row 5: a commit leaves another live process's temporary folder alone") {
  trust_dir d("row5");
  // A live process that is not this one: a child that waits.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::string other = d.str() + "/.tmp-ckpt-000000000050-" + std::to_string(child);
  const std::string dead = d.str() + "/.tmp-ckpt-000000000040-999999999"; // no such pid
  fs::create_directories(other);
  fs::create_directories(dead);
  std::ofstream(other + "/replica-0.bin") << "being written";
  folder_writer w;
  std::string err, folder;
  REQUIRE(w.begin(d.str(), checkpoint_name(60), &err));
  std::vector<float> dense(5, 1.0f);
  REQUIRE(write_replica(w, 0, dense.data(), dense.data(), dense.size(), &err));
  manifest m;
  m.mode = "sequential";
  REQUIRE_MESSAGE(w.commit(m, 1, &folder, &err), err);
  CHECK(fs::exists(other + "/replica-0.bin")); // a live owner's: kept
  CHECK(!fs::exists(dead));                    // a dead owner's: removed
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST_CASE("trust row 5: one process owns a checkpoint dir; a dead owner's dir is taken over") {
  trust_dir d("row5lock");
  const std::string dir = d.str() + "/ck";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) { // the owner
    const bool ok = !lock_checkpoint_dir(dir);
    const char c = ok ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  REQUIRE(c == 'y');
  auto e = lock_checkpoint_dir(dir);
  REQUIRE(e);
  CHECK(e->find("'" + dir + "' is in use by another run (pid " + std::to_string(child)) !=
        std::string::npos);
  folder_writer w;
  std::string err;
  CHECK(!w.begin(dir, checkpoint_name(1), &err)); // no writer without the lock
  CHECK(err.find("in use") != std::string::npos);
  CHECK(!fs::exists(dir + "/.tmp-" + checkpoint_name(1) + "-" + std::to_string(::getpid())));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  CHECK(!lock_checkpoint_dir(dir)); // the kernel dropped the dead owner's lock
  CHECK(!lock_checkpoint_dir(dir)); // and this process holds it: again is fine
  REQUIRE_MESSAGE(w.begin(dir, checkpoint_name(1), &err), err);
  w.abandon();
}

TEST_CASE("trust row 5: a CPR shard folder that another live process owns is refused") {
  trust_dir d("row5cpr");
  const std::string folder = d.str() + "/cpr/embedding-0";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) { // the shard of another job on the same checkpoint dir
    const char c = lock_checkpoint_dir(folder) ? 'n' : 'y';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  REQUIRE(c == 'y');
  const cpr_shape shape{2, 4, 2, 1, 0, 1};
  std::vector<float> w(16, 1.0f), a(8, 2.0f);
  std::string err;
  CHECK(!write_cpr_save(folder, shape, 0, 0, w.data(), a.data(), nullptr, nullptr, &err));
  CHECK(err.find("pid " + std::to_string(child)) != std::string::npos);
  CHECK(!fs::exists(folder + "/00000000.bin"));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  CHECK_MESSAGE(write_cpr_save(folder, shape, 0, 0, w.data(), a.data(), nullptr, nullptr, &err),
                err); // the dead owner's folder is taken over
}

TEST_CASE("trust row 5: a removed dir's lock is let go; the dir made again is locked again") {
  trust_dir d("row5gone");
  const std::string dir = d.str() + "/ck";
  REQUIRE(!lock_checkpoint_dir(dir));
  fs::remove_all(dir);
  REQUIRE(!lock_checkpoint_dir(dir)); // created and locked anew
  CHECK(fs::exists(dir + "/LOCK"));
  std::ifstream f(dir + "/LOCK");
  long pid = 0;
  f >> pid;
  CHECK(pid == long(::getpid()));
}
