#pragma once
// Strict configuration options: an INI file plus command-line overrides.
//
// CAF 0.17 ignores unknown keys, drops values of the wrong type and ignores a
// missing config file (see CAF-0.17-NOTES.md, "Config"). option_set keeps
// CAF's conventions but parses them itself and rejects anything it does not
// understand, with a message naming the key, the value, the file and line, and
// what was expected. The validated values are later copied into a
// caf::actor_system_config by cluster/ and deploy/.
//
// Command line (the arguments after argv[0]):
//   --help | -h              help_requested() becomes true; nothing else is
//                            parsed or validated, so help works even with a
//                            broken config.
//   --config-file=PATH       read this INI file (at most once).
//   --group.key=VALUE        override; always wins over the file, whatever
//                            the order of the arguments.
//   --group.flag             booleans only: same as --group.flag=true.
//   A value is always attached with '='; "--key VALUE" is an error (for a
//   non-boolean "needs a value", and VALUE would be an unexpected argument).
//   Anything else (positional arguments, "-x", "--") is an error. An option
//   given twice on the command line is an error.
//
// INI file:
//   [group]  or  [group.sub]   keys below get the prefix "group." / "group.sub."
//   key = value                key may itself be dotted ("net.latency-ms")
//   ; comment  or  # comment   whole line; or trailing, after whitespace and
//                              outside quotes ("x = 1  ; one")
//   Blank lines, CRLF line ends and a UTF-8 BOM are accepted. A key before
//   any [group], an unknown group or key, and a key set twice in one file
//   are errors. A [group] may appear more than once.
//
// Values (the same syntax in the file, on the command line and in defaults):
//   boolean      true | false (exactly; no yes/no/on/off/1/0)
//   integer      [+-]digits, 64-bit signed; no fraction, exponent, hex or
//                suffixes (1.5, 1e6, 0x10, 1k are errors)
//   real         decimal or scientific (0.5, .5, 1e-3, -2); finite only
//   string       bare text (leading/trailing whitespace trimmed, must not
//                contain '"') or "double quoted" with escapes \" \\ \n \t \r
//   string_list  [a, b, c] or a, b, c; elements are strings as above (quote
//                one that contains a comma or bracket); "[]" or an empty
//                value is the empty list; an empty element ("a,,b") is an error
//
// Thread safety: none for add()/parse(); const members may be called
// concurrently once parsing is done.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace runtime {

enum class opt_type { boolean, integer, real, string, string_list };

// Ranges shared by the option definitions. Every option that sets a time ends
// up in CAF's nanosecond durations (int64: about 292 years), often added to
// the current time; these bounds keep any such sum far from overflow.
inline constexpr double max_timeout_ms = 86'400'000;  // a request timeout: one day
inline constexpr double max_pause_ms = 3'600'000;     // a pause between rounds: one hour
inline constexpr double max_duration_seconds = 1e9;   // intervals, MTBFs: 31.7 years, 1e18 ns

// Returns "boolean", "integer", "real", "string" or "list of strings".
const char* to_string(opt_type t);

// Build with {key, type, default, help} plus optional {choices} or
// {min, max}: the constructor (rather than aggregate init) keeps -Wextra
// quiet about the omitted trailing fields.
struct option_spec {
  option_spec() = default;
  option_spec(std::string key, opt_type type, std::string default_value, std::string help,
              std::vector<std::string> choices = {}, std::optional<double> min = {},
              std::optional<double> max = {})
      : key(std::move(key)), type(type), default_value(std::move(default_value)),
        help(std::move(help)), choices(std::move(choices)), min(min), max(max) {}

  std::string key;           // "group.name" or "group.sub.name"; each part
                             // kebab-case: [a-z0-9][a-z0-9-]*
  opt_type type = opt_type::string;
  std::string default_value; // textual, parsed like user input; must be valid
  std::string help;          // one line, shown in help_text() and effective_ini()
  std::vector<std::string> choices; // string / string_list only; empty = any
  std::optional<double> min;        // integer / real only; inclusive
  std::optional<double> max;        // integer / real only; inclusive
  // Left out of effective_ini() while it holds its default (reading the INI
  // back gives the same value): an option added later that must not change
  // the bytes of the configurations runs save (checkpoints carry them, and
  // their sizes are in the metrics the regression oracle hashes).
  bool omit_default_from_ini = false;
};

class option_set {
public:
  // Registers an option. Aborts (programmer error, also under NDEBUG) on a
  // malformed or duplicate key, on choices/min/max that do not fit the type,
  // or on a default value that does not parse or validate.
  void add(option_spec spec);

  // Parses `args` (without argv[0]): reads the INI file named by
  // --config-file first, then applies the command-line overrides. Returns
  // nullopt on success, else one error message (the first problem found).
  // On error the previously held values are left unchanged. May be called
  // again; each call starts from the defaults.
  std::optional<std::string> parse(const std::vector<std::string>& args);

  // Parses INI text as if it were the config file `name` (used in messages as
  // NAME:LINE), with no command line. Same rules and error handling as parse().
  std::optional<std::string> parse_text(const std::string& ini, const std::string& name);

  // Convenience: parse(argv[1] .. argv[argc-1]).
  std::optional<std::string> parse(int argc, const char* const* argv);

  // Sets `key` from `text` (the value syntax above) with `source` as its
  // source, unless the last parse() set it (file or command line): a layer
  // under them, such as a calibration file (config/calibration_file.hpp).
  // Returns an error naming the key, the value and `source` when the value
  // does not parse or is out of range (nothing changes then).
  std::optional<std::string> set_if_unset(const std::string& key, const std::string& text,
                                          const std::string& source);

  // Sets `key` from `text` whatever set it before (a value the program
  // derives, such as the cut a rollback resumes from); errors as above.
  std::optional<std::string> set(const std::string& key, const std::string& text,
                                 const std::string& source);

  // True if --help or -h was given in the last parse().
  bool help_requested() const { return help_requested_; }

  // The --config-file path of the last successful parse(), "" if none.
  const std::string& config_file() const { return config_file_; }

  // Typed getters. Abort on an unknown key or a type mismatch (programmer
  // error); there is no conversion between types.
  bool get_bool(const std::string& key) const;
  std::int64_t get_int(const std::string& key) const;
  double get_real(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  const std::vector<std::string>& get_list(const std::string& key) const;

  opt_type type(const std::string& key) const; // aborts on an unknown key
  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const; // in add() order

  // True if the value came from the file or the command line (even when it
  // equals the default).
  bool is_set(const std::string& key) const;

  // "default", "FILE:LINE" or "command line".
  std::string source(const std::string& key) const;

  // The current value in the canonical value syntax, e.g. 128, 0.01, true,
  // "adagrad", ["a", "b"]. Reals use the shortest text that reads back exactly.
  std::string value_text(const std::string& key) const;

  // Usage line, the general syntax, then every option grouped by section
  // (groups in order of first appearance), each with type, default, allowed
  // range or choices, and help.
  std::string help_text(const std::string& usage_line) const;

  // The configuration in use as an INI file: every option, each preceded by
  // a comment with its help, type, constraints and source. Reading it back
  // with --config-file gives the same values.
  std::string effective_ini() const;

private:
  using value = std::variant<bool, std::int64_t, double, std::string,
                             std::vector<std::string>>; // index == opt_type
  struct entry {
    option_spec spec;
    value def; // the parsed default_value
    value val;
    std::string source; // "default", "FILE:LINE" or "command line"
  };

  const entry& at(const std::string& key, opt_type expected) const;
  std::optional<std::string> read_file(const std::string& path,
                                       std::vector<entry>& out) const;
  std::optional<std::string> read_text(std::string_view text, const std::string& path,
                                       std::vector<entry>& out) const;
  std::string unknown_key(const std::string& key, const std::string& where) const;
  std::string unknown_group(const std::string& group, const std::string& where) const;
  std::vector<std::string> groups() const; // every prefix that names a group

  std::vector<entry> entries_;              // add() order
  std::map<std::string, std::size_t> index_; // key -> position in entries_
  bool help_requested_ = false;
  std::string config_file_;
};

} // namespace runtime
