"""Device check: a load phase (bf16 matmuls) for power/clock readings, then a profiled phase with known FLOPs."""
import json, os, sys, time
import torch
out = sys.argv[1]
dev = torch.device("cuda")
N = 8192
a = torch.randn(N, N, device=dev, dtype=torch.bfloat16); b = torch.randn(N, N, device=dev, dtype=torch.bfloat16)
for _ in range(3): a @ b
torch.cuda.synchronize()
# Load phase: 20 s of matmuls, timed with CUDA events.
t0 = time.time(); n = 0
start = torch.cuda.Event(enable_timing=True); end = torch.cuda.Event(enable_timing=True)
start.record()
while time.time() - t0 < 20:
    for _ in range(50): a @ b
    n += 50
    torch.cuda.synchronize()
end.record(); torch.cuda.synchronize()
ms = start.elapsed_time(end)
load = {"matmuls": n, "ms": ms, "tflops": 2 * N**3 * n / (ms / 1e3) / 1e12, "t_start": t0, "t_end": time.time()}
print("load", load, flush=True)
# Profiled phase: 4 steps, each 10 bf16 matmuls 8192^3 and a small conv net fwd/bwd in fp32.
net = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(64, 64, 3, padding=1),
                          torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(64, 3, 64, 64, device=dev); y = torch.randint(0, 10, (64,), device=dev)
sched = torch.profiler.schedule(wait=1, warmup=1, active=4)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                            schedule=sched, record_shapes=True, with_flops=True,
                            on_trace_ready=lambda p: p.export_chrome_trace(os.path.join(out, "trace.json"))) as prof:
    for step in range(6):
        for _ in range(10): c = a @ b
        loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        torch.cuda.synchronize()
        prof.step()
rows = []
for e in prof.key_averages():
    rows.append({"key": e.key, "count": e.count, "self_cpu_us": e.self_cpu_time_total, "cpu_total_us": e.cpu_time_total,
                 "self_device_us": getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0)),
                 "device_total_us": getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0)), "flops": e.flops})
json.dump({"load": load, "key_averages": rows, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)},
          open(os.path.join(out, "ka.json"), "w"), indent=1)
print("done", flush=True)
