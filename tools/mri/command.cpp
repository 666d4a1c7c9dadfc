// The subcommands' common command-line handling on CLI11 (command.h).
#include "command.h"

#include "mpi_job.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

namespace mri::cli {

namespace {

// The command whose command line is being checked, for usage_error()'s
// hint: "mri profile", or "mri" before a command was named.
std::string g_current_command = "mri";

// Lines of `text`, each prefixed with `indent` after the first.
std::string indent_lines(const std::string& text, size_t indent) {
  std::string out;
  for (const char c : text) {
    out.push_back(c);
    if (c == '\n') out.append(indent, ' ');
  }
  return out;
}

// A command's usage: `head`, its name and its synopsis, the synopsis's
// further lines under its first.
std::string synopsis_lines(const std::string& head, const Command& command) {
  const std::string first = head + command.get_name();
  if (command.synopsis().empty()) return first + "\n";
  std::string out;
  for (size_t k = 0; k < command.synopsis().size(); ++k)
    out += (k ? std::string(first.size() + 1, ' ') : first + " ") + command.synopsis()[k] + "\n";
  return out;
}

// An option as the help names it: "-o, --output FILE", "--sort KEY", "--all".
std::string option_names(const Command& command, const CLI::Option& option) {
  std::string names;
  for (const auto& s : option.get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const auto& l : option.get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  if (command.takes_value(&option)) names += " " + option.get_type_name();
  return names;
}

// The help of one command: its usage (the synopsis), what it does, and
// every option with its description, in the order the command declares
// them (--help last).
class CommandHelp : public CLI::FormatterBase {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    const auto* command = dynamic_cast<const Command*>(app);
    if (!command) return "";
    std::ostringstream out;
    out << synopsis_lines("usage: mri ", *command);
    out << "\n" << command->summary() << "\n";
    std::vector<const CLI::Option*> options = command->get_options();
    // --help, which CLI11 declares first, last.
    std::stable_partition(options.begin(), options.end(),
                          [&](const CLI::Option* o) { return o != command->get_help_ptr(); });
    // The descriptions start in one column: after the longest name, up to
    // 24 columns (a longer name has its description after two blanks).
    size_t width = 0;
    for (const CLI::Option* o : options) width = std::max(width, option_names(*command, *o).size());
    const size_t column = 2 + std::min<size_t>(width, 24) + 2;
    out << "\noptions:\n";
    for (const CLI::Option* o : options) {
      const std::string names = option_names(*command, *o);
      std::string line = "  " + names;
      line.append(line.size() + 2 <= column ? column - line.size() : 2, ' ');
      out << line << indent_lines(o->get_description(), column) << "\n";
    }
    return out.str();
  }
};

}  // namespace

void usage_error(const std::string& message) {
  leave_unless_first_rank(2);  // said once for a job
  std::fprintf(stderr, "mri: %s\nTry '%s --help' for more information.\n", message.c_str(), g_current_command.c_str());
  std::exit(2);
}

bool whole_number(const std::string& v, unsigned long long max, unsigned long long& n) {
  const char* last = v.data() + v.size();
  const auto [end, ec] = std::from_chars(v.data(), last, n);
  return !v.empty() && ec == std::errc() && end == last && n <= max;
}

Command::Command(std::string name, std::vector<std::string> synopsis, std::string summary, bool takes_program)
    : CLI::App(summary, std::move(name)),
      synopsis_(std::move(synopsis)),
      summary_(std::move(summary)),
      takes_program_(takes_program) {
  set_help_flag("-h,--help", "print this help and exit");
  formatter(std::make_shared<CommandHelp>());
  // The first argument that is no option, and every one after it, are the
  // program's: left unparsed (remaining()), in their order.
  prefix_command();
}

CLI::Option* Command::add_value_option(CLI::Option* option, const std::string& value_name, ValueOption traits) {
  option->type_name(value_name);
  // One value per occurrence, never split: CLI11 otherwise reads "[a,b]" as
  // a list and lets a repeatable option take the words after it.
  option->allow_extra_args(false);
  option->multi_option_policy(traits.once ? CLI::MultiOptionPolicy::TakeLast : CLI::MultiOptionPolicy::TakeAll);
  values_[option] = std::move(traits);
  return option;
}

CLI::Option* Command::add_value(const std::string& names, std::string& value, const std::string& value_name,
                                const std::string& needs, const std::string& help) {
  return add_value_option(add_option(names, value, help), value_name, {needs, true, false});
}

CLI::Option* Command::add_file(const std::string& names, std::string& path, const std::string& value_name,
                               const std::string& help) {
  return add_value_option(add_option(names, path, help), value_name, {"a file name", true, true});
}

CLI::Option* Command::add_values(const std::string& names, std::vector<std::string>& values,
                                 const std::string& value_name, const std::string& needs, const std::string& help) {
  return add_value_option(add_option(names, values, help), value_name, {needs, false, false});
}

CLI::Option* Command::add_switch(const std::string& names, bool& on, const std::string& help) {
  return add_flag(names, on, help);
}

// The last argument is an option that takes a value (CLI11 found none for
// it): "mri: -o needs a file name", named as given.
void Command::value_missing(const std::vector<std::string>& args) {
  const std::string given = args.empty() ? "" : args.back().substr(0, args.back().find('='));
  const CLI::Option* option = given.empty() ? nullptr : get_option_no_throw(given);
  if (const auto it = values_.find(option); it != values_.end()) usage_error(given + " needs " + it->second.needs);
  usage_error(given.empty() ? "an option needs a value" : given + " needs a value");
}

// The values in the order given: an option given twice that takes one
// value, a value that is the "--" ending the options, an empty file name.
void Command::check_values(const std::vector<std::string>& args) {
  std::map<const CLI::Option*, size_t> occurrences;
  for (const CLI::Option* option : parse_order()) {
    const auto it = values_.find(option);
    if (it == values_.end()) continue;
    const ValueOption& traits = it->second;
    const size_t k = occurrences[option]++;
    // The name the help shows first: -o for -o and --output.
    const std::string shown =
        option->get_snames().empty() ? "--" + option->get_lnames().at(0) : "-" + option->get_snames()[0];
    if (traits.once && k == 1) usage_error(shown + " given twice: give it once");
    const std::string& value = option->results().at(k);
    if (value == "--") {
      // Named as given: the argument before the first "--".
      const auto mark = std::find(args.begin(), args.end(), "--");
      const std::string given =
          mark != args.begin() && mark != args.end() ? mark[-1].substr(0, mark[-1].find('=')) : shown;
      usage_error((option->check_name(given) ? given : shown) + " needs " + traits.needs);
    }
    if (traits.file && value.empty()) usage_error(shown + " '': an empty file name names no file");
  }
}

void Command::parse_command_line(const std::vector<std::string>& args) {
  g_current_command = "mri " + get_name();
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(help().c_str(), stdout);
    std::exit(0);
  } catch (const CLI::ArgumentMismatch&) {
    value_missing(args);
  } catch (const CLI::ParseError& e) {
    usage_error(e.what());
  }
  // What CLI11 left: options it does not know, then "--" and PROGRAM.
  const std::vector<std::string> rest = remaining();
  const bool option_first = !rest.empty() && rest[0] != "--" && rest[0].size() > 1 && rest[0][0] == '-';
  if (option_first) usage_error("unknown option '" + rest[0] + "'");
  check_values(args);
  if (!takes_program_) {
    if (!rest.empty()) usage_error(get_name() + " takes no argument: '" + rest[0] + "'");
    return;
  }
  program_args_.assign(rest.begin() + (!rest.empty() && rest[0] == "--" ? 1 : 0), rest.end());
  for (std::string& a : program_args_) program_argv_.push_back(a.data());
  if (!program_argv_.empty()) program_argv_.push_back(nullptr);
  // The command the user would type under a launcher: mri's own words as
  // given, without the "--" that ended them.
  std::string words = "mri " + get_name();
  size_t own = args.size() - program_args_.size();
  if (own > 0 && args[own - 1] == "--") --own;
  for (size_t k = 0; k < own; ++k) words += " " + mri::launch::shell_quoted(args[k]);
  check_not_launcher(program_args_, words);
}

std::string overall_help(const std::vector<const Command*>& commands) {
  std::ostringstream out;
  for (size_t c = 0; c < commands.size(); ++c) out << synopsis_lines(c ? "       mri " : "usage: mri ", *commands[c]);
  out << "       mri --help | --version\n\n";
  for (const Command* command : commands) {
    std::string name = command->get_name();
    name.resize(std::max<size_t>(name.size() + 2, 10), ' ');
    out << name << indent_lines(command->summary(), 10) << "\n";
  }
  out << "\n'mri COMMAND --help' explains the options of COMMAND.\n";
  return out.str();
}

}  // namespace mri::cli
