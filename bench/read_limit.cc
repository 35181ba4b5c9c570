// The single-core limit of reading a trace (issue 12): ISA-L inflate of the whole file plus a
// simdjson DOM parse that visits every field of every event, with no tables built. The reader's
// end-to-end time is compared with this in the same run (bench/compare_hta.sh, the Google
// Benchmark). Usage: read_limit FILE.json[.gz]; prints bytes, events and seconds per stage.
//
// The file is inflated a piece at a time (never held whole) and the events array is parsed in
// windows of 512 KiB, the reader's default, cut between two events (`},` then a line starting with
// `{`), each as its own document `[...]`, as a windowed reader must.
#include <isa-l/igzip_lib.h>
#include <simdjson.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Inflates a gzip file (every member) a piece at a time into the caller's buffer, as a reader in
// bounded memory must: no buffer the size of the whole JSON is ever touched.
class Inflater {
 public:
  explicit Inflater(const std::string& gz) : gz_(gz), state_(std::make_unique<inflate_state>()) {
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_GZIP;
    state_->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(gz_.data()));
    state_->avail_in = static_cast<uint32_t>(gz_.size());
  }
  // Up to `n` bytes into `out`; 0 at the end. Sets *error on corrupt data.
  size_t read(char* out, size_t n, bool* error) {
    size_t produced = 0;
    while (produced < n && !done_) {
      state_->next_out = reinterpret_cast<uint8_t*>(out + produced);
      state_->avail_out = static_cast<uint32_t>(n - produced);
      const uint32_t before = state_->avail_out;
      if (isal_inflate(state_.get()) < 0) {
        *error = true;
        return 0;
      }
      produced += before - state_->avail_out;
      if (state_->block_state == ISAL_BLOCK_FINISH) {
        if (state_->avail_in >= 2 && state_->next_in[0] == 0x1f && state_->next_in[1] == 0x8b) {
          uint8_t* next = state_->next_in;
          const uint32_t avail = state_->avail_in;
          isal_inflate_reset(state_.get());
          state_->crc_flag = ISAL_GZIP;
          state_->next_in = next;
          state_->avail_in = avail;
          continue;
        }
        done_ = true;
      } else if (state_->avail_in == 0 && state_->avail_out > 0) {
        done_ = true;
      }
    }
    return produced;
  }

 private:
  const std::string& gz_;
  std::unique_ptr<inflate_state> state_;
  bool done_ = false;
};

// Visits every value; counts them so nothing is optimised away.
uint64_t walk(simdjson::dom::element e) {
  uint64_t n = 1;
  switch (e.type()) {
    case simdjson::dom::element_type::ARRAY: {
      const simdjson::dom::array array = e.get_array().value_unsafe();
      for (simdjson::dom::element v : array) n += walk(v);
      break;
    }
    case simdjson::dom::element_type::OBJECT: {
      const simdjson::dom::object object = e.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair field : object) n += field.key.size() + walk(field.value);
      break;
    }
    case simdjson::dom::element_type::STRING:
      n += e.get_string().value_unsafe().size();
      break;
    case simdjson::dom::element_type::INT64:
      n += static_cast<uint64_t>(e.get_int64().value_unsafe()) & 1;
      break;
    case simdjson::dom::element_type::DOUBLE:
      n += e.get_double().value_unsafe() > 0 ? 1 : 0;
      break;
    default:
      break;
  }
  return n;
}

// Next cut after `from`: a line break between `},` and a line starting with `{`.
size_t next_cut(const std::string& text, size_t from) {
  for (size_t p = text.find('\n', from); p != std::string::npos; p = text.find('\n', p + 1)) {
    size_t b = p;
    while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\r')) --b;
    if (b < 2 || text[b - 1] != ',' || text[b - 2] != '}') continue;
    size_t a = p + 1;
    while (a < text.size() && (text[a] == ' ' || text[a] == '\t')) ++a;
    if (a < text.size() && text[a] == '{') return p;
  }
  return std::string::npos;
}

}  // namespace

// CPU seconds of this process: on a machine shared with others, wall time measures the contention
// as much as the work; CPU time does not.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: read_limit FILE.json[.gz]\n");
    return 2;
  }
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const double c0 = cpu_seconds();
  const std::string raw = read_file(argv[1]);
  const bool gzipped =
      raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b;
  Inflater inflater(raw);
  size_t raw_pos = 0;
  bool corrupt = false;
  // The next `n` bytes of JSON text appended to `text`; false at the end of the data.
  auto more = [&](std::string& text, size_t n) {
    const size_t old = text.size();
    text.resize(old + n);
    size_t got = 0;
    if (gzipped) {
      got = inflater.read(text.data() + old, n, &corrupt);
    } else {
      got = std::min(n, raw.size() - raw_pos);
      std::memcpy(text.data() + old, raw.data() + raw_pos, got);
      raw_pos += got;
    }
    text.resize(old + got);
    return got > 0;
  };
  // Windows of the reader's default size (512 KiB), cut between two events, each parsed as its own
  // document `[...]` and walked. The unparsed tail is moved to the front of one reused buffer.
  constexpr size_t kWindow = 512 << 10;
  std::string text;
  text.reserve(3 * kWindow);
  bool more_data = true;
  while (more_data && text.find("\"traceEvents\"") == std::string::npos) more_data = more(text, kWindow);
  const size_t open = text.find("\"traceEvents\"");
  size_t start = open == std::string::npos ? std::string::npos : text.find('[', open);
  if (start == std::string::npos) {
    std::fprintf(stderr, "%s: no traceEvents\n", argv[1]);
    return 1;
  }
  text.erase(0, start + 1);
  simdjson::dom::parser parser;
  uint64_t visited = 0;
  uint64_t events = 0;
  uint64_t json_bytes = start + 1;
  std::string window;
  while (true) {
    while (more_data && text.size() < 2 * kWindow) more_data = more(text, kWindow);
    if (corrupt) {
      std::fprintf(stderr, "%s: corrupt gzip\n", argv[1]);
      return 1;
    }
    size_t cut = text.size() > kWindow ? next_cut(text, kWindow) : std::string::npos;
    if (cut == std::string::npos && more_data) {  // no event boundary yet: read on
      more_data = more(text, kWindow);
      continue;
    }
    size_t end = cut;
    if (cut == std::string::npos) end = text.rfind(']');  // the last window ends at the array's end
    window.assign(1, '[');
    window.append(text, 0, end);
    if (cut != std::string::npos) {
      while (!window.empty() && window.back() != ',') window.pop_back();
      window.back() = ']';
    } else {
      window.push_back(']');
    }
    simdjson::dom::element doc;
    if (auto e = parser.parse(window).get(doc)) {
      std::fprintf(stderr, "%s: %s\n", argv[1], simdjson::error_message(e));
      return 1;
    }
    events += doc.get_array().value_unsafe().size();
    visited += walk(doc);
    if (cut == std::string::npos) {
      json_bytes += text.size();
      break;
    }
    json_bytes += cut + 1;
    text.erase(0, cut + 1);
  }
  const auto t1 = clock::now();
  const double c1 = cpu_seconds();
  std::printf("json_bytes %lu events %lu visited %lu wall_s %.4f cpu_s %.4f MB_per_cpu_s %.0f\n",
              static_cast<unsigned long>(json_bytes), static_cast<unsigned long>(events),
              static_cast<unsigned long>(visited), std::chrono::duration<double>(t1 - t0).count(), c1 - c0,
              static_cast<double>(json_bytes) / 1e6 / (c1 - c0));
  return 0;
}
