// Kineto trace text the reader tests share: a small but realistic modern trace, a one-event trace,
// and gzip framing, so the reader, trace-set and hardening tests build their inputs one way.
#pragma once

#include <zlib.h>

#include <string>

namespace scaleprof::testing {

// `text` in gzip framing (zlib's deflate at `level`).
inline std::string gzip_text(const std::string& text, int level = 6) {
  z_stream zs{};
  deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, text.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A small but realistic modern trace: envelope keys before and after traceEvents, ns timestamps
// relative to baseTimeNanoseconds, a kernel joined to its launch, a collective, a memory event.
inline std::string modern_trace(int rank = 0) {
  return R"json({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100","numSms":132,"totalGlobalMem":85000000000}],
"distributedInfo":{"backend":"nccl","rank":)json" +
         std::to_string(rank) +
         R"json(,"world_size":2,"pg_count":1,"pg_config":[{"pg_name":"0","pg_desc":"default_pg","pg_size":2,"ranks":[0,1]}],"nccl_version":"2.21.5"},
"record_shapes":1,"displayTimeUnit":"ms","baseTimeNanoseconds":1727136000000000000,
"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":4242,"tid":4242,"ts":12.345,"dur":800.120,"args":{"External id":10}},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":4242,"tid":4242,"ts":20.001,"dur":30.5,"args":{"External id":12,"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,"tid":4242,"ts":25.000,"dur":5.100,"args":{"External id":12,"cbid":211,"correlation":77}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm","pid":0,"tid":7,"ts":31.200,"dur":9.800,"args":{"External id":12,"device":0,"stream":7,"correlation":77,"grid":[16,1,1],"block":[256,1,1],"blocks per SM":0.121212,"est. achieved occupancy %":1}},
  {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":20,"ts":50.0,"dur":100.0,"args":{"device":0,"stream":20,"correlation":80,"Collective name":"allreduce","dtype":"Float","In msg nelems":2049000,"Out msg nelems":2049000,"Group size":2,"Process Group Name":"0","Process Group Ranks":"[0, 1]"}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":60.0,"dur":2.0,"args":{"device":0,"stream":7,"correlation":81,"bytes":4096,"memory bandwidth (GB/s)":2.048}},
  {"ph":"s","id":77,"pid":4242,"tid":4242,"ts":25.000,"cat":"ac2g","name":"ac2g"},
  {"ph":"f","id":77,"pid":0,"tid":7,"ts":31.200,"cat":"ac2g","name":"ac2g","bp":"e"},
  {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":4242,"tid":4242,"ts":21.0,"args":{"Total Reserved":2097152,"Total Allocated":16384,"Bytes":16384,"Addr":1,"Device Id":0,"Device Type":1}},
  {"name":"process_name","ph":"M","pid":4242,"tid":0,"args":{"name":"python"}},
  {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":0.0,"dur":1000.0,"args":{"Op count":0}}
],
"traceName":"x.pt.trace.json","cupti_version":24})json";
}

// A trace whose traceEvents hold `event` alone.
inline std::string with_event(const std::string& event) {
  return "{\"traceEvents\":[\n" + event + "\n]}";
}

}  // namespace scaleprof::testing
