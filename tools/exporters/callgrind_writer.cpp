// Callgrind profile writer (Callgrind Format Specification, version 1, from
// the Valgrind documentation; details in docs/formats.md).
#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "atomic_file.h"
#include "mri_export.h"
#include "text.h"

namespace mri::exporters {
namespace {

// The caller of calls from outside the profile (ProfileCall::caller == kNoCaller).
constexpr char kRootFunction[] = "(outside any region)";

bool is_event_name(const std::string& name) {
  // The specification's Name is a letter followed by letters and digits;
  // we also allow '_' (PAPI event names), which callgrind_annotate and
  // KCachegrind read as part of the name (they split on blanks).
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool has_line_break(const std::string& s) { return s.find_first_of("\r\n") != std::string::npos; }

std::string sum_line(const std::vector<uint64_t>& totals) {
  std::string line;
  for (size_t i = 0; i < totals.size(); ++i) {
    if (i) line += ' ';
    detail::append_u64(line, totals[i]);
  }
  return line;
}

class CallgrindWriter {
 public:
  explicit CallgrindWriter(const Profile& p) : p_(p) {}

  bool validate(std::string& error) {
    if (p_.events.empty()) {
      error = "a callgrind profile needs at least one event";
      return false;
    }
    for (const std::string& e : p_.events) {
      if (!is_event_name(e)) {
        error = "invalid callgrind event name '" + e + "' (a letter, then letters, digits or '_')";
        return false;
      }
    }
    if (!p_.event_descriptions.empty() && p_.event_descriptions.size() != p_.events.size()) {
      error = "event_descriptions must be empty or have one entry per event (" + std::to_string(p_.events.size()) + ")";
      return false;
    }
    for (const std::string& d : p_.event_descriptions) {
      if (has_line_break(d)) {
        error = "event description contains a line break: '" + d + "'";
        return false;
      }
    }
    if (has_line_break(p_.command) || has_line_break(p_.program)) {
      error = "program or command contains a line break";
      return false;
    }
    for (const Region& r : p_.regions) {
      if (r.id == kNoCaller) {
        error = "region id " + std::to_string(kNoCaller) + " is reserved (kNoCaller)";
        return false;
      }
      if (has_line_break(r.name) || has_line_break(r.file)) {
        error = "region " + std::to_string(r.id) + ": name or file contains a line break";
        return false;
      }
      if (!regions_.emplace(r.id, &r).second) {
        error = "region " + std::to_string(r.id) + " is listed twice";
        return false;
      }
    }
    for (const ProfileFunction& f : p_.functions) {
      if (!regions_.count(f.region)) {
        error = "function for undefined region " + std::to_string(f.region);
        return false;
      }
      if (f.self.size() != p_.events.size()) {
        error = "function " + std::to_string(f.region) + " has " + std::to_string(f.self.size()) +
                " self costs for " + std::to_string(p_.events.size()) + " events";
        return false;
      }
      if (!self_.emplace(f.region, &f).second) {
        error = "region " + std::to_string(f.region) + " has two function entries";
        return false;
      }
    }
    for (const ProfileCall& c : p_.calls) {
      const std::string edge = "call " + (c.caller == kNoCaller ? std::string("(outside)") : std::to_string(c.caller)) +
                               " -> " + std::to_string(c.callee);
      if ((c.caller != kNoCaller && !regions_.count(c.caller)) || !regions_.count(c.callee)) {
        error = edge + " refers to an undefined region";
        return false;
      }
      if (c.inclusive.size() != p_.events.size()) {
        error = edge + " has " + std::to_string(c.inclusive.size()) + " inclusive costs for " +
                std::to_string(p_.events.size()) + " events";
        return false;
      }
      // callgrind_annotate reads the cost line after "calls=0" as self cost.
      if (c.calls == 0) {
        error = edge + " has 0 calls (callgrind readers would count its cost as self cost)";
        return false;
      }
      if (c.caller != kNoCaller) {
        calls_of_[c.caller].push_back(&c);
      } else {
        root_calls_.push_back(&c);
      }
    }
    return true;
  }

  void write(detail::AtomicFile& out) {
    std::vector<uint64_t> totals(p_.events.size(), 0);
    for (const ProfileFunction& f : p_.functions)
      for (size_t i = 0; i < totals.size(); ++i) totals[i] += f.self[i];

    std::string s = "# callgrind format\nversion: 1\ncreator: MRI exporters\n";
    if (!p_.program.empty()) s += "# program: " + p_.program + "\n";
    if (!p_.command.empty()) s += "cmd: " + p_.command + "\n";
    s += "positions: line\n";
    for (size_t i = 0; i < p_.event_descriptions.size(); ++i) {
      if (!p_.event_descriptions[i].empty()) s += "event: " + p_.events[i] + " : " + p_.event_descriptions[i] + "\n";
    }
    // callgrind_annotate reads "events:" as the last header line.
    s += "events:";
    for (const std::string& e : p_.events) s += " " + e;
    s += "\nsummary: " + sum_line(totals) + "\n";
    out.write(s);

    // Calls from outside the profile (a thread's outermost regions) come
    // from one function without cost of its own. Without it, readers would
    // take the inclusive cost of a region that is also a root elsewhere
    // (a worker thread's outermost loop) from its other callers only.
    if (!root_calls_.empty()) {
      const Region root{kNoCaller, kRootFunction, "", 0, ""};
      out.write(function_block(root, nullptr, root_calls_));
    }
    // Functions: every region with self cost or outgoing calls, in id order.
    std::map<uint32_t, const Region*> functions;
    for (const auto& [id, f] : self_) functions.emplace(id, regions_.at(id));
    for (const auto& [caller, calls] : calls_of_) functions.emplace(caller, regions_.at(caller));
    static const std::vector<const ProfileCall*> kNone;
    for (const auto& [id, region] : functions) {
      const auto self = self_.find(id);
      const auto calls = calls_of_.find(id);
      out.write(function_block(*region, self == self_.end() ? nullptr : self->second,
                               calls == calls_of_.end() ? kNone : calls->second));
    }
    out.write("\ntotals: " + sum_line(totals) + "\n");
  }


 private:
  static std::string line_of(const Region& r) { return std::to_string(r.line > 0 ? r.line : 0); }

  // "fl=", "fn=", the self cost line, then one "cfi= cfn= calls=" group per call.
  std::string function_block(const Region& region, const ProfileFunction* self,
                             const std::vector<const ProfileCall*>& calls) {
    std::string s = "\n";
    s += "fl=" + file_ref(region) + "\n";
    s += "fn=" + function_ref(region) + "\n";
    const std::string line = line_of(region);
    if (self != nullptr) s += line + " " + sum_line(self->self) + "\n";
    for (const ProfileCall* c : calls) {
      const Region& callee = *regions_.at(c->callee);
      // cfi= always: callgrind_annotate forgets it after each cfn=.
      s += "cfi=" + file_ref(callee) + "\n";
      s += "cfn=" + function_ref(callee) + "\n";
      s += "calls=";
      detail::append_u64(s, c->calls);
      s += " " + line_of(callee) + "\n";
      s += line + " " + sum_line(c->inclusive) + "\n";
    }
    return s;
  }

  // Name compression: "(id) name" the first time, "(id)" afterwards.
  std::string file_ref(const Region& r) {
    const std::string& file = r.file.empty() ? unknown_file_ : r.file;
    const auto [it, added] = file_ids_.emplace(file, file_ids_.size() + 1);
    return "(" + std::to_string(it->second) + ")" + (added ? " " + file : "");
  }

  std::string function_ref(const Region& r) {
    const auto [it, added] = function_ids_.emplace(r.id, function_ids_.size() + 1);
    return "(" + std::to_string(it->second) + ")" + (added ? " " + function_name(r) : "");
  }

  // Readers key functions by file and name; regions that share both (two
  // loops called "time step" in one file) get their line appended so that
  // their costs stay apart.
  std::string function_name(const Region& r) {
    if (name_counts_.empty()) {
      for (const Region& other : p_.regions) ++name_counts_[{other.file, other.name}];
    }
    if (name_counts_[{r.file, r.name}] > 1) return r.name + " [line " + std::to_string(r.line) + "]";
    return r.name;
  }

  const Profile& p_;
  const std::string unknown_file_ = "???";
  std::unordered_map<uint32_t, const Region*> regions_;
  std::unordered_map<uint32_t, const ProfileFunction*> self_;
  std::map<uint32_t, std::vector<const ProfileCall*>> calls_of_;
  std::vector<const ProfileCall*> root_calls_;  // caller kNoCaller
  std::unordered_map<std::string, size_t> file_ids_;
  std::unordered_map<uint32_t, size_t> function_ids_;
  std::map<std::pair<std::string, std::string>, int> name_counts_;
};

}  // namespace

bool write_callgrind(const std::string& path, const Profile& profile, std::string& error) {
  CallgrindWriter writer(profile);
  if (!writer.validate(error)) return false;
  detail::AtomicFile out;
  if (!out.open(path, error)) return false;
  writer.write(out);
  return out.commit(error);
}

}  // namespace mri::exporters
