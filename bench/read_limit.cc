// The single-core limit of reading a trace (issue 12): ISA-L inflate of the whole file plus a
// simdjson DOM parse that visits every field of every event, with no tables built. The reader's
// end-to-end time is compared with this in the same run (bench/compare_hta.sh, the Google
// Benchmark). Usage: read_limit FILE.json[.gz]; prints bytes, events and seconds per stage.
//
// The events array is parsed in windows of about 4 MiB cut between two events (`},` then a line
// starting with `{`), each as its own document `[...]`, as a windowed reader must.
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

bool inflate_all(const std::string& gz, std::string* out) {
  auto state = std::make_unique<inflate_state>();
  isal_inflate_init(state.get());
  state->crc_flag = ISAL_GZIP;
  state->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(gz.data()));
  state->avail_in = static_cast<uint32_t>(gz.size());
  out->resize(std::max<size_t>(gz.size() * 8, 1 << 20));
  size_t produced = 0;
  while (true) {
    if (produced == out->size()) out->resize(out->size() * 2);
    state->next_out = reinterpret_cast<uint8_t*>(out->data() + produced);
    state->avail_out = static_cast<uint32_t>(std::min<size_t>(out->size() - produced, UINT32_MAX));
    const uint32_t before = state->avail_out;
    if (isal_inflate(state.get()) < 0) return false;
    produced += before - state->avail_out;
    if (state->block_state == ISAL_BLOCK_FINISH) {
      if (state->avail_in >= 2 && state->next_in[0] == 0x1f && state->next_in[1] == 0x8b) {
        uint8_t* next = state->next_in;
        uint32_t avail = state->avail_in;
        isal_inflate_reset(state.get());
        state->crc_flag = ISAL_GZIP;
        state->next_in = next;
        state->avail_in = avail;
        continue;
      }
      break;
    }
    if (state->avail_in == 0 && state->avail_out > 0) break;
  }
  out->resize(produced);
  return true;
}

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
  std::string raw = read_file(argv[1]);
  std::string text;
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b) {
    if (!inflate_all(raw, &text)) {
      std::fprintf(stderr, "%s: corrupt gzip\n", argv[1]);
      return 1;
    }
    std::string().swap(raw);
  } else {
    text.swap(raw);
  }
  const auto t1 = clock::now();
  const double c1 = cpu_seconds();
  // The events array, window by window; the envelope around it is small and skipped here.
  const size_t open = text.find("\"traceEvents\"");
  size_t start = open == std::string::npos ? std::string::npos : text.find('[', open);
  if (start == std::string::npos) {
    std::fprintf(stderr, "%s: no traceEvents\n", argv[1]);
    return 1;
  }
  ++start;
  simdjson::dom::parser parser;
  uint64_t visited = 0;
  uint64_t events = 0;
  constexpr size_t kWindow = 4 << 20;
  std::string window;
  while (true) {
    size_t cut = start + kWindow < text.size() ? next_cut(text, start + kWindow) : std::string::npos;
    size_t end = cut;
    if (cut == std::string::npos) end = text.rfind(']');  // the last window ends at the array's end
    window.assign(1, '[');
    window.append(text, start, end - start);
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
    if (cut == std::string::npos) break;
    start = cut + 1;
  }
  const auto t2 = clock::now();
  const double c2 = cpu_seconds();
  const double inflate_s = std::chrono::duration<double>(t1 - t0).count();
  const double parse_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf(
      "json_bytes %zu events %lu visited %lu wall: inflate_s %.4f dom_walk_s %.4f total_s %.4f cpu: inflate_s %.4f "
      "dom_walk_s %.4f total_s %.4f MB_per_cpu_s %.0f\n",
      text.size(), static_cast<unsigned long>(events), static_cast<unsigned long>(visited), inflate_s, parse_s,
      inflate_s + parse_s, c1 - c0, c2 - c1, c2 - c0, static_cast<double>(text.size()) / 1e6 / (c2 - c0));
  return 0;
}
