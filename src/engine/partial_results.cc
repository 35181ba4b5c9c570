#include "engine/partial_results.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "core/file_read.h"
#include "core/json_string.h"
#include "core/time_bounds.h"

namespace scaleprof::engine {

namespace {

constexpr int64_t kVersion = 1;
// A shard holds small per-rank results and collective rows; past this it is not read whole.
constexpr size_t kMaxShardBytes = size_t{16} << 30;
// The bounds the trace reader holds every time to, so the analyses cannot wrap (core/time_bounds.h).
constexpr const char* kOutOfBounds =
    "a time outside [-2^59, 3*2^61] ns (18 years before the epoch to the year 2189), which no trace can hold";

std::string int_list(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

// Reading: each getter fails with the place it was looking at.
struct Reader {
  std::string_view path;
  std::string error;

  bool fail(const std::string& where, std::string_view what) {
    if (error.empty()) error = fmt::format("{}: {}: {}", path, where, what);
    return false;
  }
  bool get(simdjson::dom::element e, const std::string& where, int64_t* out) {
    if (e.get_int64().get(*out) != simdjson::SUCCESS) return fail(where, "expected an integer");
    return true;
  }
  bool get(simdjson::dom::element e, const std::string& where, std::string* out) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) return fail(where, "expected a string");
    *out = std::string(s);
    return true;
  }
  bool get(simdjson::dom::element e, const std::string& where, bool* out) {
    if (e.get_bool().get(*out) != simdjson::SUCCESS) return fail(where, "expected true or false");
    return true;
  }
  bool get(simdjson::dom::element e, const std::string& where, std::vector<int64_t>* out) {
    simdjson::dom::array a;
    if (e.get_array().get(a) != simdjson::SUCCESS) return fail(where, "expected a list of integers");
    for (simdjson::dom::element x : a) {
      int64_t v = 0;
      if (!get(x, where, &v)) return false;
      out->push_back(v);
    }
    return true;
  }
  bool field(simdjson::dom::object o, const std::string& where, const char* key, simdjson::dom::element* out) {
    if (o[key].get(*out) != simdjson::SUCCESS) return fail(where, fmt::format("missing \"{}\"", key));
    return true;
  }
  // A row: an array of exactly n elements.
  bool row(simdjson::dom::element e, const std::string& where, size_t n, std::vector<simdjson::dom::element>* out) {
    simdjson::dom::array a;
    if (e.get_array().get(a) != simdjson::SUCCESS) return fail(where, "expected a list");
    for (simdjson::dom::element x : a) out->push_back(x);
    if (out->size() != n) return fail(where, fmt::format("expected {} values, found {}", n, out->size()));
    return true;
  }
};

bool read_rank(Reader& r, simdjson::dom::element e, const std::string& where, analysis::RankCollectives* out) {
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return r.fail(where, "expected an object");
  simdjson::dom::element v;
  if (!r.field(o, where, "rank", &v) || !r.get(v, where + ".rank", &out->rank)) return false;
  if (!r.field(o, where, "path", &v) || !r.get(v, where + ".path", &out->path)) return false;
  if (!r.field(o, where, "host", &v) || !r.get(v, where + ".host", &out->host)) return false;
  if (!r.field(o, where, "world_size", &v) || !r.get(v, where + ".world_size", &out->world_size)) return false;
  if (!r.field(o, where, "gpu", &v) || !r.get(v, where + ".gpu", &out->gpu)) return false;
  simdjson::dom::array list;
  if (!r.field(o, where, "groups", &v)) return false;
  if (v.get_array().get(list) != simdjson::SUCCESS) return r.fail(where + ".groups", "expected a list");
  size_t i = 0;
  for (simdjson::dom::element g : list) {
    const std::string at = fmt::format("{}.groups[{}]", where, i++);
    std::vector<simdjson::dom::element> f;
    analysis::GroupConfig pg;
    std::vector<int64_t> ranks;
    if (!r.row(g, at, 4, &f) || !r.get(f[0], at, &pg.name) || !r.get(f[1], at, &pg.desc) ||
        !r.get(f[2], at, &pg.size) || !r.get(f[3], at, &ranks)) {
      return false;
    }
    if (std::any_of(ranks.begin(), ranks.end(), [](int64_t x) { return x < 0; })) {
      return r.fail(at, "group ranks must not be negative");
    }
    pg.ranks = analysis::format_rank_list(ranks);
    out->groups.push_back(std::move(pg));
  }
  if (!r.field(o, where, "calls", &v)) return false;
  if (v.get_array().get(list) != simdjson::SUCCESS) return r.fail(where + ".calls", "expected a list");
  i = 0;
  for (simdjson::dom::element c : list) {
    const std::string at = fmt::format("{}.calls[{}]", where, i++);
    std::vector<simdjson::dom::element> f;
    analysis::CollectiveCall call;
    // 13 values, 14 with an all-to-all's annotation.
    if (!r.row(c, at, c.is_array() && c.get_array().size() == 13 ? 13 : 14, &f) || !r.get(f[0], at, &call.type) ||
        !r.get(f[1], at, &call.group) || !r.get(f[2], at, &call.group_ranks) || !r.get(f[3], at, &call.group_size) ||
        !r.get(f[4], at, &call.seq) || !r.get(f[5], at, &call.step) || !r.get(f[6], at, &call.bytes) ||
        !r.get(f[7], at, &call.dtype) || !r.get(f[8], at, &call.start_ns) || !r.get(f[9], at, &call.end_ns) ||
        !r.get(f[10], at, &call.device) || !r.get(f[11], at, &call.in_split_bytes) ||
        !r.get(f[12], at, &call.out_split_bytes) || (f.size() > 13 && !r.get(f[13], at, &call.annotation))) {
      return false;
    }
    if (call.end_ns < call.start_ns) return r.fail(at, "a call ends before it starts");
    if (!time_in_bounds(call.start_ns) || !time_in_bounds(call.end_ns)) return r.fail(at, kOutOfBounds);
    // The canonical rank-list text (a key when calls are matched), as scaleprof writes it.
    const auto ranks = analysis::parse_rank_list(call.group_ranks);
    if (!ranks || analysis::format_rank_list(*ranks) != call.group_ranks) {
      return r.fail(at, "group ranks must be a rank list like 0-7,16");
    }
    out->calls.push_back(std::move(call));
  }
  if (!r.field(o, where, "steps", &v)) return false;
  if (v.get_array().get(list) != simdjson::SUCCESS) return r.fail(where + ".steps", "expected a list");
  i = 0;
  for (simdjson::dom::element s : list) {
    const std::string at = fmt::format("{}.steps[{}]", where, i++);
    std::vector<simdjson::dom::element> f;
    analysis::StepRow step;
    if (!r.row(s, at, 8, &f) || !r.get(f[0], at, &step.step) || !r.get(f[1], at, &step.start_ns) ||
        !r.get(f[2], at, &step.end_ns) || !r.get(f[3], at, &step.host_busy_ns) ||
        !r.get(f[4], at, &step.dataloader_ns) || !r.get(f[5], at, &step.gpu_busy_ns) ||
        !r.get(f[6], at, &step.comm_ns) || !r.get(f[7], at, &step.host_idle_ns)) {
      return false;
    }
    if (step.end_ns < step.start_ns) return r.fail(at, "a step ends before it starts");
    if (!time_in_bounds(step.start_ns) || !time_in_bounds(step.end_ns)) return r.fail(at, kOutOfBounds);
    out->steps.push_back(step);
  }
  return true;
}

}  // namespace

std::string write_partial(const PartialResults& partial) {
  std::string out = fmt::format("{{\"format\":\"scaleprof-partial\",\"version\":{},\"report\":{},\"ranks\":[\n",
                                kVersion, json_quote(partial.report));
  for (size_t i = 0; i < partial.ranks.size(); ++i) {
    const analysis::RankCollectives& r = partial.ranks[i];
    out += fmt::format("{{\"rank\":{},\"path\":{},\"host\":{},\"world_size\":{},\"gpu\":{},\"groups\":[", r.rank,
                       json_quote(r.path), json_quote(r.host), r.world_size, r.gpu ? "true" : "false");
    for (size_t g = 0; g < r.groups.size(); ++g) {
      const analysis::GroupConfig& pg = r.groups[g];
      out += fmt::format("{}[{},{},{},{}]", g ? "," : "", json_quote(pg.name), json_quote(pg.desc), pg.size,
                         int_list(analysis::parse_rank_list(pg.ranks).value_or(std::vector<int64_t>{})));
    }
    out += "],\"calls\":[";
    for (size_t c = 0; c < r.calls.size(); ++c) {
      const analysis::CollectiveCall& k = r.calls[c];
      // The annotation (all-to-all only) is written only when there is one: other calls' rows stay 13 values.
      out += fmt::format("{}\n[{},{},{},{},{},{},{},{},{},{},{},{},{}{}]", c ? "," : "", json_quote(k.type),
                         json_quote(k.group), json_quote(k.group_ranks), k.group_size, k.seq, k.step, k.bytes,
                         json_quote(k.dtype), k.start_ns, k.end_ns, k.device ? "true" : "false",
                         int_list(k.in_split_bytes), int_list(k.out_split_bytes),
                         k.annotation.empty() ? std::string() : "," + json_quote(k.annotation));
    }
    out += "],\"steps\":[";
    for (size_t s = 0; s < r.steps.size(); ++s) {
      const analysis::StepRow& st = r.steps[s];
      out += fmt::format("{}\n[{},{},{},{},{},{},{},{}]", s ? "," : "", st.step, st.start_ns, st.end_ns,
                         st.host_busy_ns, st.dataloader_ns, st.gpu_busy_ns, st.comm_ns, st.host_idle_ns);
    }
    out += fmt::format("]}}{}\n", i + 1 < partial.ranks.size() ? "," : "");
  }
  out += "]}\n";
  return out;
}

Result<PartialResults> parse_partial(std::string_view path, std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(simdjson::padded_string(text)).get(doc); err != simdjson::SUCCESS) {
    return Error{fmt::format("{}: not a partial-results file: {}", path, simdjson::error_message(err))};
  }
  Reader r{path, {}};
  simdjson::dom::object top;
  if (doc.get_object().get(top) != simdjson::SUCCESS) return Error{fmt::format("{}: not a partial-results file", path)};
  std::string format;
  int64_t version = 0;
  PartialResults out;
  simdjson::dom::element v;
  if (!r.field(top, "top level", "format", &v) || !r.get(v, "format", &format)) return Error{r.error};
  if (format != "scaleprof-partial") return Error{fmt::format("{}: not a partial-results file", path)};
  if (!r.field(top, "top level", "version", &v) || !r.get(v, "version", &version)) return Error{r.error};
  if (version != kVersion) {
    return Error{
        fmt::format("{}: partial-results version {} (this scaleprof reads version {})", path, version, kVersion)};
  }
  if (!r.field(top, "top level", "report", &v) || !r.get(v, "report", &out.report)) return Error{r.error};
  if (out.report != "collectives" && out.report != "stragglers") {
    return Error{fmt::format("{}: report: unknown report '{}'", path, out.report)};
  }
  simdjson::dom::array ranks;
  if (!r.field(top, "top level", "ranks", &v)) return Error{r.error};
  if (v.get_array().get(ranks) != simdjson::SUCCESS) return Error{fmt::format("{}: ranks: expected a list", path)};
  size_t i = 0;
  for (simdjson::dom::element e : ranks) {
    analysis::RankCollectives rank;
    if (!read_rank(r, e, fmt::format("ranks[{}]", i++), &rank)) return Error{r.error};
    out.ranks.push_back(std::move(rank));
  }
  return out;
}

Result<PartialResults> merge_partials(const std::vector<std::string>& paths) {
  PartialResults merged;
  std::set<int64_t> seen;
  for (const std::string& path : paths) {
    auto text = read_named_file(path, kMaxShardBytes);
    if (const auto* failure = std::get_if<FileReadFailure>(&text)) {
      if (failure->what == FileReadFailure::What::kTooLarge) {
        return Error{fmt::format("{}: larger than {} bytes; not read", path, kMaxShardBytes), ErrorKind::kTooLarge};
      }
      return Error{fmt::format("{}: cannot open", path),
                   failure->what == FileReadFailure::What::kMissing ? ErrorKind::kNotFound : ErrorKind::kIo};
    }
    auto part = parse_partial(path, std::get<std::string>(text));
    if (!part) return part.error();
    if (merged.report.empty()) merged.report = part.value().report;
    if (part.value().report != merged.report) {
      return Error{fmt::format("{}: holds {} results, the first file {}", path, part.value().report, merged.report)};
    }
    for (analysis::RankCollectives& r : part.value().ranks) {
      if (!seen.insert(r.rank).second) return Error{fmt::format("{}: rank {} is in two shards", path, r.rank)};
      merged.ranks.push_back(std::move(r));
    }
  }
  std::sort(merged.ranks.begin(), merged.ranks.end(),
            [](const analysis::RankCollectives& a, const analysis::RankCollectives& b) { return a.rank < b.rank; });
  return merged;
}

}  // namespace scaleprof::engine
