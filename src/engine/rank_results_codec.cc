// The byte encoding of one rank's results (encode_rank_results / decode_rank_results): what
// RankResultsStore spills to its temporary file past the memory budget and reads back. Plain structs are written as
// their bytes (checked trivially copyable, their sizes pinned below); strings and vectors as a length and their
// elements.
#include <cstring>
#include <type_traits>
#include <utility>

#include "engine/rank_results_store.h"

namespace scaleprof::engine {

namespace {

// Structs written as their bytes must hold no pointers (strings, vectors): checked here, so a string
// field added to one of them fails the build instead of writing an address.
template <class T>
constexpr bool kPlain = std::is_trivially_copyable_v<T>;

struct Writer {
  std::string out;

  template <class T>
  void raw(const T& value) {
    static_assert(kPlain<T>);
    out.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void str(const std::string& s) {
    raw(static_cast<uint64_t>(s.size()));
    out += s;
  }
  template <class T>
  void raw_vector(const std::vector<T>& v) {
    static_assert(kPlain<T>);
    raw(static_cast<uint64_t>(v.size()));
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
};

struct StoreReader {
  const std::string& in;
  size_t at = 0;
  bool ok = true;

  template <class T>
  void raw(T* value) {
    static_assert(kPlain<T>);
    if (!ok || in.size() - at < sizeof(T)) {
      ok = false;
      return;
    }
    std::memcpy(value, in.data() + at, sizeof(T));
    at += sizeof(T);
  }
  uint64_t count(size_t element_size) {
    uint64_t n = 0;
    raw(&n);
    if (ok && (element_size > 0 && n > (in.size() - at) / element_size)) ok = false;
    return ok ? n : 0;
  }
  void str(std::string* s) {
    const uint64_t n = count(1);
    s->assign(in.data() + at, n);
    at += n;
  }
  template <class T>
  void raw_vector(std::vector<T>* v) {
    static_assert(kPlain<T>);
    v->resize(count(sizeof(T)));
    if (!v->empty()) std::memcpy(v->data(), in.data() + at, v->size() * sizeof(T));
    at += v->size() * sizeof(T);
  }
};

// The structs with strings, field by field. Their sizes are checked so that a field added later
// fails the build here until it is written too (libstdc++'s string is 32 bytes with g++ and clang).
static_assert(sizeof(analysis::KernelStats) == 96, "KernelStats changed: update write/read below");
static_assert(sizeof(SlowLaunch) == 96, "SlowLaunch changed: update write/read below");
static_assert(sizeof(analysis::OperatorRow) == 136, "OperatorRow changed: update write/read below");
static_assert(sizeof(RankInputs) == 152, "RankInputs changed: update write/read below");

void write(Writer& w, const analysis::KernelStats& k) {
  w.str(k.name);
  w.raw(k.type);
  w.raw(k.others);
  w.raw(k.kernels);
  w.raw(k.duration);
}
void read(StoreReader& r, analysis::KernelStats* k) {
  r.str(&k->name);
  r.raw(&k->type);
  r.raw(&k->others);
  r.raw(&k->kernels);
  r.raw(&k->duration);
}

void write(Writer& w, const SlowLaunch& l) {
  w.raw(l.correlation);
  w.raw(l.launch_delay_ns);
  w.raw(l.cpu_duration_ns);
  w.raw(l.gpu_duration_ns);
  w.str(l.launch);
  w.str(l.kernel);
}
void read(StoreReader& r, SlowLaunch* l) {
  r.raw(&l->correlation);
  r.raw(&l->launch_delay_ns);
  r.raw(&l->cpu_duration_ns);
  r.raw(&l->gpu_duration_ns);
  r.str(&l->launch);
  r.str(&l->kernel);
}

void write(Writer& w, const analysis::OperatorRow& o) {
  w.str(o.name);
  w.raw(o.side);
  w.raw(o.user_annotation);
  w.raw(o.async);
  for (int64_t v : {o.calls, o.self_cpu_ns, o.cpu_total_ns, o.self_device_ns, o.device_total_ns, o.cpu_memory_bytes,
                    o.self_cpu_memory_bytes, o.device_memory_bytes, o.self_device_memory_bytes}) {
    w.raw(v);
  }
  for (double v : {o.self_cpu_pct, o.cpu_total_pct, o.self_device_pct}) w.raw(v);
}
void read(StoreReader& r, analysis::OperatorRow* o) {
  r.str(&o->name);
  r.raw(&o->side);
  r.raw(&o->user_annotation);
  r.raw(&o->async);
  for (int64_t* v :
       {&o->calls, &o->self_cpu_ns, &o->cpu_total_ns, &o->self_device_ns, &o->device_total_ns, &o->cpu_memory_bytes,
        &o->self_cpu_memory_bytes, &o->device_memory_bytes, &o->self_device_memory_bytes}) {
    r.raw(v);
  }
  for (double* v : {&o->self_cpu_pct, &o->cpu_total_pct, &o->self_device_pct}) r.raw(v);
}

// Phases and the step decomposition (issue 20), one function each way.
static_assert(sizeof(analysis::RegionTime) == 64, "RegionTime changed: update write/read below");
static_assert(sizeof(analysis::StepPhases) == 168, "StepPhases changed: update write/read below");
static_assert(sizeof(analysis::StepDecomposition) == 80, "StepDecomposition changed: update write/read below");

void write_phases(Writer& w, const analysis::RankPhases& p) {
  w.str(p.path);
  w.raw(p.has_kernels);
  w.raw(static_cast<uint64_t>(p.steps.size()));
  for (const analysis::StepPhases& s : p.steps) {
    for (int64_t v : {s.step, s.start_ns, s.end_ns}) w.raw(v);
    w.raw(s.host_ns);
    w.raw(s.kernels);
    w.raw(s.device_ns);
    w.raw(static_cast<uint64_t>(s.regions.size()));
    for (const analysis::RegionTime& r : s.regions) {
      w.str(r.name);
      for (int64_t v : {r.calls, r.host_ns, r.kernels, r.device_ns}) w.raw(v);
    }
  }
}
void read_phases(StoreReader& r, analysis::RankPhases* p) {
  r.str(&p->path);
  r.raw(&p->has_kernels);
  p->steps.resize(r.count(1));
  for (analysis::StepPhases& s : p->steps) {
    for (int64_t* v : {&s.step, &s.start_ns, &s.end_ns}) r.raw(v);
    r.raw(&s.host_ns);
    r.raw(&s.kernels);
    r.raw(&s.device_ns);
    s.regions.resize(r.count(1));
    for (analysis::RegionTime& region : s.regions) {
      r.str(&region.name);
      for (int64_t* v : {&region.calls, &region.host_ns, &region.kernels, &region.device_ns}) r.raw(v);
    }
  }
}
void write_decomposition(Writer& w, const analysis::RankDecomposition& d) {
  w.str(d.path);
  w.raw(d.device);
  w.raw_vector(d.steps);
}
void read_decomposition(StoreReader& r, analysis::RankDecomposition* d) {
  r.str(&d->path);
  r.raw(&d->device);
  r.raw_vector(&d->steps);
}

// Memory (issue 23).
static_assert(sizeof(analysis::MemoryHolder) == 48, "MemoryHolder changed: update write/read below");
static_assert(sizeof(analysis::DeviceMemory) == 192, "DeviceMemory changed: update write/read below");

void write_memory(Writer& w, const analysis::RankMemory& m) {
  w.raw(m.out_of_memory_events);
  w.raw(static_cast<uint64_t>(m.devices.size()));
  for (const analysis::DeviceMemory& d : m.devices) {
    w.raw(d.device_type);
    w.raw(d.device_id);
    for (int64_t v : {d.events, d.allocations, d.frees, d.allocated_bytes, d.first_ts_ns, d.last_ts_ns,
                      d.before_profiling, d.peak_allocated, d.peak_allocated_ts_ns, d.peak_reserved,
                      d.peak_reserved_ts_ns, d.min_allocated, d.final_allocated}) {
      w.raw(v);
    }
    w.raw(d.holders_known);
    w.raw(static_cast<uint64_t>(d.holders.size()));
    for (const analysis::MemoryHolder& h : d.holders) {
      w.str(h.name);
      w.raw(h.bytes);
      w.raw(h.allocations);
    }
    w.raw_vector(d.timeline);
    w.raw_vector(d.steps);
  }
}
void read_memory(StoreReader& r, analysis::RankMemory* m) {
  r.raw(&m->out_of_memory_events);
  m->devices.resize(r.count(1));
  for (analysis::DeviceMemory& d : m->devices) {
    r.raw(&d.device_type);
    r.raw(&d.device_id);
    for (int64_t* v : {&d.events, &d.allocations, &d.frees, &d.allocated_bytes, &d.first_ts_ns, &d.last_ts_ns,
                       &d.before_profiling, &d.peak_allocated, &d.peak_allocated_ts_ns, &d.peak_reserved,
                       &d.peak_reserved_ts_ns, &d.min_allocated, &d.final_allocated}) {
      r.raw(v);
    }
    r.raw(&d.holders_known);
    d.holders.resize(r.count(1));
    for (analysis::MemoryHolder& h : d.holders) {
      r.str(&h.name);
      r.raw(&h.bytes);
      r.raw(&h.allocations);
    }
    r.raw_vector(&d.timeline);
    r.raw_vector(&d.steps);
  }
}
// The critical path (issue 23).
void write_critical_path(Writer& w, const analysis::RankCriticalPath& p) {
  w.str(p.path);
  w.raw(p.device);
  w.raw(p.base_time_ns);
  w.raw(static_cast<uint64_t>(p.steps.size()));
  for (const analysis::StepCriticalPath& s : p.steps) {
    for (int64_t v : {s.step, s.start_ns, s.end_ns, s.hta_length_ns, s.segments, s.on_device_ns}) w.raw(v);
    w.raw(s.category_ns);
    w.raw(s.bound_by_ns);
    w.raw(s.hta_bound_by_ns);
    w.raw(static_cast<uint64_t>(s.top.size()));
    for (const analysis::PathItem& item : s.top) {
      w.str(item.name);
      w.raw(item.category);
      w.raw(item.bound_by);
      w.raw(item.ns);
      w.raw(item.segments);
    }
    w.raw(static_cast<uint64_t>(s.events.size()));
    for (const analysis::PathEvent& e : s.events) {
      for (int64_t v : {e.start_ns, e.end_ns, e.hta_weight_ns, e.stream, e.file_index, e.from_file_index,
                        e.to_file_index, e.from_flow_ns, e.to_flow_ns}) {
        w.raw(v);
      }
      for (bool b : {e.device, e.from_at_end, e.to_at_end}) w.raw(b);
      w.raw(e.type);
      w.raw(e.category);
      w.raw(e.bound_by);
      w.str(e.name);
      w.str(e.cat);
    }
  }
}
void read_critical_path(StoreReader& r, analysis::RankCriticalPath* p) {
  r.str(&p->path);
  r.raw(&p->device);
  r.raw(&p->base_time_ns);
  p->steps.resize(r.count(1));
  for (analysis::StepCriticalPath& s : p->steps) {
    for (int64_t* v : {&s.step, &s.start_ns, &s.end_ns, &s.hta_length_ns, &s.segments, &s.on_device_ns}) r.raw(v);
    r.raw(&s.category_ns);
    r.raw(&s.bound_by_ns);
    r.raw(&s.hta_bound_by_ns);
    s.top.resize(r.count(1));
    for (analysis::PathItem& item : s.top) {
      r.str(&item.name);
      r.raw(&item.category);
      r.raw(&item.bound_by);
      r.raw(&item.ns);
      r.raw(&item.segments);
    }
    s.events.resize(r.count(1));
    for (analysis::PathEvent& e : s.events) {
      for (int64_t* v : {&e.start_ns, &e.end_ns, &e.hta_weight_ns, &e.stream, &e.file_index, &e.from_file_index,
                         &e.to_file_index, &e.from_flow_ns, &e.to_flow_ns}) {
        r.raw(v);
      }
      for (bool* b : {&e.device, &e.from_at_end, &e.to_at_end}) r.raw(b);
      r.raw(&e.type);
      r.raw(&e.category);
      r.raw(&e.bound_by);
      r.str(&e.name);
      r.str(&e.cat);
    }
  }
}
static_assert(sizeof(analysis::DirectionBandwidth) == 152, "DirectionBandwidth changed: update write/read below");

void write(Writer& w, const analysis::DirectionBandwidth& b) {
  w.str(b.name);
  w.raw(b.copies);
  w.raw(b.bytes);
  w.raw(b.points);
  w.raw(b.weighted);
}
void read(StoreReader& r, analysis::DirectionBandwidth* b) {
  r.str(&b->name);
  r.raw(&b->copies);
  r.raw(&b->bytes);
  r.raw(&b->points);
  r.raw(&b->weighted);
}
void write(Writer& w, const analysis::CounterSeries& c) {
  w.raw(c.key);
  w.raw(c.pid);
  w.raw(c.tid);
  w.raw_vector(c.points);
  w.raw_vector(c.call_ns);
}
void read(StoreReader& r, analysis::CounterSeries* c) {
  r.raw(&c->key);
  r.raw(&c->pid);
  r.raw(&c->tid);
  r.raw_vector(&c->points);
  r.raw_vector(&c->call_ns);
}
void write(Writer& w, const std::string& s) {
  w.str(s);
}
void read(StoreReader& r, std::string* s) {
  r.str(s);
}
// An optional: a presence byte, then the value.
template <class T, class Fn>
void write_optional(Writer& w, const std::optional<T>& o, Fn fn) {
  w.raw(o.has_value());
  if (o) fn(*o);
}
template <class T, class Fn>
void read_optional(StoreReader& r, std::optional<T>* o, Fn fn) {
  bool present = false;
  r.raw(&present);
  if (present && r.ok) fn(&o->emplace());
}

// `trace flops` (issue 23).
// Exposed collectives (issue 33).
void write_exposed_rows(Writer& w, const std::vector<analysis::ExposedRow>& rows) {
  w.raw(static_cast<uint64_t>(rows.size()));
  for (const analysis::ExposedRow& row : rows) {
    for (const std::string* s : {&row.group, &row.group_ranks, &row.type, &row.layer}) w.str(*s);
    w.raw(row.phase);
    for (int64_t v : {row.calls, row.duration_ns, row.span_ns, row.exposed_ns, row.bytes}) w.raw(v);
  }
}
void read_exposed_rows(StoreReader& r, std::vector<analysis::ExposedRow>* rows) {
  rows->resize(r.count(1));
  for (analysis::ExposedRow& row : *rows) {
    for (std::string* s : {&row.group, &row.group_ranks, &row.type, &row.layer}) r.str(s);
    r.raw(&row.phase);
    for (int64_t* v : {&row.calls, &row.duration_ns, &row.span_ns, &row.exposed_ns, &row.bytes}) r.raw(v);
  }
}
void write_exposed(Writer& w, const analysis::RankExposedCollectives& e) {
  w.str(e.path);
  for (int64_t v : {e.steps, e.step_ns, e.calls, e.labelled, e.exposed_ns}) w.raw(v);
  w.raw(e.gpu);
  write_exposed_rows(w, e.totals);
  write_exposed_rows(w, e.layers);
  w.raw(static_cast<uint64_t>(e.notes.size()));
  for (const std::string& note : e.notes) w.str(note);
}
void read_exposed(StoreReader& r, analysis::RankExposedCollectives* e) {
  r.str(&e->path);
  for (int64_t* v : {&e->steps, &e->step_ns, &e->calls, &e->labelled, &e->exposed_ns}) r.raw(v);
  r.raw(&e->gpu);
  read_exposed_rows(r, &e->totals);
  read_exposed_rows(r, &e->layers);
  e->notes.resize(r.count(1));
  for (std::string& note : e->notes) r.str(&note);
}

void write_flops(Writer& w, const RankFlopsResult& f) {
  w.str(f.device);
  const analysis::RankFlops& x = f.flops;
  w.raw(static_cast<uint64_t>(x.operators.size()));
  for (const analysis::FlopOperator& o : x.operators) {
    w.str(o.name);
    w.raw(o.cls);
    w.raw(o.dtype);
    for (int64_t v : {o.calls, o.flops, o.host_ns, o.device_ns, o.kernels}) w.raw(v);
  }
  w.raw(static_cast<uint64_t>(x.kernels.size()));
  for (const analysis::FlopKernel& k : x.kernels) {
    w.str(k.name);
    w.raw(k.cls);
    w.raw(k.dtype);
    for (int64_t v : {k.calls, k.flops, k.device_ns}) w.raw(v);
  }
  w.raw_vector(x.steps);
  w.raw(x.has_device);
  for (int64_t v : {x.shaped_calls, x.counted_calls, x.unmodelled_calls, x.flops, x.flop_counter_flops, x.span_ns}) {
    w.raw(v);
  }
  w.raw(x.compute_flops);
  write_optional(w, f.modules, [&](const analysis::ModuleFlops& m) {
    w.raw(static_cast<uint64_t>(m.modules.size()));
    for (const analysis::TraceModule& t : m.modules) {
      w.str(t.name);
      w.str(t.cls);
      w.raw(t.depth);
      for (int64_t v : {t.parent, t.calls, t.flops, t.host_ns}) w.raw(v);
    }
    for (int64_t v : {m.steps, m.forward_flops, m.forward_compute_flops, m.all_flops}) w.raw(v);
  });
}
void read_flops(StoreReader& r, RankFlopsResult* f) {
  r.str(&f->device);
  analysis::RankFlops& x = f->flops;
  x.operators.resize(r.count(1));
  for (analysis::FlopOperator& o : x.operators) {
    r.str(&o.name);
    r.raw(&o.cls);
    r.raw(&o.dtype);
    for (int64_t* v : {&o.calls, &o.flops, &o.host_ns, &o.device_ns, &o.kernels}) r.raw(v);
  }
  x.kernels.resize(r.count(1));
  for (analysis::FlopKernel& k : x.kernels) {
    r.str(&k.name);
    r.raw(&k.cls);
    r.raw(&k.dtype);
    for (int64_t* v : {&k.calls, &k.flops, &k.device_ns}) r.raw(v);
  }
  r.raw_vector(&x.steps);
  r.raw(&x.has_device);
  for (int64_t* v :
       {&x.shaped_calls, &x.counted_calls, &x.unmodelled_calls, &x.flops, &x.flop_counter_flops, &x.span_ns}) {
    r.raw(v);
  }
  r.raw(&x.compute_flops);
  read_optional(r, &f->modules, [&](analysis::ModuleFlops* m) {
    m->modules.resize(r.count(1));
    for (analysis::TraceModule& t : m->modules) {
      r.str(&t.name);
      r.str(&t.cls);
      r.raw(&t.depth);
      for (int64_t* v : {&t.parent, &t.calls, &t.flops, &t.host_ns}) r.raw(v);
    }
    for (int64_t* v : {&m->steps, &m->forward_flops, &m->forward_compute_flops, &m->all_flops}) r.raw(v);
  });
}

template <class T>
void write_vector(Writer& w, const std::vector<T>& v) {
  w.raw(static_cast<uint64_t>(v.size()));
  for (const T& x : v) write(w, x);
}
template <class T>
void read_vector(StoreReader& r, std::vector<T>* v) {
  v->resize(r.count(1));
  for (T& x : *v) read(r, &x);
}

}  // namespace

std::string encode_rank_results(const RankResults& in) {
  Writer w;
  w.raw(in.rank);
  w.str(in.inputs.path);
  w.raw(in.inputs.stats);
  w.str(in.inputs.devices);
  write_optional(w, in.breakdown, [&](const auto& b) { w.raw(b); });
  write_optional(w, in.kernels, [&](const RankKernels& k) {
    w.raw_vector(k.partition);
    for (const auto& top : k.top) write_vector(w, top);
  });
  write_optional(w, in.idle, [&](const auto& streams) { w.raw_vector(streams); });
  write_optional(w, in.overlap, [&](const auto& o) { w.raw(o); });
  write_optional(w, in.launch, [&](const RankLaunches& l) {
    w.raw(l.summary);
    write_vector(w, l.slowest);
  });
  write_optional(w, in.ops, [&](const RankOperators& o) {
    write_vector(w, o.top);
    for (bool b : {o.has_device_time, o.has_memory, o.has_device_memory}) w.raw(b);
    for (int64_t v : {o.rows, o.calls, o.sum_self_cpu_ns, o.sum_self_device_ns, o.async_calls, o.dup_nodes_removed,
                      o.calls_ended_at_stop, o.unattributed_device_events}) {
      w.raw(v);
    }
    w.raw(o.fraction);
    w.raw(o.fraction_parts);
  });
  write_optional(w, in.steps, [&](const analysis::ProfilerSteps& s) {
    w.raw_vector(s.steps);
    w.raw(s.has_kernels);
    w.raw(s.kernels_outside_steps);
    w.raw(s.overlapping_steps);
  });
  write_optional(w, in.phases, [&](const analysis::RankPhases& p) { write_phases(w, p); });
  write_optional(w, in.decomposition, [&](const analysis::RankDecomposition& d) { write_decomposition(w, d); });
  write_optional(w, in.memory, [&](const analysis::RankMemory& m) { write_memory(w, m); });
  write_optional(w, in.critical_path, [&](const analysis::RankCriticalPath& p) { write_critical_path(w, p); });
  write_optional(w, in.counters, [&](const analysis::RankCounters& c) {
    w.raw(c.max_queue_length);
    w.raw(c.limit_source);
    w.raw(c.trace_duration_ns);
    w.raw_vector(c.queues);
    write_vector(w, c.bandwidth);
  });
  write_optional(w, in.counter_series, [&](const analysis::RankCounterSeries& c) {
    write_vector(w, c.queues);
    write_vector(w, c.names);
    write_vector(w, c.bandwidth);
    w.raw_vector(c.copies);
    w.raw_vector(c.bytes);
    w.raw(c.duration_ns);
  });
  write_optional(w, in.flops, [&](const RankFlopsResult& f) { write_flops(w, f); });
  write_optional(w, in.exposed, [&](const analysis::RankExposedCollectives& e) { write_exposed(w, e); });
  write_optional(w, in.pipeline, [&](const analysis::RankPipeline& p) {
    w.raw(p.rank);
    w.str(p.path);
    w.raw_vector(p.steps);
    w.raw_vector(p.peers);
    w.raw(p.calls_without_peer);
    w.raw(p.calls_outside_steps);
    w.raw(p.calls_peer_outside_group);
    w.raw(p.calls_peer_unmapped);
    w.raw(p.subgroups);
    w.raw(p.device);
  });
  return std::move(w.out);
}

bool decode_rank_results(const std::string& bytes, RankResults* out) {
  StoreReader r{bytes};
  *out = RankResults{};
  r.raw(&out->rank);
  r.str(&out->inputs.path);
  r.raw(&out->inputs.stats);
  r.str(&out->inputs.devices);
  read_optional(r, &out->breakdown, [&](auto* b) { r.raw(b); });
  read_optional(r, &out->kernels, [&](RankKernels* k) {
    r.raw_vector(&k->partition);
    for (auto& top : k->top) read_vector(r, &top);
  });
  read_optional(r, &out->idle, [&](auto* streams) { r.raw_vector(streams); });
  read_optional(r, &out->overlap, [&](auto* o) { r.raw(o); });
  read_optional(r, &out->launch, [&](RankLaunches* l) {
    r.raw(&l->summary);
    read_vector(r, &l->slowest);
  });
  read_optional(r, &out->ops, [&](RankOperators* o) {
    read_vector(r, &o->top);
    for (bool* b : {&o->has_device_time, &o->has_memory, &o->has_device_memory}) r.raw(b);
    for (int64_t* v : {&o->rows, &o->calls, &o->sum_self_cpu_ns, &o->sum_self_device_ns, &o->async_calls,
                       &o->dup_nodes_removed, &o->calls_ended_at_stop, &o->unattributed_device_events}) {
      r.raw(v);
    }
    r.raw(&o->fraction);
    r.raw(&o->fraction_parts);
  });
  read_optional(r, &out->steps, [&](analysis::ProfilerSteps* s) {
    r.raw_vector(&s->steps);
    r.raw(&s->has_kernels);
    r.raw(&s->kernels_outside_steps);
    r.raw(&s->overlapping_steps);
  });
  read_optional(r, &out->phases, [&](analysis::RankPhases* p) { read_phases(r, p); });
  read_optional(r, &out->decomposition, [&](analysis::RankDecomposition* d) { read_decomposition(r, d); });
  read_optional(r, &out->memory, [&](analysis::RankMemory* m) { read_memory(r, m); });
  read_optional(r, &out->critical_path, [&](analysis::RankCriticalPath* p) { read_critical_path(r, p); });
  read_optional(r, &out->counters, [&](analysis::RankCounters* c) {
    r.raw(&c->max_queue_length);
    r.raw(&c->limit_source);
    r.raw(&c->trace_duration_ns);
    r.raw_vector(&c->queues);
    read_vector(r, &c->bandwidth);
  });
  read_optional(r, &out->counter_series, [&](analysis::RankCounterSeries* c) {
    read_vector(r, &c->queues);
    read_vector(r, &c->names);
    read_vector(r, &c->bandwidth);
    r.raw_vector(&c->copies);
    r.raw_vector(&c->bytes);
    r.raw(&c->duration_ns);
  });
  read_optional(r, &out->flops, [&](RankFlopsResult* f) { read_flops(r, f); });
  read_optional(r, &out->exposed, [&](analysis::RankExposedCollectives* e) { read_exposed(r, e); });
  read_optional(r, &out->pipeline, [&](analysis::RankPipeline* p) {
    r.raw(&p->rank);
    r.str(&p->path);
    r.raw_vector(&p->steps);
    r.raw_vector(&p->peers);
    r.raw(&p->calls_without_peer);
    r.raw(&p->calls_outside_steps);
    r.raw(&p->calls_peer_outside_group);
    r.raw(&p->calls_peer_unmapped);
    r.raw(&p->subgroups);
    r.raw(&p->device);
  });
  return r.ok && r.at == bytes.size();
}

}  // namespace scaleprof::engine
