// config.cpp - the config syntax: parsing, validation, canonical text; and
// the lackey trace line parser.
#include <cctype>
#include <charconv>
#include <sstream>

#include "cachesim.h"

namespace mri::sim {

namespace {

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "32K" -> 32768. Suffixes K, M, G (powers of 1024), each optionally
// followed by "B" or "iB"; a plain number may end in "B".
bool parse_size(const std::string& text, uint64_t* out) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p == text.data()) return false;
  std::string suffix = lower(std::string(p, text.data() + text.size()));
  uint64_t mult = 1;
  if (!suffix.empty() && (suffix[0] == 'k' || suffix[0] == 'm' || suffix[0] == 'g')) {
    mult = suffix[0] == 'k' ? (1ull << 10) : suffix[0] == 'm' ? (1ull << 20) : (1ull << 30);
    suffix.erase(0, 1);
    if (suffix == "ib" || suffix == "b") suffix.clear();
  } else if (suffix == "b") {
    suffix.clear();
  }
  if (!suffix.empty()) return false;
  if (v > (uint64_t(1) << 62) / mult) return false;
  *out = v * mult;
  return true;
}

bool parse_u32(const std::string& text, uint32_t* out) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) return false;
  *out = v;
  return true;
}

std::string size_text(uint64_t bytes) {
  if (bytes != 0 && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + "G";
  if (bytes != 0 && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes != 0 && bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

std::string level_name(size_t index) { return "L" + std::to_string(index + 1); }

std::string cores_text(uint32_t n) { return std::to_string(n) + (n == 1 ? " core" : " cores"); }

// Checks one level's geometry; `name` prefixes the message.
std::string check_level(const std::string& name, const LevelConfig& l) {
  if (l.line_bytes == 0) return name + ": line size is 0";
  if (!is_power_of_two(l.line_bytes))
    return name + ": line size " + std::to_string(l.line_bytes) + " is not a power of two";
  if (l.line_bytes < 8 || l.line_bytes > 4096)
    return name + ": line size " + std::to_string(l.line_bytes) + " is outside 8..4096 bytes";
  if (l.ways == 0) return name + ": associativity is 0";
  if (l.size_bytes == 0) return name + ": size is 0";
  const uint64_t set_bytes = uint64_t(l.line_bytes) * l.ways;
  if (l.size_bytes < set_bytes)
    return name + ": size " + size_text(l.size_bytes) + " is smaller than one set (" +
           std::to_string(l.line_bytes) + "-byte lines x " + std::to_string(l.ways) +
           " ways = " + std::to_string(set_bytes) + " bytes)";
  if (l.size_bytes % set_bytes != 0)
    return name + ": size " + size_text(l.size_bytes) + " is not a multiple of line size x associativity (" +
           std::to_string(l.line_bytes) + " x " + std::to_string(l.ways) + " = " +
           std::to_string(set_bytes) + " bytes)";
  const uint64_t sets = l.size_bytes / set_bytes;
  if (!is_power_of_two(sets))
    return name + ": " + std::to_string(sets) + " sets is not a power of two (size " + size_text(l.size_bytes) +
           " / (" + std::to_string(l.line_bytes) + "-byte lines x " + std::to_string(l.ways) +
           (l.ways == 1 ? " way))" : " ways))");
  if (l.size_bytes > (uint64_t(1) << 40)) return name + ": size " + size_text(l.size_bytes) + " is above 1T";
  return "";
}

}  // namespace

std::string validate_config(const HierarchyConfig& c) {
  if (c.cores == 0) return "cores: must be at least 1";
  if (c.cores > kMaxCores) return "cores: " + std::to_string(c.cores) + " is above the maximum of " +
                                  std::to_string(kMaxCores);
  if (c.levels.empty()) return "no data cache level (L1 is required)";
  if (c.levels.size() > kMaxLevels)
    return std::to_string(c.levels.size()) + " data levels is above the maximum of " + std::to_string(kMaxLevels);
  uint32_t prev_sharing = 1;
  for (size_t i = 0; i < c.levels.size(); ++i) {
    const LevelConfig& l = c.levels[i];
    const std::string name = level_name(i);
    if (std::string e = check_level(name, l); !e.empty()) return e;
    if (i > 0 && l.line_bytes < c.levels[i - 1].line_bytes)
      return name + ": line size " + std::to_string(l.line_bytes) + " is smaller than " + level_name(i - 1) +
             "'s " + std::to_string(c.levels[i - 1].line_bytes) +
             " (line sizes must not decrease towards memory)";
    const uint32_t sharing = l.shared_by == 0 ? c.cores : l.shared_by;
    if (c.cores % sharing != 0)
      return name + ": shared by " + cores_text(sharing) + ", which does not divide cores=" +
             std::to_string(c.cores);
    if (sharing % prev_sharing != 0)
      return name + ": shared by " + cores_text(sharing) + ", not a multiple of the " + cores_text(prev_sharing) +
             " sharing " + level_name(i - 1) + " (each instance must serve whole instances of the level above)";
    prev_sharing = sharing;
  }
  if (c.instruction_l1) {
    const LevelConfig& l = *c.instruction_l1;
    if (std::string e = check_level("I1", l); !e.empty()) return e;
    if (l.shared_by != 1 && !(l.shared_by == 0 && c.cores == 1)) return "I1: must be private";
    if (c.levels.size() > 1 && l.line_bytes > c.levels[1].line_bytes)
      return "I1: line size " + std::to_string(l.line_bytes) + " is larger than L2's " +
             std::to_string(c.levels[1].line_bytes) + " (line sizes must not decrease towards memory)";
  }
  if (c.cachegrind_compatible) {
    if (c.levels.size() != 2)
      return "cachegrind-compat: needs exactly 2 data levels (D1 = L1, LL = L2), not " +
             std::to_string(c.levels.size());
    if (c.cores != 1) return "cachegrind-compat: needs cores=1 (cachegrind has one cache for all threads)";
    for (size_t i = 0; i < c.levels.size(); ++i) {
      const LevelConfig& l = c.levels[i];
      const std::string name = level_name(i);
      if (l.replacement != Replacement::kLru) return "cachegrind-compat: " + name + " must be lru";
      if (!l.write_back) return "cachegrind-compat: " + name + " must be wb (write-back)";
      if (!l.write_allocate) return "cachegrind-compat: " + name + " must be wa (write-allocate)";
    }
    if (c.instruction_l1 && c.instruction_l1->replacement != Replacement::kLru)
      return "cachegrind-compat: I1 must be lru";
  }
  return "";
}

namespace {

// Parses "SIZE,WAYS,LINE[,OPTION...]" for the level `name`.
std::string parse_level(const std::string& name, const std::string& body, LevelConfig* out) {
  std::vector<std::string> fields;
  std::stringstream ss(body);
  for (std::string f; std::getline(ss, f, ',');) fields.push_back(trim(f));
  if (!body.empty() && body.back() == ',') fields.push_back("");
  if (fields.size() < 3)
    return name + ": expected SIZE,WAYS,LINE[,OPTION...], got '" + body + "'";
  LevelConfig l;
  // Each option sets one of four properties; a property set twice (the
  // same option repeated, or two that contradict, such as wb and wt) is an
  // error rather than "the last one wins", which would hide a typo.
  enum Property { kReplacement, kSharing, kWritePolicy, kAllocation, kProperties };
  static const char* const kPropertyName[kProperties] = {"the replacement policy", "the sharing",
                                                         "the write policy", "the write allocation"};
  std::string given[kProperties];  // the option that set each property, "" while unset
  if (!parse_size(fields[0], &l.size_bytes))
    return name + ": size '" + fields[0] + "' is not a byte count (e.g. 32768, 32K, 1M)";
  if (!parse_u32(fields[1], &l.ways)) return name + ": associativity '" + fields[1] + "' is not a number";
  if (!parse_u32(fields[2], &l.line_bytes)) return name + ": line size '" + fields[2] + "' is not a number";
  for (size_t i = 3; i < fields.size(); ++i) {
    const std::string o = lower(fields[i]);
    Property property;
    if (o == "lru" || o == "fifo") {
      property = kReplacement;
      l.replacement = o == "lru" ? Replacement::kLru : Replacement::kFifo;
    } else if (o == "private" || o == "shared") {
      property = kSharing;
      l.shared_by = o == "private" ? 1 : 0;
    } else if (o.rfind("shared=", 0) == 0) {
      property = kSharing;
      if (!parse_u32(o.substr(7), &l.shared_by) || l.shared_by == 0)
        return name + ": '" + o + "' needs a core count of at least 1 after 'shared='";
    } else if (o == "wb" || o == "wt") {
      property = kWritePolicy;
      l.write_back = o == "wb";
    } else if (o == "wa" || o == "nwa") {
      property = kAllocation;
      l.write_allocate = o == "wa";
    } else {
      return name + ": unknown option '" + o +
             "' (expected lru, fifo, private, shared, shared=N, wb, wt, wa or nwa)";
    }
    if (!given[property].empty())
      return name + (given[property] == o ? ": option '" + o + "' given twice"
                                          : ": options '" + given[property] + "' and '" + o +
                                                "' contradict (both set " + kPropertyName[property] + ")");
    given[property] = o;
  }
  *out = l;
  return "";
}

}  // namespace

std::string parse_config(std::string_view text, HierarchyConfig& out) {
  // The file form is resolved where a user gave it (config_file.h); here it
  // can only be text from elsewhere, such as the tool's segment.
  if (!text.empty() && text[0] == '@')
    return "a configuration text that starts with '@' names a file, and the text parser reads no file";
  HierarchyConfig c;
  c.levels.clear();
  // Drop comments, then split on ';' and newlines.
  std::string cleaned;
  bool in_comment = false;
  for (char ch : text) {
    if (ch == '#') in_comment = true;
    if (ch == '\n') in_comment = false;
    if (!in_comment) cleaned += (ch == '\n' ? ';' : ch);
  }
  std::stringstream ss(cleaned);
  std::vector<std::optional<LevelConfig>> levels(kMaxLevels);
  std::string cores_item;  // the "cores=N" item once given
  for (std::string raw; std::getline(ss, raw, ';');) {
    std::string item = trim(raw);
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon != std::string::npos) {
      std::string name = trim(item.substr(0, colon));
      for (char& ch : name) ch = char(std::toupper(static_cast<unsigned char>(ch)));
      const std::string body = trim(item.substr(colon + 1));
      LevelConfig l;
      if (name == "I1") {
        if (c.instruction_l1) return "I1: given twice";
        if (std::string e = parse_level(name, body, &l); !e.empty()) return e;
        c.instruction_l1 = l;
        continue;
      }
      if (name.size() != 2 || name[0] != 'L' || name[1] < '1' || name[1] > char('0' + kMaxLevels))
        return "unknown cache level name '" + name + "' (expected L1..L" + std::to_string(kMaxLevels) +
               " or I1)";
      const size_t index = size_t(name[1] - '1');
      if (levels[index]) return name + ": given twice";
      if (std::string e = parse_level(name, body, &l); !e.empty()) return e;
      levels[index] = l;
      continue;
    }
    const std::string key = lower(trim(item.substr(0, item.find('='))));
    if (key == "cores") {
      if (!cores_item.empty()) return "cores: given twice ('" + cores_item + "' and '" + item + "')";
      if (item.find('=') == std::string::npos || !parse_u32(trim(item.substr(item.find('=') + 1)), &c.cores))
        return "cores: expected cores=N with N a number, got '" + item + "'";
      cores_item = item;
    } else if (lower(item) == "cachegrind-compat") {
      if (c.cachegrind_compatible) return "cachegrind-compat: given twice";
      c.cachegrind_compatible = true;
    } else {
      return "unknown item '" + item + "' (expected LEVEL:SIZE,WAYS,LINE[,...], cores=N or cachegrind-compat)";
    }
  }
  size_t count = 0;
  while (count < kMaxLevels && levels[count]) ++count;
  for (size_t i = count; i < kMaxLevels; ++i)
    if (levels[i]) return level_name(i) + ": given without " + level_name(count) + " (levels must be L1, L2, ... in order)";
  for (size_t i = 0; i < count; ++i) c.levels.push_back(*levels[i]);
  if (std::string e = validate_config(c); !e.empty()) return e;
  out = c;
  return "";
}

uint64_t tag_bytes(const HierarchyConfig& config) {
  auto level = [&config](const LevelConfig& l) {
    const uint32_t sharing = l.shared_by == 0 ? config.cores : l.shared_by;
    return uint64_t(config.cores / sharing) * (l.size_bytes / l.line_bytes) * sizeof(uint64_t);
  };
  uint64_t bytes = 0;
  for (const LevelConfig& l : config.levels) bytes += level(l);
  if (config.instruction_l1) bytes += level(*config.instruction_l1);
  return bytes;
}

namespace {
std::string format_level(const std::string& name, const LevelConfig& l) {
  std::string s = name + ":" + size_text(l.size_bytes) + "," + std::to_string(l.ways) + "," +
                  std::to_string(l.line_bytes) + (l.replacement == Replacement::kLru ? ",lru" : ",fifo");
  if (l.shared_by == 1) s += ",private";
  else if (l.shared_by == 0) s += ",shared";
  else s += ",shared=" + std::to_string(l.shared_by);
  s += l.write_back ? ",wb" : ",wt";
  s += l.write_allocate ? ",wa" : ",nwa";
  return s;
}
}  // namespace

std::string format_config(const HierarchyConfig& c) {
  std::string s;
  if (c.instruction_l1) s += format_level("I1", *c.instruction_l1) + ";";
  for (size_t i = 0; i < c.levels.size(); ++i) s += format_level(level_name(i), c.levels[i]) + ";";
  s += "cores=" + std::to_string(c.cores);
  if (c.cachegrind_compatible) s += ";cachegrind-compat";
  return s;
}

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::kReadHit: return "read_hit";
    case EventKind::kReadMiss: return "read_miss";
    case EventKind::kWriteHit: return "write_hit";
    case EventKind::kWriteMiss: return "write_miss";
    case EventKind::kWriteBack: return "write_back";
    case EventKind::kInvalidation: return "invalidation";
  }
  return "?";
}

LevelCounters& LevelCounters::operator+=(const LevelCounters& o) {
  read_hits += o.read_hits;
  read_misses += o.read_misses;
  write_hits += o.write_hits;
  write_misses += o.write_misses;
  fetch_hits += o.fetch_hits;
  fetch_misses += o.fetch_misses;
  write_backs += o.write_backs;
  invalidations += o.invalidations;
  return *this;
}

// ---------------------------------------------------------------- lackey

int parse_lackey_line(std::string_view line, Access* out, std::string* error) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return 0;
  // Valgrind's own lines: "==PID== ...", "--PID-- ...", and "### ..." (its
  // DWARF reader's complaints, e.g. about DWARF 5 forms, in the same log).
  if (line.size() >= 2 && ((line[0] == '=' && line[1] == '=') || (line[0] == '-' && line[1] == '-'))) return 0;
  if (line.size() >= 3 && line[0] == '#' && line[1] == '#' && line[2] == '#') return 0;
  AccessType type;
  size_t pos;
  if (line.size() > 3 && line[0] == 'I' && line[1] == ' ' && line[2] == ' ') {
    type = kInstruction;
    pos = 3;
  } else if (line.size() > 3 && line[0] == ' ' && line[2] == ' ' &&
             (line[1] == 'L' || line[1] == 'S' || line[1] == 'M')) {
    type = line[1] == 'L' ? kRead : line[1] == 'S' ? kWrite : kModify;
    pos = 3;
  } else {
    *error = "expected 'I  ADDR,SIZE', ' L ADDR,SIZE', ' S ADDR,SIZE', ' M ADDR,SIZE' or a Valgrind '==PID==' "
             "line, got '" + std::string(line.substr(0, 60)) + (line.size() > 60 ? "...'" : "'");
    return -1;
  }
  uint64_t addr = 0;
  const char* p = line.data() + pos;
  const char* end = line.data() + line.size();
  const char* digits = p;
  for (; p < end && *p != ','; ++p) {
    const char ch = *p;
    unsigned d;
    if (ch >= '0' && ch <= '9') d = unsigned(ch - '0');
    else if (ch >= 'a' && ch <= 'f') d = unsigned(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F') d = unsigned(ch - 'A' + 10);
    else {
      *error = "address '" + std::string(digits, size_t(std::min<ptrdiff_t>(end - digits, 24))) +
               "' is not hexadecimal";
      return -1;
    }
    if (p - digits >= 16) {
      *error = "address has more than 16 hexadecimal digits";
      return -1;
    }
    addr = (addr << 4) | d;
  }
  if (p == digits) {
    *error = "missing address";
    return -1;
  }
  if (p == end) {
    *error = "missing ',SIZE' after the address";
    return -1;
  }
  ++p;
  uint32_t size = 0;
  auto [q, ec] = std::from_chars(p, end, size);
  if (ec != std::errc() || q == p || q != end) {
    *error = "size '" + std::string(p, end) + "' is not a decimal number";
    return -1;
  }
  if (size == 0 || size > 4096) {
    *error = "size " + std::to_string(size) + " is outside 1..4096";
    return -1;
  }
  out->addr = addr;
  out->size = size;
  out->type = type;
  return 1;
}

}  // namespace mri::sim
