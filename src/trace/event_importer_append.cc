// The event importer's part in parallel reading: appending the rows a worker imported from one
// window into the rank's tables, as if this importer had imported them itself.
#include <vector>

#include "trace/event_importer.h"

namespace scaleprof::trace {

namespace {

template <class T>
void append_column(std::vector<T>& into, const std::vector<T>& from) {
  into.insert(into.end(), from.begin(), from.end());
}

void append_column(NarrowInt64Column& into, const NarrowInt64Column& from) {
  into.append(from);
}

// Appends `from` with each value passed through `map`: a part's string ids and row numbers made the
// rank's. Sized once and written in place (push_back per value was a measurable share of the thread
// that merges).
template <class T, class Map>
void append_mapped(std::vector<T>& into, const std::vector<T>& from, Map map) {
  const size_t at = into.size();
  into.resize(at + from.size());
  T* out = into.data() + at;
  for (size_t i = 0; i < from.size(); ++i) out[i] = map(from[i]);
}

}  // namespace

bool EventImporter::append_part(RankTrace& p, std::vector<StringId>* rank_ids, size_t part_dropped_warnings,
                                const Summed& part_summed) {
  RankTrace& t = *out_;
  int64_t summed_dur = 0;
  int64_t summed_bytes = 0;
  if (__builtin_add_overflow(summed_.dur_ns, part_summed.dur_ns, &summed_dur) || summed_dur > kMaxSummedNs ||
      __builtin_add_overflow(summed_.memory_bytes, part_summed.memory_bytes, &summed_bytes) ||
      summed_bytes > kMaxSummedBytes) {
    return false;
  }
  // Strings and tracks in the part's first-seen order, which is the order the serial reader meets
  // them in: the ids come out the same. A reused part's strings seen in earlier windows were merged
  // then (and, seen before this window, are no string this window shows the rank first).
  std::vector<StringId>& sid = *rank_ids;
  if (sid.empty()) sid.push_back(0);
  for (size_t i = sid.size(); i < p.strings.size(); ++i) {
    sid.push_back(t.strings.intern_from(p.strings, static_cast<StringId>(i)));
  }
  std::vector<uint32_t> track(p.tracks.size(), 0);
  for (size_t i = 0; i < p.tracks.size(); ++i) {
    TrackKey key{p.tracks.pid[i], p.tracks.tid[i], sid[p.tracks.pid_label[i]], sid[p.tracks.tid_label[i]]};
    auto [it, inserted] = tracks_.try_emplace(key, static_cast<uint32_t>(t.tracks.size()));
    if (inserted) {
      t.tracks.pid.push_back(key.pid);
      t.tracks.tid.push_back(key.tid);
      t.tracks.pid_label.push_back(key.pid_label);
      t.tracks.tid_label.push_back(key.tid_label);
    }
    track[i] = it->second;
  }
  last_track_ = kNoTrack;

  const auto row0 = static_cast<uint32_t>(t.events.size());
  const auto index0 = static_cast<uint32_t>(t.stats.events_total);
  const auto rank_string = [&](StringId id) { return sid[id]; };
  const auto rank_row = [row0](uint32_t r) { return r + row0; };
  EventTable& e = t.events;
  const EventTable& q = p.events;
  append_column(e.ts, q.ts);
  append_column(e.dur, q.dur);
  append_mapped(e.name, q.name, rank_string);
  append_mapped(e.cat_name, q.cat_name, rank_string);
  append_column(e.cat, q.cat);
  append_column(e.phase, q.phase);
  append_mapped(e.track, q.track, [&](uint32_t tr) { return track[tr]; });
  append_column(e.correlation, q.correlation);
  append_column(e.external_id, q.external_id);
  append_column(e.stream, q.stream);
  append_mapped(e.file_index, q.file_index, [&](uint32_t fi) { return fi + index0; });

  DeviceArgsTable& d = t.device_args;
  const DeviceArgsTable& pd = p.device_args;
  append_mapped(d.event, pd.event, rank_row);
  append_column(d.device, pd.device);
  append_column(d.bytes, pd.bytes);
  append_column(d.bandwidth_gbps, pd.bandwidth_gbps);
  append_column(d.grid_x, pd.grid_x);
  append_column(d.grid_y, pd.grid_y);
  append_column(d.grid_z, pd.grid_z);
  append_column(d.block_x, pd.block_x);
  append_column(d.block_y, pd.block_y);
  append_column(d.block_z, pd.block_z);
  append_column(d.registers_per_thread, pd.registers_per_thread);
  append_column(d.shared_memory, pd.shared_memory);
  append_column(d.blocks_per_sm, pd.blocks_per_sm);
  append_column(d.warps_per_sm, pd.warps_per_sm);
  append_column(d.occupancy_pct, pd.occupancy_pct);

  CollectiveTable& c = t.collectives;
  const CollectiveTable& pc = p.collectives;
  append_mapped(c.event, pc.event, rank_row);
  append_mapped(c.collective_name, pc.collective_name, rank_string);
  append_mapped(c.dtype, pc.dtype, rank_string);
  append_column(c.in_msg_nelems, pc.in_msg_nelems);
  append_column(c.out_msg_nelems, pc.out_msg_nelems);
  append_column(c.group_size, pc.group_size);
  append_mapped(c.process_group_name, pc.process_group_name, rank_string);
  append_mapped(c.process_group_desc, pc.process_group_desc, rank_string);
  append_mapped(c.process_group_ranks, pc.process_group_ranks, rank_string);
  append_column(c.seq, pc.seq);
  append_column(c.peer_rank, pc.peer_rank);
  append_mapped(c.in_split_sizes, pc.in_split_sizes, rank_string);
  append_mapped(c.out_split_sizes, pc.out_split_sizes, rank_string);

  MemoryTable& m = t.memory;
  const MemoryTable& pm = p.memory;
  append_mapped(m.event, pm.event, rank_row);
  append_column(m.bytes, pm.bytes);
  append_column(m.total_allocated, pm.total_allocated);
  append_column(m.total_reserved, pm.total_reserved);
  append_column(m.device_type, pm.device_type);
  append_column(m.device_id, pm.device_id);
  append_column(m.addr, pm.addr);

  ShapesTable& sh = t.shapes;
  const ShapesTable& ps = p.shapes;
  append_mapped(sh.event, ps.event, rank_row);
  append_mapped(sh.input_dims, ps.input_dims, rank_string);
  append_mapped(sh.input_types, ps.input_types, rank_string);
  append_mapped(sh.concrete_inputs, ps.concrete_inputs, rank_string);

  SyncWaitTable& w = t.sync_waits;
  const SyncWaitTable& pw = p.sync_waits;
  append_mapped(w.event, pw.event, rank_row);
  append_column(w.record_correlation, pw.record_correlation);
  append_column(w.wait_on_stream, pw.wait_on_stream);

  CounterArgsTable& k = t.counter_args;
  const CounterArgsTable& pk = p.counter_args;
  append_mapped(k.event, pk.event, rank_row);
  append_mapped(k.name, pk.name, rank_string);
  append_column(k.value, pk.value);

  ReadStats& st = t.stats;
  const ReadStats& ps_ = p.stats;
  st.events_total += ps_.events_total;
  st.metadata_events += ps_.metadata_events;
  st.flow_events += ps_.flow_events;
  st.counter_events += ps_.counter_events;
  st.other_events += ps_.other_events;
  st.rejected_events += ps_.rejected_events;
  st.fractional_timestamps |= ps_.fractional_timestamps;
  summed_.dur_ns = summed_dur;
  summed_.memory_bytes = summed_bytes;
  for (Diagnostic& w : p.warnings) {
    if (t.warnings.size() < kMaxWarningsPerFile) {
      t.warnings.push_back(std::move(w));
    } else {
      ++warnings_dropped_;
    }
  }
  warnings_dropped_ += part_dropped_warnings;
  return true;
}

}  // namespace scaleprof::trace
