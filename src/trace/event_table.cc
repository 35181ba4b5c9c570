#include "trace/event_table.h"

namespace scaleprof::trace {

namespace {
template <class T>
size_t column_bytes(const std::vector<T>& column) {
  return column.capacity() * sizeof(T);
}
size_t column_bytes(const NarrowInt64Column& column) {
  return column.memory_bytes();
}
}  // namespace

size_t RankTrace::memory_bytes() const {
  auto bytes = [](const auto&... columns) { return (column_bytes(columns) + ...); };
  const EventTable& e = events;
  size_t total = bytes(e.ts, e.dur, e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation, e.external_id, e.stream,
                       e.file_index);
  const DeviceArgsTable& d = device_args;
  total += bytes(d.event, d.device, d.bytes, d.bandwidth_gbps, d.grid_x, d.grid_y, d.grid_z, d.block_x, d.block_y,
                 d.block_z, d.registers_per_thread, d.shared_memory, d.blocks_per_sm, d.warps_per_sm, d.occupancy_pct);
  const CollectiveTable& c = collectives;
  total +=
      bytes(c.event, c.collective_name, c.dtype, c.in_msg_nelems, c.out_msg_nelems, c.group_size, c.process_group_name,
            c.process_group_desc, c.process_group_ranks, c.seq, c.peer_rank, c.in_split_sizes, c.out_split_sizes);
  total += bytes(memory.event, memory.bytes, memory.total_allocated, memory.total_reserved, memory.device_type,
                 memory.device_id, memory.addr);
  total += bytes(shapes.event, shapes.input_dims, shapes.input_types, shapes.concrete_inputs);
  total += bytes(sync_waits.event, sync_waits.record_correlation, sync_waits.wait_on_stream);
  total += bytes(counter_args.event, counter_args.name, counter_args.value);
  total += bytes(tracks.pid, tracks.tid, tracks.pid_label, tracks.tid_label);
  return total + strings.memory_bytes();
}

}  // namespace scaleprof::trace
