// A subcommand of `mri` (profile, trace, hist, regions, info) and the
// command-line conventions they all follow, on CLI11:
//
//   - `--opt value` and `--opt=value` (`-o value`, `-ovalue`); a flag takes
//     no value (or yes/no, true/false, 1/0);
//   - the options end at `--` or at the first argument that is not an
//     option: that argument is PROGRAM, and it and everything after it are
//     the program's command line, untouched (also `--`, or words that look
//     like mri's options);
//   - `mri COMMAND --help` (-h): the command's usage and options on stdout,
//     status 0;
//   - a usage error (an unknown option, an option without its value, a
//     value that is refused, a single-valued option given twice): one line
//     "mri: ..." naming the option, then a hint to `mri COMMAND --help`, on
//     stderr, status 2 (usage_error()).
//
// An option's value is never the `--` that ends the options: `-o -- PROGRAM`
// is an error naming -o, not a file named "--" and a program run without
// its name.
//
// Thread safety: none needed: mri parses its command line on its main
// thread before anything else runs; usage_error() ends the process.
#pragma once

#include <CLI/CLI.hpp>

#include "usage.h"

#include <map>
#include <string>
#include <vector>

namespace mri::cli {

// One subcommand: its options (declared by the subclass's constructor with
// the add_*() helpers, bound to its members), its synopsis and summary for
// the help, and run(). main() hands it the arguments after its name
// (parse_command_line()), then calls run().
class Command : public CLI::App {
 public:
  // `synopsis`: the command's arguments after "mri NAME", one string per
  // line of the usage. `summary`: what it does, in lines of at most about
  // 80 columns. `takes_program`: whether it runs a PROGRAM given after its
  // options.
  Command(std::string name, std::vector<std::string> synopsis, std::string summary, bool takes_program);

  // Parses the command's arguments (those after its name) into the bound
  // members and PROGRAM. --help prints the help and ends mri with status 0;
  // anything the conventions above refuse is a usage_error() (status 2).
  // The subclass's own checks of the values come after, in run().
  void parse_command_line(const std::vector<std::string>& args);

  // Runs the command; returns mri's exit status. Errors end mri (status 1
  // when an MRI call fails, 2 on a usage error).
  virtual int run() = 0;

  const std::vector<std::string>& synopsis() const { return synopsis_; }
  const std::string& summary() const { return summary_; }

  // The value name (FILE, EVENT) and whether `option` takes a value, for
  // the help.
  bool takes_value(const CLI::Option* option) const { return values_.count(option) != 0; }

 protected:
  // An option with one value, given at most once (a second one is a usage
  // error, rather than the last one winning silently). `value_name` shows
  // in the help (-o FILE); `needs` completes "mri: -o needs ..." when the
  // value is missing.
  CLI::Option* add_value(const std::string& names, std::string& value, const std::string& value_name,
                         const std::string& needs, const std::string& help);
  // add_value() of a file name: an empty one is a usage error (it names no
  // file).
  CLI::Option* add_file(const std::string& names, std::string& path, const std::string& value_name,
                        const std::string& help);
  // An option with one value each time it is given, repeatable.
  CLI::Option* add_values(const std::string& names, std::vector<std::string>& values, const std::string& value_name,
                          const std::string& needs, const std::string& help);
  // An option without a value.
  CLI::Option* add_switch(const std::string& names, bool& on, const std::string& help);

  // PROGRAM and its arguments as the program's argv (null-terminated), or
  // nullptr when none was given.
  char** program() { return program_argv_.empty() ? nullptr : program_argv_.data(); }

 private:
  struct ValueOption {
    std::string needs;  // "a file name": what a missing value is said to be
    bool once = true;   // a second occurrence is a usage error
    bool file = false;  // an empty value is a usage error
  };
  CLI::Option* add_value_option(CLI::Option* option, const std::string& value_name, ValueOption traits);
  [[noreturn]] void value_missing(const std::vector<std::string>& args);
  void check_values(const std::vector<std::string>& args);

  std::vector<std::string> synopsis_;
  std::string summary_;
  bool takes_program_;
  std::map<const CLI::Option*, ValueOption> values_;
  std::vector<std::string> program_args_;
  std::vector<char*> program_argv_;
};

// The help of `mri --help`: every command's synopsis and summary.
std::string overall_help(const std::vector<const Command*>& commands);

}  // namespace mri::cli
