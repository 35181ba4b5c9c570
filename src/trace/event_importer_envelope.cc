// The event importer's document-level part: the members of the envelope around traceEvents
// (distributedInfo, deviceProperties, baseTimeNanoseconds, ...) and a whole document parsed at once.
#include <fmt/format.h>

#include "trace/event_importer.h"

namespace scaleprof::trace {

simdjson::error_code EventImporter::import_distributed_info(od::value& v) {
  od::object obj;
  if (v.get_object().get(obj)) return simdjson::SUCCESS;  // not an object: ignore
  DistributedInfo info;
  for (auto field_result : obj) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return e;
    std::string_view k = raw_key(field);
    od::value fv = field.value();
    int64_t n = 0;
    std::string_view s;
    if (k == "backend" && read_string(fv, &s)) {
      info.backend = s;
    } else if (k == "rank" && read_int(fv, &n)) {
      info.rank = n;
    } else if (k == "world_size" && read_int(fv, &n)) {
      info.world_size = n;
    } else if (k == "nccl_version" && read_string(fv, &s)) {
      info.nccl_version = s;
    } else if (k == "pg_config") {
      od::array groups;
      if (fv.get_array().get(groups)) continue;
      for (auto group_result : groups) {
        od::object group;
        if (group_result.get_object().get(group)) continue;
        ProcessGroupConfig pg;
        for (auto gf_result : group) {
          od::field gf;
          if (auto e = std::move(gf_result).get(gf)) return e;
          std::string_view gk = raw_key(gf);
          od::value gv = gf.value();
          if (gk == "pg_name" && read_string(gv, &s)) {
            pg.name = s;
          } else if (gk == "pg_desc" && read_string(gv, &s)) {
            pg.desc = s;
          } else if (gk == "pg_size" && read_int(gv, &n)) {
            pg.size = n;
          } else if (gk == "ranks") {
            od::array ranks;
            if (gv.get_array().get(ranks)) continue;
            for (auto r : ranks) {
              od::value rv;
              if (!std::move(r).get(rv) && read_int(rv, &n)) pg.ranks.push_back(n);
            }
          }
        }
        info.pg_config.push_back(std::move(pg));
      }
    }
  }
  out_->metadata.distributed = std::move(info);
  return simdjson::SUCCESS;
}

simdjson::error_code EventImporter::import_device_properties(od::value& v) {
  od::array devices;
  if (v.get_array().get(devices)) return simdjson::SUCCESS;
  for (auto device_result : devices) {
    od::object device;
    if (device_result.get_object().get(device)) continue;
    DeviceProperties p;
    for (auto field_result : device) {
      od::field field;
      if (auto e = std::move(field_result).get(field)) return e;
      std::string_view k = raw_key(field);
      od::value fv = field.value();
      std::string_view s;
      if (k == "id") {
        read_int(fv, &p.id);
      } else if (k == "name" && read_string(fv, &s)) {
        p.name = s;
      } else if (k == "totalGlobalMem") {
        read_int(fv, &p.total_global_mem);
      } else if (k == "computeMajor") {
        read_int(fv, &p.compute_major);
      } else if (k == "computeMinor") {
        read_int(fv, &p.compute_minor);
      } else if (k == "numSms" || k == "multiProcessorCount") {
        read_int(fv, &p.num_sms);
      } else if (k == "maxThreadsPerMultiprocessor") {
        read_int(fv, &p.max_threads_per_multiprocessor);
      }
    }
    out_->metadata.devices.push_back(std::move(p));
  }
  return simdjson::SUCCESS;
}

std::string EventImporter::import(od::document& doc) {
  od::json_type type;
  if (auto e = doc.type().get(type)) return structural_error(doc, e);
  if (type == od::json_type::array) {
    out_->metadata.legacy_array = true;
    od::array events;
    if (auto e = doc.get_array().get(events)) return structural_error(doc, e);
    if (auto e = import_events(events)) return structural_error(doc, e);
  } else if (type == od::json_type::object) {
    od::object top;
    if (auto e = doc.get_object().get(top)) return structural_error(doc, e);
    bool saw_events = false;
    for (auto field_result : top) {
      od::field field;
      if (auto e = std::move(field_result).get(field)) return structural_error(doc, e);
      std::string_view k = raw_key(field);
      od::value v = field.value();
      simdjson::error_code e = simdjson::SUCCESS;
      if (k == "traceEvents") {
        od::array events;
        if (v.get_array().get(events)) {
          return fmt::format("{}:{}: traceEvents is not an array", path_, offset_of(v.raw_json_token().data()));
        }
        saw_events = true;
        e = import_events(events);
      } else {
        e = import_member(k, v);
      }
      if (e) return structural_error(doc, e);
    }
    if (!saw_events) {
      no_events_ = true;
      return fmt::format("{}:0: no traceEvents array in the trace", path_);
    }
  } else {
    return fmt::format("{}:0: the trace is neither a JSON object nor an array", path_);
  }
  // Anything after the top-level value is an error (e.g. two documents concatenated).
  const char* loc = nullptr;
  if (!doc.current_location().get(loc) && offset_of(loc) < size_) {
    return fmt::format("{}:{}: unexpected content after the end of the JSON document", path_, offset_of(loc));
  }
  finish_warnings();
  return {};
}

simdjson::error_code EventImporter::import_member(std::string_view k, od::value& v) {
  if (k == "baseTimeNanoseconds") {
    int64_t base = 0;
    if (read_int(v, &base)) out_->metadata.base_time_ns = base;
  } else if (k == "schemaVersion") {
    int64_t version = 0;
    if (read_int(v, &version)) out_->metadata.schema_version = version;
  } else if (k == "displayTimeUnit") {
    std::string_view s;
    if (read_string(v, &s)) out_->metadata.display_time_unit = s;
  } else if (k == "distributedInfo") {
    return import_distributed_info(v);
  } else if (k == "deviceProperties") {
    return import_device_properties(v);
  } else {
    std::string_view raw;
    if (auto e = simdjson::to_json_string(v).get(raw)) return e;
    out_->metadata.other.emplace_back(std::string(k), std::string(raw));
  }
  return simdjson::SUCCESS;
}

std::string EventImporter::import_envelope_member(std::string_view key, const simdjson::padded_string& bracketed,
                                                  uint64_t offset, od::parser& parser) {
  set_window(bracketed.data(), bracketed.size(), offset - 1);
  od::document doc;
  // A failed iterate leaves the document without a position (asking it for one reads a null
  // pointer): name the member's own offset instead.
  if (auto e = parser.iterate(bracketed).get(doc)) {
    return fmt::format("{}:{}: invalid JSON ({})", path_, offset, simdjson::error_message(e));
  }
  od::array one;
  if (auto e = doc.get_array().get(one)) return structural_error(doc, e);
  for (auto element : one) {
    od::value v;
    if (auto e = std::move(element).get(v)) return structural_error(doc, e);
    if (key == "traceEvents") return fmt::format("{}:{}: traceEvents is not an array", path_, offset);
    if (auto e = import_member(key, v)) return structural_error(doc, e);
  }
  return {};
}

}  // namespace scaleprof::trace
