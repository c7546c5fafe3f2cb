#include "config/options.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using runtime::opt_type;
using runtime::option_set;
using runtime::option_spec;

namespace {

namespace fs = std::filesystem;

// A uniquely named file under the temp directory, removed on destruction.
struct temp_file {
  fs::path path;
  explicit temp_file(const std::string& content) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("ss_options_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".ini");
    std::ofstream(path, std::ios::binary) << content;
  }
  ~temp_file() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  std::string arg() const { return "--config-file=" + path.string(); }
  std::string at(int line) const { return path.string() + ":" + std::to_string(line); }
};

option_set make_options() {
  option_set o;
  o.add({"train.batch-size", opt_type::integer, "128", "examples per mini-batch", {}, 1, 65536});
  o.add({"train.learning-rate", opt_type::real, "0.01", "step size", {}, 0.0, std::nullopt});
  o.add({"train.optimizer", opt_type::string, "adagrad", "update rule", {"sgd", "adagrad", "adam"}});
  o.add({"train.shuffle", opt_type::boolean, "false", "shuffle the input"});
  o.add({"data.path", opt_type::string, "", "input TSV file"});
  o.add({"data.columns", opt_type::string_list, "[label, i1, c1]", "columns to read"});
  o.add({"cluster.workers", opt_type::integer, "4", "worker actors", {}, 1, std::nullopt});
  o.add({"cluster.net.latency-ms", opt_type::real, "0.5", "simulated one-way latency"});
  o.add({"cluster.net.drop", opt_type::string_list, "", "messages to drop", {"pull", "push"}});
  return o;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Parses and returns the error message ("" on success).
std::string error_of(option_set& o, const std::vector<std::string>& args) {
  return o.parse(args).value_or("");
}

// Runs f in a forked child; true if the child died of SIGABRT (a failed
// programmer-error check, which stays active under NDEBUG).
template <class F>
bool aborts(F f) {
  std::fflush(nullptr); // or the child would write the parent's buffered output again
  pid_t pid = ::fork();
  if (pid == 0) {
    // Keep the expected message and doctest's crash report out of the log.
    std::signal(SIGABRT, SIG_DFL);
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    f();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

} // namespace

TEST_CASE("defaults are used when nothing is given") {
  auto o = make_options();
  REQUIRE_FALSE(o.parse({}));
  CHECK(o.get_int("train.batch-size") == 128);
  CHECK(o.get_real("train.learning-rate") == doctest::Approx(0.01));
  CHECK(o.get_string("train.optimizer") == "adagrad");
  CHECK_FALSE(o.get_bool("train.shuffle"));
  CHECK(o.get_string("data.path").empty());
  CHECK(o.get_list("data.columns") == std::vector<std::string>{"label", "i1", "c1"});
  CHECK(o.get_list("cluster.net.drop").empty());
  CHECK_FALSE(o.is_set("train.batch-size"));
  CHECK(o.source("train.batch-size") == "default");
  CHECK_FALSE(o.help_requested());
  CHECK(o.config_file().empty());
}

TEST_CASE("command line sets values; a bare boolean flag means true") {
  auto o = make_options();
  REQUIRE_FALSE(o.parse({"--train.batch-size=256", "--train.shuffle", "--train.learning-rate=1e-3",
                         "--data.columns=a,b", "--cluster.net.drop=[push]"}));
  CHECK(o.get_int("train.batch-size") == 256);
  CHECK(o.get_bool("train.shuffle"));
  CHECK(o.get_real("train.learning-rate") == 1e-3);
  CHECK(o.get_list("data.columns") == std::vector<std::string>{"a", "b"});
  CHECK(o.get_list("cluster.net.drop") == std::vector<std::string>{"push"});
  CHECK(o.source("train.batch-size") == "command line");
  CHECK(o.is_set("train.shuffle"));
  CHECK_FALSE(o.is_set("train.optimizer"));

  REQUIRE_FALSE(o.parse({"--train.shuffle=false"}));
  CHECK_FALSE(o.get_bool("train.shuffle"));
  CHECK(o.is_set("train.shuffle")); // set explicitly, although equal to the default
  CHECK(o.get_int("train.batch-size") == 128); // a new parse starts from the defaults
}

TEST_CASE("INI syntax: groups, nested groups, comments, quotes, lists, booleans") {
  temp_file f("\xEF\xBB\xBF; a comment after a UTF-8 byte order mark\r\n" // 1
              "# another comment\n"                                       // 2
              "\n"                                                        // 3
              "[train]\n"                                                 // 4
              "batch-size=64\n"                                           // 5
              "  learning-rate = 0.25   ; trailing comment\n"             // 6
              "shuffle = true # trailing hash comment\n"                  // 7
              "[data]\n"                                                  // 8
              "path = \"/tmp/a b;c#d \\\"q\\\" \\\\ end\"\n"                // 9
              "columns = [\"x, y\", z , \"[w]\"]\n"                        // 10
              "[ cluster.net ]\n"                                         // 11
              "latency-ms = -2.5e-1\n"                                    // 12
              "drop = pull, push\n"                                       // 13
              "[cluster]\n"                                               // 14
              "workers = +8\n"                                            // 15
              "[train]\n"                                                 // 16: again
              "optimizer = sgd");                                         // 17: no final newline
  auto o = make_options();
  REQUIRE(error_of(o, {f.arg()}) == "");
  CHECK(o.get_int("train.batch-size") == 64);
  CHECK(o.get_real("train.learning-rate") == 0.25);
  CHECK(o.get_bool("train.shuffle"));
  CHECK(o.get_string("data.path") == "/tmp/a b;c#d \"q\" \\ end");
  CHECK(o.get_list("data.columns") == std::vector<std::string>{"x, y", "z", "[w]"});
  CHECK(o.get_real("cluster.net.latency-ms") == -0.25);
  CHECK(o.get_list("cluster.net.drop") == std::vector<std::string>{"pull", "push"});
  CHECK(o.get_int("cluster.workers") == 8);
  CHECK(o.get_string("train.optimizer") == "sgd");
  CHECK(o.source("train.batch-size") == f.at(5));
  CHECK(o.source("train.optimizer") == f.at(17));
  CHECK(o.source("train.learning-rate") == f.at(6)); // the CRLF line counted once
  CHECK(o.config_file() == f.path.string());
}

TEST_CASE("a dotted key below a [group] names the same option as the nested group") {
  temp_file f("[cluster]\nnet.latency-ms = 3\nnet.drop = []\n");
  auto o = make_options();
  REQUIRE(error_of(o, {f.arg()}) == "");
  CHECK(o.get_real("cluster.net.latency-ms") == 3);
  CHECK(o.get_list("cluster.net.drop").empty());

  temp_file twice("[cluster.net]\ndrop = pull\n[cluster]\nnet.drop = push\n");
  auto err = error_of(o, {twice.arg()});
  CHECK(err == twice.at(4) + ": option 'cluster.net.drop' is set twice in the file (first at " +
                   twice.at(2) + ")");
}

TEST_CASE("the command line overrides the file, whatever the argument order") {
  temp_file f("[train]\nbatch-size = 64\noptimizer = adam\n");
  auto o = make_options();
  REQUIRE(error_of(o, {"--train.batch-size=32", f.arg()}) == "");
  CHECK(o.get_int("train.batch-size") == 32);
  CHECK(o.source("train.batch-size") == "command line");
  CHECK(o.get_string("train.optimizer") == "adam");
  CHECK(o.source("train.optimizer") == f.at(3));
}

TEST_CASE("unknown keys and groups are errors with a suggestion") {
  auto o = make_options();
  auto err = error_of(o, {"--train.batchsize=3"});
  CHECK(err == "unknown option 'train.batchsize' (command line); did you mean 'train.batch-size'?");
  // A bare name matches the key's last part.
  CHECK(contains(error_of(o, {"--batch-size=3"}), "did you mean 'train.batch-size'"));
  // Nothing close: list the group's keys, or the groups.
  err = error_of(o, {"--train.momentum=0.9"});
  CHECK(contains(err, "'train.momentum'"));
  CHECK(contains(err, "options in [train]: train.batch-size, train.learning-rate"));
  err = error_of(o, {"--verbose"});
  CHECK(contains(err, "unknown option 'verbose'"));
  CHECK(contains(err, "known groups: [train], [data], [cluster], [cluster.net]"));

  temp_file f("[train]\nbatch-size = 1\n\n[trian]\nshuffle = true\n");
  err = error_of(o, {f.arg()});
  CHECK(err == "unknown group '[trian]' (" + f.at(4) + "); did you mean '[train]'?");
  temp_file g("[train]\nbatchsize = 1\n");
  err = error_of(o, {g.arg()});
  CHECK(err == "unknown option 'train.batchsize' (" + g.at(2) + "); did you mean 'train.batch-size'?");
  temp_file h("[metrics]\nauc = true\n");
  err = error_of(o, {h.arg()});
  CHECK(contains(err, "unknown group '[metrics]'"));
  CHECK(contains(err, h.at(1)));
  CHECK(contains(err, "known groups: [train]"));
}

TEST_CASE("values of the wrong type are errors naming key, value, place and expectation") {
  auto o = make_options();
  temp_file f("[train]\n\nbatch-size = abc\n");
  CHECK(error_of(o, {f.arg()}) ==
        "option 'train.batch-size' = 'abc' (" + f.at(3) + "): expected an integer");
  // Integers are plain digits: no fraction, exponent or suffix.
  for (std::string bad : {"1.5", "1e6", "1k", "0x10", "", "+-3", "99999999999999999999"}) {
    auto err = error_of(o, {"--train.batch-size=" + bad});
    CAPTURE(bad);
    CHECK(contains(err, "option 'train.batch-size' = '" + bad + "' (command line): expected an integer"));
  }
  for (std::string bad : {"fast", "inf", "nan", "1e", "--1", "1e999"}) {
    CAPTURE(bad);
    CHECK(contains(error_of(o, {"--train.learning-rate=" + bad}), "expected a real number"));
  }
  for (std::string bad : {"yes", "1", "on", "True"}) {
    CAPTURE(bad);
    CHECK(contains(error_of(o, {"--train.shuffle=" + bad}),
                   "'" + bad + "' (command line): expected a boolean (true or false)"));
  }
  CHECK(contains(error_of(o, {"--data.path=\"open"}), "unterminated quoted string"));
  CHECK(contains(error_of(o, {"--data.path=a\"b"}), "must be quoted"));
  CHECK(contains(error_of(o, {"--data.path=\"a\\qb\""}), "unknown escape '\\q'"));
  CHECK(contains(error_of(o, {"--data.columns=[a, b"}), "must end with ']'"));
  CHECK(contains(error_of(o, {"--data.columns=a,,b"}), "empty list element"));
  CHECK(contains(error_of(o, {"--data.columns=a,b]"}), "unbalanced"));
  CHECK(contains(error_of(o, {"--train.batch-size"}),
                 "option 'train.batch-size' (command line) needs a value: use --train.batch-size=<integer>"));
}

TEST_CASE("range and choice violations name the allowed values") {
  auto o = make_options();
  CHECK(error_of(o, {"--train.batch-size=0"}) ==
        "option 'train.batch-size' = '0' (command line): out of range, expected an integer in [1, 65536]");
  CHECK(contains(error_of(o, {"--train.learning-rate=-0.1"}), "expected a real number >= 0"));
  CHECK(contains(error_of(o, {"--cluster.workers=0"}), ">= 1"));
  temp_file f("[train]\noptimizer = adamw ; typo\n");
  CHECK(error_of(o, {f.arg()}) == "option 'train.optimizer' = 'adamw' (" + f.at(2) +
                                      "): expected one of: sgd, adagrad, adam");
  CHECK(contains(error_of(o, {"--cluster.net.drop=pull,shard"}),
                 "element 'shard' is not allowed, expected each element to be one of: pull, push"));
  // Boundaries are inclusive.
  CHECK(error_of(o, {"--train.batch-size=65536", "--train.learning-rate=0"}) == "");
}

TEST_CASE("malformed files: bad lines, keys outside a section, duplicates") {
  auto o = make_options();
  temp_file bad("[train]\nbatch-size 12\n");
  CHECK(error_of(o, {bad.arg()}) ==
        bad.at(2) + ": expected 'key = value', '[group]' or a comment, got 'batch-size 12'");
  temp_file bad_header("[train\n");
  CHECK(contains(error_of(o, {bad_header.arg()}), bad_header.at(1) + ": expected 'key = value'"));
  temp_file bad_key("[train]\n= 3\n");
  CHECK(contains(error_of(o, {bad_key.arg()}), bad_key.at(2) + ": expected 'key = value'"));
  temp_file outside("; no header yet\nbatch-size = 12\n[train]\n");
  CHECK(error_of(o, {outside.arg()}) ==
        outside.at(2) + ": option 'batch-size' is outside any [group] section; did you mean "
                        "'train.batch-size' (under [train])?");
  temp_file twice("[train]\nbatch-size = 1\nshuffle = true\nbatch-size = 2\n");
  CHECK(error_of(o, {twice.arg()}) == twice.at(4) + ": option 'train.batch-size' is set twice "
                                                    "in the file (first at " + twice.at(2) + ")");
}

TEST_CASE("config file problems") {
  auto o = make_options();
  CHECK(error_of(o, {"--config-file=/nonexistent/x.ini"}) ==
        "cannot read config file '/nonexistent/x.ini': No such file or directory");
  auto dir = fs::temp_directory_path().string();
  CHECK(error_of(o, {"--config-file=" + dir}) ==
        "cannot read config file '" + dir + "': Is a directory");
  CHECK(contains(error_of(o, {"--config-file"}), "needs a path"));
  CHECK(contains(error_of(o, {"--config-file="}), "needs a path"));
  temp_file f("[train]\n");
  CHECK(contains(error_of(o, {f.arg(), f.arg()}), "given twice"));
  temp_file empty("");
  CHECK(error_of(o, {empty.arg()}) == "");
}

TEST_CASE("positional and malformed arguments are errors") {
  auto o = make_options();
  CHECK(contains(error_of(o, {"--train.shuffle", "train.ini"}), "unexpected argument 'train.ini'"));
  CHECK(contains(error_of(o, {"-v"}), "unexpected argument '-v'"));
  CHECK(contains(error_of(o, {"--"}), "unexpected argument '--'"));
  // "--key VALUE" is not supported: the value is an unexpected argument.
  CHECK(contains(error_of(o, {"--train.optimizer", "sgd"}), "needs a value"));
  CHECK(contains(error_of(o, {"--train.shuffle", "true"}), "unexpected argument 'true'"));
  CHECK(contains(error_of(o, {"--train.shuffle", "--train.shuffle=false"}),
                 "option 'train.shuffle' is given twice on the command line"));
}

TEST_CASE("a failed parse keeps the previous values") {
  auto o = make_options();
  REQUIRE(error_of(o, {"--train.batch-size=7"}) == "");
  REQUIRE(error_of(o, {"--train.batch-size=9", "--bogus=1"}) != "");
  CHECK(o.get_int("train.batch-size") == 7);
}

TEST_CASE("--help and -h request help without validating anything else") {
  auto o = make_options();
  CHECK(error_of(o, {"--bogus", "--help"}) == "");
  CHECK(o.help_requested());
  CHECK(error_of(o, {"-h", "--config-file=/nonexistent.ini"}) == "");
  CHECK(o.help_requested());
  REQUIRE(error_of(o, {}) == "");
  CHECK_FALSE(o.help_requested());
}

TEST_CASE("help text lists every key with type, default, constraints and help") {
  auto o = make_options();
  auto help = o.help_text("usage: shadowsync [options]");
  CHECK(help.rfind("usage: shadowsync [options]\n", 0) == 0);
  for (const auto& key : o.keys())
    CHECK(contains(help, "--" + key + "="));
  CHECK(contains(help, "--config-file=PATH"));
  CHECK(contains(help, "[cluster.net]"));
  CHECK(contains(help, "--train.batch-size=<integer>  (default: 128; in [1, 65536])\n"
                       "      examples per mini-batch"));
  CHECK(contains(help, "(default: \"adagrad\"; one of: sgd, adagrad, adam)"));
  CHECK(contains(help, "--data.columns=<list of strings>  (default: [\"label\", \"i1\", \"c1\"])"));
}

TEST_CASE("effective_ini reads back to the same values") {
  auto o = make_options();
  temp_file f("[train]\nbatch-size = 77\n[data]\npath = \" lead;ing # \\\"x\\\\y\"\n");
  REQUIRE(error_of(o, {f.arg(), "--train.learning-rate=0.1", "--train.shuffle",
                       "--data.columns=[\"a,b\", c, \"\"]", "--cluster.net.latency-ms=1e-300",
                       "--data.path=tab\there"}) == "");
  auto ini = o.effective_ini();
  CHECK(contains(ini, "; examples per mini-batch\n; integer, in [1, 65536], default 128, from " +
                          f.at(2) + "\nbatch-size = 77\n"));
  CHECK(contains(ini, "from command line\nshuffle = true\n"));

  temp_file saved(ini);
  auto again = make_options();
  REQUIRE(error_of(again, {saved.arg()}) == "");
  for (const auto& key : o.keys()) {
    CAPTURE(key);
    CHECK(again.value_text(key) == o.value_text(key));
    CHECK(again.source(key).rfind(saved.path.string() + ":", 0) == 0); // every key is written
  }
  CHECK(again.get_real("train.learning-rate") == o.get_real("train.learning-rate")); // exact
  CHECK(again.get_real("cluster.net.latency-ms") == 1e-300);
  CHECK(again.get_string("data.path") == "tab\there");
  CHECK(again.get_list("data.columns") == std::vector<std::string>{"a,b", "c", ""});
  CHECK(again.effective_ini().find("[cluster.net]") != std::string::npos);
}

TEST_CASE("parse(argc, argv) skips the program name") {
  auto o = make_options();
  const char* argv[] = {"shadowsync", "--cluster.workers=2"};
  REQUIRE_FALSE(o.parse(2, argv));
  CHECK(o.get_int("cluster.workers") == 2);
  CHECK(o.type("cluster.workers") == opt_type::integer);
  CHECK(o.contains("cluster.workers"));
  CHECK_FALSE(o.contains("cluster"));
}

TEST_CASE("programmer errors abort: bad specs, unknown keys, wrong getter") {
  CHECK_FALSE(aborts([] { make_options(); })); // the helper can tell
  CHECK(aborts([] { make_options().add({"train.shuffle", opt_type::boolean, "true", "again"}); }));
  CHECK(aborts([] { option_set().add({"train.x", opt_type::integer, "abc", "bad default"}); }));
  CHECK(aborts([] { option_set().add({"train.x", opt_type::integer, "0", "", {}, 1, 9}); }));
  CHECK(aborts([] { option_set().add({"train.x", opt_type::string, "c", "", {"a", "b"}}); }));
  CHECK(aborts([] { option_set().add({"nodot", opt_type::boolean, "true", ""}); }));
  CHECK(aborts([] { option_set().add({"Train.x", opt_type::boolean, "true", ""}); }));
  CHECK(aborts([] { option_set().add({"train.x", opt_type::integer, "1", "", {"1"}}); }));
  CHECK(aborts([] { option_set().add({"train.x", opt_type::string, "", "", {}, 0.0}); }));
  CHECK(aborts([] { make_options().get_int("train.optimizer"); }));
  CHECK(aborts([] { make_options().get_bool("train.nope"); }));
  CHECK(aborts([] { make_options().source("train.nope"); }));
}

TEST_CASE("parse_text: INI text under a name, same rules as a file, defaults otherwise") {
  auto o = make_options();
  REQUIRE_FALSE(o.parse({"--train.batch-size=7"}));
  REQUIRE_FALSE(o.parse_text("[train]\noptimizer = \"sgd\"\n", "plan"));
  CHECK(o.get_string("train.optimizer") == "sgd");
  CHECK(o.source("train.optimizer") == "plan:2");
  CHECK(o.get_int("train.batch-size") == 128); // the earlier command line is gone
  auto err = o.parse_text("[train]\nbatch-size = many\n", "plan");
  REQUIRE(err);
  CHECK(err->find("plan:2") != std::string::npos);
  CHECK(o.get_string("train.optimizer") == "sgd"); // a failed parse keeps the values
}
