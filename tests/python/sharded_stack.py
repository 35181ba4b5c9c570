"""What the sharded trainings of the tests share (gloo_fsdp.py, gloo_deepspeed_zero.py): the model, the
arguments both take, and the loop that profiles their steps, into --trace-dir or, with --root, as a
recorded scaleprof run for the scalability report's "where scaling is lost".

Without --root: --steps steps, each a ProfilerStep (schedule: warmup 1, then the rest recorded), traces
written to --trace-dir. With --root: a scaleprof.Run under that root, --epochs epochs of --steps timed steps,
the first epoch profiled into the run's traces/ with the same schedule.
"""
import torch
from recorded_training import record_epochs
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


class Stack(torch.nn.Module):
    """--layers linear layers of --width (model.layers.0 ... N-1), each followed by a ReLU."""

    def __init__(self, layers, width):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def add_arguments(parser, steps):
    """The arguments of the model, the delay and the loop; `steps` is the script's default per epoch."""
    parser.add_argument("--trace-dir")
    parser.add_argument("--root", help="record a scaleprof run under this root instead of writing to --trace-dir")
    parser.add_argument("--epochs", type=int, default=2, help="with --root: epochs, the first one profiled")
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--delay-layer", type=int, default=-1)
    parser.add_argument("--delay-ms", type=float, default=0.0)


def train(args, one_step, experiment, strategy, **profiler_kwargs):
    """Runs one_step() --steps times under the profiler (or, with --root, as a recorded scaleprof run);
    profiler_kwargs go to torch.profiler.profile (record_shapes=True is the default here)."""
    profiler_kwargs.setdefault("record_shapes", True)
    if args.root:
        record_epochs(args.root, experiment, strategy, args.epochs, args.steps, one_step, **profiler_kwargs)
    else:
        when = schedule(wait=0, warmup=1, active=args.steps - 1)
        with profile(activities=[ProfilerActivity.CPU], schedule=when,
                     on_trace_ready=tensorboard_trace_handler(args.trace_dir), **profiler_kwargs) as prof:
            for _ in range(args.steps):
                one_step()
                prof.step()
