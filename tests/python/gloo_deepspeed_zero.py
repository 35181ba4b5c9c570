"""DeepSpeed ZeRO (stage 2 or 3) over gloo on CPU with the profiler on; one trace per rank. Launched by
the tests with
    python -m torch.distributed.run --nproc_per_node N ... gloo_deepspeed_zero.py --trace-dir DIR --stage 3

DS_ACCELERATOR=cpu and no compiled ops (the caller's environment; examples/strategy_train.py says why).
A stack of --layers linear layers (model.layers.0 ... N-1) under deepspeed.initialize with a torch SGD;
--steps steps of engine(x), engine.backward(loss), engine.step(), each a ProfilerStep (warmup 1, then
the rest recorded) with with_stack=True: DeepSpeed's Python frames and the nn.Module frames are what
names the phase and layer of its collectives in the trace (docs/fsdp.md). ZeRO-3 without prefetching
and with no parameter kept gathered (stage3_prefetch_bucket_size, stage3_max_live_parameters and
stage3_max_reuse_distance 0, stage3_param_persistence_threshold 0), so each layer's forward pre-hook
all-gathers that layer's parameters and nothing else, and backward all-gathers them again.

With --delay-layer L --delay-ms D (ZeRO-3), every rank sleeps D ms inside DeepSpeed's all-gather of layer
L's parameters in forward: partition_parameters._dist_allgather_fn, which all_gather_coalesced calls to
join the collective, is wrapped while a forward pre-hook of layer L (run before DeepSpeed's own) has
marked that layer's fetch. Compute is untouched: the known answer of tests/python/test_deepspeed_zero_exposed.py.

With --root the same loop is a recorded scaleprof run (scaleprof.Run, experiment "deepspeed", strategy
"zero<stage>": --epochs epochs of --steps steps timed, the first epoch profiled into the run's traces/), for
the scalability report's "where scaling is lost" (tests/python/test_deepspeed_scaling_loss.py). The model,
the arguments and the loop are sharded_stack.py's, shared with gloo_fsdp.py.
"""
import argparse
import contextlib
import os
import time

os.environ.setdefault("DS_ACCELERATOR", "cpu")

import deepspeed  # noqa: E402
import deepspeed.ops  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from deepspeed.runtime.zero import partition_parameters  # noqa: E402

from sharded_stack import Stack, add_arguments, train  # noqa: E402


def delay_gathers_of(layer, delay_s):
    """Every all-gather DeepSpeed issues while `layer`'s forward pre-hooks run is joined delay_s late."""
    fetching = {"now": False}
    original = partition_parameters._dist_allgather_fn

    def delayed(*args, **kwargs):
        if fetching["now"]:
            time.sleep(delay_s)
        return original(*args, **kwargs)

    partition_parameters._dist_allgather_fn = delayed  # looked up as a global by all_gather_coalesced

    def mark(module, args):
        fetching["now"] = True

    def unmark(module, args, output):
        fetching["now"] = False

    # Ahead of DeepSpeed's pre-hook (which fetches), and cleared once the layer's forward has run.
    layer.register_forward_pre_hook(mark, prepend=True)
    layer.register_forward_hook(unmark)


def main():
    parser = argparse.ArgumentParser()
    add_arguments(parser, steps=6)
    parser.add_argument("--stage", type=int, choices=(2, 3), default=3)
    args = parser.parse_args()

    # No compiled ops: deepspeed's shared-memory all-reduce would be JIT-compiled; without it, gloo's.
    with contextlib.suppress(AttributeError, TypeError):
        deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
    deepspeed.init_distributed(dist_backend="gloo")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Stack(args.layers, args.width)
    zero = {"stage": args.stage}
    if args.stage == 3:
        zero.update(stage3_prefetch_bucket_size=0, stage3_max_live_parameters=0, stage3_max_reuse_distance=0,
                    stage3_param_persistence_threshold=0)
    config = {"train_micro_batch_size_per_gpu": args.batch, "gradient_accumulation_steps": 1,
              "zero_optimization": zero, "zero_allow_untested_optimizer": True, "steps_per_print": 1 << 30}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
    if args.delay_ms > 0:
        delay_gathers_of(model.layers[args.delay_layer], args.delay_ms / 1000.0)
    x = torch.randn(args.batch, args.width)

    def one_step():
        loss = engine(x).square().mean()
        engine.backward(loss)
        engine.step()

    train(args, one_step, experiment="deepspeed", strategy=f"zero{args.stage}", with_stack=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
