// What two readings of one trace must share: every table, string id, track, counter and the
// metadata, compared field by field (NaN equal to NaN). Warnings and the JSON size are left to the
// caller: they name byte offsets, which differ between two layouts of the same events.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::trace {

// Bit-for-bit, so NaN equals NaN; memcmp is never handed the null data() of an empty column.
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

inline void expect_same_tables(const RankTrace& a, const RankTrace& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (StringId i = 0; i < a.strings.size(); ++i) ASSERT_EQ(a.strings.view(i), b.strings.view(i)) << i;
  const EventTable& x = a.events;
  const EventTable& y = b.events;
  ASSERT_EQ(x.size(), y.size());
  EXPECT_EQ(x.ts, y.ts);
  EXPECT_EQ(x.dur.to_vector(), y.dur.to_vector());
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.cat_name, y.cat_name);
  EXPECT_EQ(x.cat, y.cat);
  EXPECT_EQ(x.phase, y.phase);
  EXPECT_EQ(x.track, y.track);
  EXPECT_EQ(x.correlation.to_vector(), y.correlation.to_vector());
  EXPECT_EQ(x.external_id.to_vector(), y.external_id.to_vector());
  EXPECT_EQ(x.stream.to_vector(), y.stream.to_vector());
  EXPECT_EQ(x.file_index, y.file_index);
  EXPECT_EQ(a.tracks.pid, b.tracks.pid);
  EXPECT_EQ(a.tracks.tid, b.tracks.tid);
  EXPECT_EQ(a.tracks.pid_label, b.tracks.pid_label);
  EXPECT_EQ(a.tracks.tid_label, b.tracks.tid_label);
  const DeviceArgsTable& d = a.device_args;
  const DeviceArgsTable& e = b.device_args;
  EXPECT_EQ(d.event, e.event);
  EXPECT_EQ(d.device, e.device);
  EXPECT_EQ(d.bytes, e.bytes);
  ASSERT_EQ(d.bandwidth_gbps.size(), e.bandwidth_gbps.size());
  for (size_t i = 0; i < d.bandwidth_gbps.size(); ++i) {
    EXPECT_EQ(std::isnan(d.bandwidth_gbps[i]), std::isnan(e.bandwidth_gbps[i]));
    if (!std::isnan(d.bandwidth_gbps[i])) {
      EXPECT_EQ(d.bandwidth_gbps[i], e.bandwidth_gbps[i]);
    }
  }
  EXPECT_EQ(d.grid_x, e.grid_x);
  EXPECT_EQ(d.grid_y, e.grid_y);
  EXPECT_EQ(d.grid_z, e.grid_z);
  EXPECT_EQ(d.block_x, e.block_x);
  EXPECT_EQ(d.block_y, e.block_y);
  EXPECT_EQ(d.block_z, e.block_z);
  EXPECT_EQ(d.registers_per_thread, e.registers_per_thread);
  EXPECT_EQ(d.shared_memory, e.shared_memory);
  EXPECT_TRUE(same_bits(d.occupancy_pct, e.occupancy_pct)) << "occupancy_pct";
  EXPECT_TRUE(same_bits(d.blocks_per_sm, e.blocks_per_sm)) << "blocks_per_sm";
  EXPECT_TRUE(same_bits(d.warps_per_sm, e.warps_per_sm)) << "warps_per_sm";
  EXPECT_EQ(a.collectives.event, b.collectives.event);
  EXPECT_EQ(a.collectives.collective_name, b.collectives.collective_name);
  EXPECT_EQ(a.collectives.dtype, b.collectives.dtype);
  EXPECT_EQ(a.collectives.in_msg_nelems, b.collectives.in_msg_nelems);
  EXPECT_EQ(a.collectives.out_msg_nelems, b.collectives.out_msg_nelems);
  EXPECT_EQ(a.collectives.group_size, b.collectives.group_size);
  EXPECT_EQ(a.collectives.process_group_name, b.collectives.process_group_name);
  EXPECT_EQ(a.collectives.process_group_desc, b.collectives.process_group_desc);
  EXPECT_EQ(a.collectives.process_group_ranks, b.collectives.process_group_ranks);
  EXPECT_EQ(a.collectives.seq, b.collectives.seq);
  EXPECT_EQ(a.collectives.peer_rank, b.collectives.peer_rank);
  EXPECT_EQ(a.collectives.in_split_sizes, b.collectives.in_split_sizes);
  EXPECT_EQ(a.collectives.out_split_sizes, b.collectives.out_split_sizes);
  EXPECT_EQ(a.memory.event, b.memory.event);
  EXPECT_EQ(a.memory.bytes, b.memory.bytes);
  EXPECT_EQ(a.memory.total_allocated, b.memory.total_allocated);
  EXPECT_EQ(a.memory.total_reserved, b.memory.total_reserved);
  EXPECT_EQ(a.memory.device_type, b.memory.device_type);
  EXPECT_EQ(a.memory.device_id, b.memory.device_id);
  EXPECT_EQ(a.memory.addr, b.memory.addr);
  EXPECT_EQ(a.shapes.event, b.shapes.event);
  EXPECT_EQ(a.shapes.input_dims, b.shapes.input_dims);
  EXPECT_EQ(a.shapes.input_types, b.shapes.input_types);
  EXPECT_EQ(a.shapes.concrete_inputs, b.shapes.concrete_inputs);
  EXPECT_EQ(a.sync_waits.event, b.sync_waits.event);
  EXPECT_EQ(a.sync_waits.record_correlation, b.sync_waits.record_correlation);
  EXPECT_EQ(a.sync_waits.wait_on_stream, b.sync_waits.wait_on_stream);
  EXPECT_EQ(a.counter_args.event, b.counter_args.event);
  EXPECT_EQ(a.counter_args.name, b.counter_args.name);
  EXPECT_EQ(a.counter_args.value, b.counter_args.value);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.stats.events_total, b.stats.events_total);
  EXPECT_EQ(a.stats.events_kept, b.stats.events_kept);
  EXPECT_EQ(a.stats.metadata_events, b.stats.metadata_events);
  EXPECT_EQ(a.stats.flow_events, b.stats.flow_events);
  EXPECT_EQ(a.stats.counter_events, b.stats.counter_events);
  EXPECT_EQ(a.stats.other_events, b.stats.other_events);
  EXPECT_EQ(a.stats.rejected_events, b.stats.rejected_events);
  EXPECT_EQ(a.stats.fractional_timestamps, b.stats.fractional_timestamps);
  EXPECT_EQ(a.metadata.base_time_ns, b.metadata.base_time_ns);
  EXPECT_EQ(a.metadata.other, b.metadata.other);
  EXPECT_EQ(a.metadata.devices.size(), b.metadata.devices.size());
}

}  // namespace scaleprof::trace
