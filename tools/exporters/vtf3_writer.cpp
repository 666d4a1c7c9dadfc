// VTF3 ASCII writer. One file: definitions, then every event in global time
// order. Events arrive ordered per location only, so the writer keeps one
// time-ordered stream per location (in memory, spilled to an unlinked
// temporary file when the memory budget is exceeded) and merges the streams
// at finish().
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "definitions.h"
#include "mri_export.h"
#include "text.h"
#include "vtf3_records.h"

namespace mri::exporters {
namespace {

using detail::AtomicFile;

// One event without its location (the stream it is in gives that).
struct StoredEvent {
  uint64_t timestamp;
  uint64_t value;
  uint32_t id;  // region (Enter/Leave) or metric (Metric)
  EventKind kind;
};
static_assert(sizeof(StoredEvent) == 24, "spill files store events as 24-byte records");

// An unlinked temporary file: nothing is left behind if the process dies.
class SpillFile {
 public:
  SpillFile() = default;
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  SpillFile(SpillFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  SpillFile& operator=(SpillFile&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~SpillFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // 0 or errno.
  int open_in(const std::string& directory) {
    fd_ = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ >= 0) return 0;
    // File systems without O_TMPFILE: create a name and unlink it at once.
    std::string pattern = directory + "/.mri-vtf3-spill-XXXXXX";
    fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd_ < 0) return errno;
    ::unlink(pattern.c_str());
    return 0;
  }
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Events of one location in memory: fixed blocks, so that appending never
// copies what is already buffered and a spill writes whole blocks.
constexpr size_t kBlockEvents = 4096;  // 96 KiB per block

using Block = std::unique_ptr<StoredEvent[]>;

// Blocks freed by a spill, reused before new ones are allocated: fresh
// memory costs page faults (a third of the write path's time before).
class BlockPool {
 public:
  Block get() {
    if (free_.empty()) return std::make_unique_for_overwrite<StoredEvent[]>(kBlockEvents);
    Block b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  void put(Block b) { free_.push_back(std::move(b)); }

 private:
  std::vector<Block> free_;
};

struct LocationStream {
  std::vector<Block> blocks;         // the newest events, after the spilled ones
  size_t last_fill = kBlockEvents;  // events in blocks.back()
  SpillFile spill;
  uint64_t spilled = 0;  // events in the spill file

  void push(const StoredEvent& e, BlockPool& pool) {
    if (last_fill == kBlockEvents) {
      blocks.push_back(pool.get());
      last_fill = 0;
    }
    blocks.back()[last_fill++] = e;
  }
  size_t block_fill(size_t i) const { return i + 1 == blocks.size() ? last_fill : kBlockEvents; }
  size_t in_memory() const { return blocks.empty() ? 0 : (blocks.size() - 1) * kBlockEvents + last_fill; }
  uint64_t total() const { return spilled + in_memory(); }
};

// Reads one stream back in time order: the spill file in chunks, then the
// memory blocks.
class StreamCursor {
 public:
  StreamCursor(LocationStream& stream, size_t chunk_events) : stream_(stream), chunk_events_(chunk_events) {}

  // Loads the first event; 0 or errno.
  int start() { return refill(); }
  bool done() const { return pos_ == end_; }
  const StoredEvent& current() const { return *pos_; }
  // Advances; 0 or errno.
  int next() {
    ++pos_;
    return pos_ == end_ ? refill() : 0;
  }

 private:
  int refill() {
    if (spill_read_ < stream_.spilled) {
      const uint64_t count = std::min<uint64_t>(chunk_events_, stream_.spilled - spill_read_);
      chunk_.resize(count);
      const size_t bytes = count * sizeof(StoredEvent);
      size_t got = 0;
      while (got < bytes) {
        const ssize_t n = ::pread(stream_.spill.fd(), reinterpret_cast<char*>(chunk_.data()) + got, bytes - got,
                                  static_cast<off_t>(spill_read_ * sizeof(StoredEvent) + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        got += static_cast<size_t>(n);
      }
      spill_read_ += count;
      pos_ = chunk_.data();
      end_ = pos_ + count;
      return 0;
    }
    if (!chunk_.empty()) {
      chunk_.clear();
      chunk_.shrink_to_fit();
    }
    while (next_block_ < stream_.blocks.size()) {
      const size_t i = next_block_++;
      const size_t fill = stream_.block_fill(i);
      if (fill == 0) continue;
      pos_ = stream_.blocks[i].get();
      end_ = pos_ + fill;
      return 0;
    }
    pos_ = end_ = nullptr;
    return 0;
  }

  LocationStream& stream_;
  size_t chunk_events_;
  std::vector<StoredEvent> chunk_;
  uint64_t spill_read_ = 0;
  size_t next_block_ = 0;
  const StoredEvent* pos_ = nullptr;
  const StoredEvent* end_ = nullptr;
};

class Vtf3Writer final : public TraceWriter {
 public:
  explicit Vtf3Writer(size_t memory_budget_bytes)
      : budget_events_(std::max<size_t>(memory_budget_bytes / sizeof(StoredEvent), 64)) {}

  bool begin(const std::string& path, const TraceDefinitions& defs, std::string& error) override {
    if (state_ != State::Fresh) {
      error = "begin() was already called on this writer";
      return false;
    }
    if (!defs_.reset(defs, error)) return false;
    if (!out_.open(path, error)) return false;
    // Spill files live next to the output; a stream's go to $TMPDIR or /tmp.
    const char* tmpdir = std::getenv("TMPDIR");
    directory_ = !is_stream_output(path) ? detail::directory_of(path) : tmpdir && *tmpdir ? tmpdir : "/tmp";
    state_ = State::Open;
    return true;
  }

  bool add_location(const Location& location, std::string& error) override {
    return usable(error) && defs_.add_location(location, error);
  }
  bool add_region(const Region& region, std::string& error) override {
    return usable(error) && defs_.add_region(region, error);
  }
  bool add_metric(const MetricDefinition& metric, std::string& error) override {
    return usable(error) && defs_.add_metric(metric, error);
  }

  bool write(const TraceEvent* events, size_t n, std::string& error) override {
    if (!usable(error)) return false;
    if (!checker_.accept(defs_, events, n, error)) return false;
    if (streams_.size() < defs_.locations().size()) streams_.resize(defs_.locations().size());
    for (size_t i = 0; i < n; ++i) {
      const TraceEvent& e = events[i];
      const uint32_t id = e.kind == EventKind::Metric ? e.metric : e.region;
      streams_[e.location].push(StoredEvent{e.timestamp, e.value, id, e.kind}, pool_);
    }
    buffered_ += n;
    if (buffered_ > budget_events_ && !spill_all()) {
      error = io_error_;
      return false;
    }
    return true;
  }

  bool finish(std::string& error) override {
    if (!usable(error)) return false;
    pool_ = BlockPool{};  // blocks nobody uses any more: room for the read-back chunks
    write_definitions();
    if (!merge_events()) {
      fail();
      error = io_error_;
      return false;
    }
    if (!out_.commit(error)) {
      io_error_ = error;
      fail();
      return false;
    }
    streams_.clear();
    state_ = State::Finished;
    return true;
  }

  uint64_t events_written() const override { return checker_.total_events(); }

 private:
  enum class State { Fresh, Open, Finished, Failed };

  bool usable(std::string& error) const {
    switch (state_) {
      case State::Open: return true;
      case State::Fresh: error = "begin() has not been called"; return false;
      case State::Finished: error = "the trace is already finished"; return false;
      case State::Failed: error = io_error_; return false;
    }
    return false;
  }

  void fail() {
    if (io_error_.empty()) io_error_ = out_.first_error();
    out_.abandon();
    streams_.clear();
    state_ = State::Failed;
  }

  // Moves every in-memory event to its stream's spill file.
  bool spill_all() {
    for (LocationStream& s : streams_) {
      if (s.in_memory() == 0) continue;
      if (!s.spill.is_open()) {
        const int err = s.spill.open_in(directory_);
        if (err != 0) {
          io_error_ = detail::io_error("cannot create a spill file in", directory_, err) + " (while writing " +
                      out_.final_path() + ")";
          fail();
          return false;
        }
      }
      for (size_t i = 0; i < s.blocks.size(); ++i) {
        const int err = detail::write_fully(s.spill.fd(), s.blocks[i].get(), s.block_fill(i) * sizeof(StoredEvent));
        if (err != 0) {
          io_error_ = detail::io_error("cannot write a spill file in", directory_, err) + " (while writing " +
                      out_.final_path() + ")";
          fail();
          return false;
        }
      }
      s.spilled += s.in_memory();
      for (Block& b : s.blocks) pool_.put(std::move(b));
      s.blocks.clear();
      s.last_fill = kBlockEvents;
    }
    buffered_ = 0;
    return true;
  }

  void write_line(const std::string& line) { out_.write(line); }

  void write_definitions() {
    namespace r = detail::vtf3;
    std::string line;
    auto comment = [&](std::string_view text) {
      line = "0 ";
      line += r::kComment;
      line += ' ';
      detail::append_quoted(line, text);
      line += '\n';
      write_line(line);
    };
    comment(r::kFirstComment);

    line = r::kDefCreator;
    line += ' ';
    detail::append_quoted(line, "MRI exporters");
    line += '\n';
    write_line(line);
    comment(std::string(r::kProgramComment) + defs_.program());

    // Shortest text that reads back as the same double (1 ns -> "1e-09").
    char period[64];
    const auto printed =
        std::to_chars(period, period + sizeof period, 1.0 / static_cast<double>(defs_.timer_resolution()));
    write_line(std::string(r::kDefClkPeriod) + " " + std::string(period, printed.ptr) + "\n");

    // One system whose CPUs are the locations (VTF3 has no thread record;
    // each thread is a CPU id, as in the VTF3 converters of other tools).
    line = r::kDefSysCpuNums;
    line += " 1 ";
    detail::append_u64(line, defs_.locations().size());
    line += '\n';
    write_line(line);
    for (const auto& l : defs_.locations()) {
      if (!l) continue;
      line = r::kDefCpuName;
      line += ' ';
      detail::append_u64(line, l->id);
      line += ' ';
      detail::append_quoted(line, l->name);
      line += '\n';
      write_line(line);
      comment(std::string(r::kOsTidComment) + std::to_string(l->id) + "=" + std::to_string(l->os_tid));
    }

    // Source files and code locations (one SCL per region that has one).
    std::map<std::string, uint32_t> file_ids;
    for (const auto& reg : defs_.regions()) {
      if (!reg || reg->file.empty() || file_ids.count(reg->file)) continue;
      const uint32_t id = static_cast<uint32_t>(file_ids.size());
      file_ids.emplace(reg->file, id);
      line = r::kDefSclFile;
      line += ' ';
      detail::append_u64(line, id);
      line += ' ';
      detail::append_quoted(line, reg->file);
      line += '\n';
      write_line(line);
    }
    for (const auto& reg : defs_.regions()) {
      if (!reg || !has_scl(*reg)) continue;
      line = r::kDefScl;
      line += ' ';
      detail::append_u64(line, reg->id);
      line += " 1 ";
      detail::append_i64(line, reg->file.empty() ? r::kSclNone : static_cast<int64_t>(file_ids.at(reg->file)));
      line += ' ';
      detail::append_i64(line, reg->line);
      line += '\n';
      write_line(line);
    }

    // Activities are the region kinds; states are the regions.
    std::map<std::string, uint32_t> activity_ids;
    for (const auto& reg : defs_.regions()) {
      if (!reg || activity_ids.count(reg->kind)) continue;
      const uint32_t id = static_cast<uint32_t>(activity_ids.size());
      activity_ids.emplace(reg->kind, id);
      line = r::kDefAct;
      line += ' ';
      detail::append_u64(line, id);
      line += ' ';
      detail::append_quoted(line, reg->kind);
      line += '\n';
      write_line(line);
    }
    for (const auto& reg : defs_.regions()) {
      if (!reg) continue;
      line = r::kDefState;
      line += ' ';
      detail::append_u64(line, activity_ids.at(reg->kind));
      line += ' ';
      detail::append_u64(line, reg->id);
      line += ' ';
      detail::append_quoted(line, reg->name);
      line += ' ';
      detail::append_i64(line, has_scl(*reg) ? static_cast<int64_t>(reg->id) : r::kSclNone);
      line += '\n';
      write_line(line);
    }

    bool any_metric = false;
    for (const auto& m : defs_.metrics()) {
      if (!m) continue;
      if (!any_metric) {
        line = r::kDefSampClass;
        line += " 0 ";
        detail::append_quoted(line, r::kSampleClassName);
        line += '\n';
        write_line(line);
        any_metric = true;
      }
      line = r::kDefSamp;
      line += ' ';
      detail::append_u64(line, m->id);
      line += " 0 ";
      detail::append_quoted(line, m->name);
      line += ' ';
      detail::append_quoted(line, m->unit);
      line += '\n';
      write_line(line);
    }
  }

  static bool has_scl(const Region& region) { return !region.file.empty() || region.line != 0; }

  void format_event(uint32_t location, const StoredEvent& e) {
    namespace r = detail::vtf3;
    // Longest line: 20 digits of time, " SAMP ", 10 + " 1 " + 10 + " " + 20, "\n".
    char* const start = out_.reserve(96);
    char* p = detail::put_u64(start, e.timestamp);
    switch (e.kind) {
      case EventKind::Enter:
      case EventKind::Leave: {
        const char* name = e.kind == EventKind::Enter ? " DOWNTO " : " UPFROM ";
        std::memcpy(p, name, 8);
        p += 8;
        p = detail::put_u64(p, e.id);
        *p++ = ' ';
        p = detail::put_u64(p, location);
        std::memcpy(p, " -1\n", 4);  // VTF3_SCLNONE: we do not know the call site
        p += 4;
        break;
      }
      case EventKind::Metric:
        std::memcpy(p, " SAMP ", 6);
        p += 6;
        p = detail::put_u64(p, location);
        std::memcpy(p, " 1 ", 3);
        p += 3;
        p = detail::put_u64(p, e.id);
        *p++ = ' ';
        p = detail::put_u64(p, e.value);
        *p++ = '\n';
        break;
    }
    static_assert(r::kSclNone == -1, "the event format writes VTF3_SCLNONE as -1");
    out_.advance(static_cast<size_t>(p - start));
  }

  // K-way merge of the location streams by (timestamp, location).
  bool merge_events() {
    std::vector<StreamCursor> cursors;
    cursors.reserve(streams_.size());
    size_t active = 0;
    for (const LocationStream& s : streams_)
      if (s.total() > 0) ++active;
    // Read-back chunks share the budget.
    const size_t chunk = std::max<size_t>(budget_events_ / std::max<size_t>(active, 1) / 2, 256);
    // Heap keys: (timestamp, location) packed into one 128-bit number, so
    // that each comparison is one compare (finish() of 4 M events of 64
    // locations: 200 -> 137 ms CPU against comparing the two fields).
    using Key = unsigned __int128;
    auto key_of = [](uint64_t timestamp, uint32_t location) { return (Key(timestamp) << 32) | location; };
    auto location_of = [](Key key) { return static_cast<uint32_t>(key); };
    std::vector<Key> heap;  // binary min-heap of the streams' next events
    auto sift_down = [&heap](size_t i) {
      const Key moving = heap[i];
      const size_t n = heap.size();
      for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        child += (child + 1 < n && heap[child + 1] < heap[child]);
        if (!(heap[child] < moving)) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = moving;
    };
    for (uint32_t loc = 0; loc < streams_.size(); ++loc) {
      cursors.emplace_back(streams_[loc], chunk);
      if (streams_[loc].total() == 0) continue;
      if (const int err = cursors.back().start(); err != 0) return read_error(err);
      heap.push_back(key_of(cursors.back().current().timestamp, loc));
    }
    for (size_t i = heap.size() / 2; i-- > 0;) sift_down(i);

    while (!heap.empty()) {
      const uint32_t loc = location_of(heap[0]);
      StreamCursor& c = cursors[loc];
      // Emit this location's run up to the next location's first event (the
      // smaller child of the root): one heap operation per run, not per event.
      Key next = ~Key(0);
      if (heap.size() > 1) next = heap[1];
      if (heap.size() > 2 && heap[2] < next) next = heap[2];
      do {
        format_event(loc, c.current());
        if (const int err = c.next(); err != 0) return read_error(err);
      } while (!c.done() && key_of(c.current().timestamp, loc) < next);
      if (c.done()) {
        heap[0] = heap.back();
        heap.pop_back();
      } else {
        heap[0] = key_of(c.current().timestamp, loc);
      }
      if (!heap.empty()) sift_down(0);
      if (out_.failed()) break;
    }
    if (out_.failed()) {
      io_error_ = out_.first_error();
      return false;
    }
    return true;
  }

  bool read_error(int err) {
    io_error_ = detail::io_error("cannot read back a spill file in", directory_, err) + " (while writing " +
                out_.final_path() + ")";
    return false;
  }

  const size_t budget_events_;
  State state_ = State::Fresh;
  detail::DefinitionSet defs_;
  detail::EventChecker checker_;
  AtomicFile out_;
  std::string directory_;
  std::vector<LocationStream> streams_;
  BlockPool pool_;
  size_t buffered_ = 0;  // events in memory over all streams
  std::string io_error_;
};

}  // namespace

std::unique_ptr<TraceWriter> make_vtf3_writer(size_t memory_budget_bytes) {
  return std::make_unique<Vtf3Writer>(memory_budget_bytes);
}

}  // namespace mri::exporters
