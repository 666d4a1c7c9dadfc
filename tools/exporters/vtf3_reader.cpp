// VTF3 ASCII reader for the records the VTF3 writer produces (syntax in
// docs/formats.md). Strict: an unknown record, a malformed field, a
// reference to something not defined yet or a time going backwards is an
// error that names the line.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "mri_export.h"
#include "vtf3_records.h"

namespace mri::exporters {
namespace {

namespace r = detail::vtf3;

class ParseError {
 public:
  explicit ParseError(std::string message) : message(std::move(message)) {}
  std::string message;
};

// Tokens of one line.
class LineScanner {
 public:
  explicit LineScanner(std::string_view line) : rest_(line) {}

  bool at_end() {
    skip_blanks();
    return rest_.empty();
  }

  std::string_view word(const char* what) {
    skip_blanks();
    if (rest_.empty()) throw ParseError(std::string("missing ") + what);
    if (rest_.front() == '"') throw ParseError(std::string("expected ") + what + ", found a string");
    const size_t end = std::min(rest_.find_first_of(" \t"), rest_.size());
    std::string_view w = rest_.substr(0, end);
    rest_.remove_prefix(end);
    return w;
  }

  uint64_t unsigned_number(const char* what) {
    const std::string_view w = word(what);
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), value);
    if (ec != std::errc() || end != w.data() + w.size()) {
      throw ParseError(std::string("bad ") + what + " '" + std::string(w) + "' (expected an unsigned integer)");
    }
    return value;
  }

  int64_t signed_number(const char* what) {
    const std::string_view w = word(what);
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), value);
    if (ec != std::errc() || end != w.data() + w.size()) {
      throw ParseError(std::string("bad ") + what + " '" + std::string(w) + "' (expected an integer)");
    }
    return value;
  }

  uint32_t id(const char* what) {
    const uint64_t v = unsigned_number(what);
    if (v >= kMaxDefinitionId) throw ParseError(std::string(what) + " " + std::to_string(v) + " is too large");
    return static_cast<uint32_t>(v);
  }

  // An id, or -1 for "none" (VTF3_SCLNONE and missing files).
  int64_t id_or_none(const char* what) {
    const int64_t v = signed_number(what);
    if (v < -1 || v >= kMaxDefinitionId) throw ParseError(std::string(what) + " " + std::to_string(v) + " is out of range");
    return v;
  }

  double real(const char* what) {
    const std::string w(word(what));
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(w.c_str(), &end);
    if (end != w.c_str() + w.size() || errno != 0 || !std::isfinite(v)) {
      throw ParseError(std::string("bad ") + what + " '" + w + "'");
    }
    return v;
  }

  std::string quoted(const char* what) {
    skip_blanks();
    if (rest_.empty() || rest_.front() != '"') throw ParseError(std::string("expected ") + what + " in double quotes");
    std::string out;
    size_t i = 1;
    for (;;) {
      if (i >= rest_.size()) throw ParseError(std::string("unterminated string (") + what + ")");
      const char c = rest_[i++];
      if (c == '"') break;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i >= rest_.size()) throw ParseError(std::string("unterminated escape in ") + what);
      const char e = rest_[i++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'x': {
          if (i + 2 > rest_.size()) throw ParseError(std::string("short \\x escape in ") + what);
          unsigned value = 0;
          const auto [end, ec] = std::from_chars(rest_.data() + i, rest_.data() + i + 2, value, 16);
          if (ec != std::errc() || end != rest_.data() + i + 2) {
            throw ParseError(std::string("bad \\x escape in ") + what);
          }
          out.push_back(static_cast<char>(value));
          i += 2;
          break;
        }
        default: throw ParseError(std::string("unknown escape \\") + e + " in " + what);
      }
    }
    rest_.remove_prefix(i);
    if (!rest_.empty() && rest_.front() != ' ' && rest_.front() != '\t') {
      throw ParseError(std::string("text after the closing quote of ") + what);
    }
    return out;
  }

  void expect_end(std::string_view record) {
    if (!at_end()) throw ParseError("unexpected text at the end of the " + std::string(record) + " record");
  }

 private:
  void skip_blanks() {
    while (!rest_.empty() && (rest_.front() == ' ' || rest_.front() == '\t')) rest_.remove_prefix(1);
  }
  std::string_view rest_;
};

struct SourceLocation {
  int64_t file;  // -1: none
  int32_t line;
};

class Reader {
 public:
  Reader(TraceDefinitions& defs, std::vector<TraceEvent>& events) : defs_(defs), events_(events) {}

  void line(std::string_view text) {
    LineScanner s(text);
    if (s.at_end()) return;  // blank lines are allowed
    const std::string_view first = s.word("record");
    if (!first.empty() && first.front() >= '0' && first.front() <= '9') {
      uint64_t time = 0;
      const auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), time);
      if (ec != std::errc() || end != first.data() + first.size()) {
        throw ParseError("bad time '" + std::string(first) + "'");
      }
      if (time < last_time_) {
        throw ParseError("record out of time order: time " + std::to_string(time) + " after " +
                         std::to_string(last_time_));
      }
      last_time_ = time;
      timed_record(time, s);
    } else {
      definition(first, s);
    }
  }

  void finish() {
    auto by_id = [](const auto& a, const auto& b) { return a.id < b.id; };
    for (auto& [cpu, tid] : os_tids_) defs_.locations[location_index_.at(cpu)].os_tid = tid;
    std::sort(defs_.locations.begin(), defs_.locations.end(), by_id);
    std::sort(defs_.regions.begin(), defs_.regions.end(), by_id);
    std::sort(defs_.metrics.begin(), defs_.metrics.end(), by_id);
  }

 private:
  void definition(std::string_view record, LineScanner& s) {
    if (record == r::kDefCreator) {
      s.quoted("creator");
    } else if (record == r::kDefClkPeriod) {
      const double period = s.real("clock period");
      if (period <= 0) throw ParseError("clock period must be positive");
      const long long ticks = std::llround(1.0 / period);
      if (ticks < 1) throw ParseError("clock period is longer than one second per tick");
      defs_.timer_resolution = static_cast<uint64_t>(ticks);
    } else if (record == r::kDefSysCpuNums) {
      const uint64_t systems = s.unsigned_number("number of systems");
      if (systems == 0 || systems > kMaxDefinitionId) throw ParseError("bad number of systems");
      uint64_t total = 0;
      for (uint64_t i = 0; i < systems; ++i) total += s.unsigned_number("number of CPUs");
      if (total > kMaxDefinitionId) throw ParseError("too many CPUs");
      cpu_count_ = total;
    } else if (record == r::kDefCpuName) {
      const uint32_t cpu = s.id("CPU id");
      std::string name = s.quoted("CPU name");
      if (cpu_count_ && cpu >= *cpu_count_) {
        throw ParseError("CPU " + std::to_string(cpu) + " is beyond the " + std::to_string(*cpu_count_) +
                         " CPUs of DEFSYSCPUNUMS");
      }
      if (location_index_.count(cpu)) throw ParseError("CPU " + std::to_string(cpu) + " is named twice");
      location_index_[cpu] = defs_.locations.size();
      defs_.locations.push_back(Location{cpu, std::move(name), -1});
    } else if (record == r::kDefSclFile) {
      const uint32_t id = s.id("file id");
      std::string path = s.quoted("file name");
      if (!files_.emplace(id, std::move(path)).second) throw ParseError("file " + std::to_string(id) + " is defined twice");
    } else if (record == r::kDefScl) {
      const uint32_t id = s.id("SCL id");
      const uint64_t pairs = s.unsigned_number("number of (file, line) pairs");
      if (pairs == 0) throw ParseError("an SCL needs at least one (file, line) pair");
      SourceLocation first{-1, 0};
      for (uint64_t i = 0; i < pairs; ++i) {
        const int64_t file = s.id_or_none("SCL file");
        const int64_t line = s.signed_number("SCL line");
        if (file >= 0 && !files_.count(static_cast<uint32_t>(file))) {
          throw ParseError("SCL " + std::to_string(id) + " refers to undefined file " + std::to_string(file));
        }
        if (line < INT32_MIN || line > INT32_MAX) throw ParseError("SCL line out of range");
        if (i == 0) first = {file, static_cast<int32_t>(line)};
      }
      if (!scls_.emplace(id, first).second) throw ParseError("SCL " + std::to_string(id) + " is defined twice");
    } else if (record == r::kDefAct) {
      const uint32_t id = s.id("activity id");
      std::string name = s.quoted("activity name");
      if (!activities_.emplace(id, std::move(name)).second) {
        throw ParseError("activity " + std::to_string(id) + " is defined twice");
      }
    } else if (record == r::kDefState) {
      const uint32_t activity = s.id("activity id");
      const uint32_t state = s.id("state id");
      std::string name = s.quoted("state name");
      const int64_t scl = s.id_or_none("SCL id");
      const auto act = activities_.find(activity);
      if (act == activities_.end()) {
        throw ParseError("state " + std::to_string(state) + " refers to undefined activity " + std::to_string(activity));
      }
      Region region{state, std::move(name), "", 0, act->second};
      if (scl >= 0) {
        const auto it = scls_.find(static_cast<uint32_t>(scl));
        if (it == scls_.end()) {
          throw ParseError("state " + std::to_string(state) + " refers to undefined SCL " + std::to_string(scl));
        }
        if (it->second.file >= 0) region.file = files_.at(static_cast<uint32_t>(it->second.file));
        region.line = it->second.line;
      }
      if (!states_.insert(state).second) throw ParseError("state " + std::to_string(state) + " is defined twice");
      defs_.regions.push_back(std::move(region));
    } else if (record == r::kDefSampClass) {
      const uint32_t id = s.id("sample class id");
      s.quoted("sample class name");
      sample_classes_.insert(id);
    } else if (record == r::kDefSamp) {
      const uint32_t id = s.id("sample id");
      const uint32_t sample_class = s.id("sample class id");
      std::string name = s.quoted("sample name");
      std::string unit = s.quoted("sample unit");
      if (!sample_classes_.count(sample_class)) {
        throw ParseError("sample " + std::to_string(id) + " refers to undefined sample class " +
                         std::to_string(sample_class));
      }
      if (!samples_.insert(id).second) throw ParseError("sample " + std::to_string(id) + " is defined twice");
      defs_.metrics.push_back(MetricDefinition{id, std::move(name), std::move(unit)});
    } else {
      throw ParseError("unknown record '" + std::string(record) + "'");
    }
    s.expect_end(record);
  }

  void timed_record(uint64_t time, LineScanner& s) {
    const std::string_view record = s.word("record name");
    if (record == r::kComment) {
      comment(s.quoted("comment"));
    } else if (record == r::kDownto || record == r::kUpfrom) {
      const uint32_t state = defined_state(s.id("state id"));
      const uint32_t cpu = defined_cpu(s.id("CPU id"));
      defined_scl(s.id_or_none("SCL id"));
      events_.push_back(TraceEvent{time, cpu, state, record == r::kDownto ? EventKind::Enter : EventKind::Leave, 0, 0});
    } else if (record == r::kExchange) {
      const uint32_t cpu = defined_cpu(s.id("CPU id"));
      const uint32_t left = defined_state(s.id("left state id"));
      const uint32_t entered = defined_state(s.id("entered state id"));
      defined_scl(s.id_or_none("SCL id"));
      events_.push_back(TraceEvent{time, cpu, left, EventKind::Leave, 0, 0});
      events_.push_back(TraceEvent{time, cpu, entered, EventKind::Enter, 0, 0});
    } else if (record == r::kSamp) {
      const uint32_t cpu = defined_cpu(s.id("CPU id"));
      const uint64_t count = s.unsigned_number("number of samples");
      for (uint64_t i = 0; i < count; ++i) {
        const uint32_t sample = s.id("sample id");
        if (!samples_.count(sample)) throw ParseError("SAMP refers to undefined sample " + std::to_string(sample));
        const uint64_t value = s.unsigned_number("sample value");
        events_.push_back(TraceEvent{time, cpu, 0, EventKind::Metric, sample, value});
      }
    } else {
      throw ParseError("unknown record '" + std::string(record) + "'");
    }
    s.expect_end(record);
  }

  void comment(const std::string& text) {
    const std::string_view t = text;
    if (t.starts_with(r::kProgramComment)) {
      defs_.program = std::string(t.substr(std::string_view(r::kProgramComment).size()));
    } else if (t.starts_with(r::kOsTidComment)) {
      const std::string_view rest = t.substr(std::string_view(r::kOsTidComment).size());
      const size_t eq = rest.find('=');
      uint32_t cpu = 0;
      int32_t tid = 0;
      const bool ok = eq != std::string_view::npos &&
                      std::from_chars(rest.data(), rest.data() + eq, cpu).ptr == rest.data() + eq &&
                      std::from_chars(rest.data() + eq + 1, rest.data() + rest.size(), tid).ptr ==
                          rest.data() + rest.size();
      if (!ok) throw ParseError("malformed thread id comment '" + text + "'");
      if (!location_index_.count(cpu)) throw ParseError("thread id comment for undefined CPU " + std::to_string(cpu));
      os_tids_[cpu] = tid;
    }
    // Other comments carry nothing we model.
  }

  uint32_t defined_state(uint32_t id) const {
    if (!states_.count(id)) throw ParseError("undefined state " + std::to_string(id));
    return id;
  }
  uint32_t defined_cpu(uint32_t id) const {
    if (!location_index_.count(id)) throw ParseError("undefined CPU " + std::to_string(id));
    return id;
  }
  void defined_scl(int64_t id) const {
    if (id >= 0 && !scls_.count(static_cast<uint32_t>(id))) throw ParseError("undefined SCL " + std::to_string(id));
  }

  TraceDefinitions& defs_;
  std::vector<TraceEvent>& events_;
  uint64_t last_time_ = 0;
  std::optional<uint64_t> cpu_count_;
  std::map<uint32_t, size_t> location_index_;  // CPU id -> index in defs_.locations
  std::map<uint32_t, int32_t> os_tids_;
  std::map<uint32_t, std::string> files_;
  std::map<uint32_t, SourceLocation> scls_;
  std::map<uint32_t, std::string> activities_;
  std::set<uint32_t> states_;
  std::set<uint32_t> sample_classes_;
  std::set<uint32_t> samples_;
};

}  // namespace

bool parse_vtf3(std::string_view content, const std::string& source, TraceDefinitions& defs,
                std::vector<TraceEvent>& events, std::string& error) {
  defs = TraceDefinitions{};
  events.clear();
  Reader reader(defs, events);
  size_t line_number = 0;
  std::string_view rest = content;
  try {
    while (!rest.empty()) {
      ++line_number;
      const size_t eol = rest.find('\n');
      std::string_view line = rest.substr(0, eol);
      rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      reader.line(line);
    }
    reader.finish();
  } catch (const ParseError& e) {
    error = source + ":" + std::to_string(line_number) + ": " + e.message;
    defs = TraceDefinitions{};
    events.clear();
    return false;
  }
  return true;
}

bool read_vtf3(const std::string& path, TraceDefinitions& defs, std::vector<TraceEvent>& events, std::string& error) {
  defs = TraceDefinitions{};
  events.clear();
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  std::string content;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) content.append(chunk, n);
  const bool read_failed = std::ferror(f) != 0;
  const int read_errno = errno;
  std::fclose(f);
  if (read_failed) {
    error = path + ": " + std::strerror(read_errno);
    return false;
  }
  return parse_vtf3(content, path, defs, events, error);
}

}  // namespace mri::exporters
