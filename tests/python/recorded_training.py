"""The recorded scaleprof run the tests' trainings make for the scalability report (sharded_stack.py,
gloo_pipeline.py): a scaleprof.Run under a root, `epochs` epochs of `steps` timed steps, the first epoch
profiled into the run's traces/ (its first step warms up, the rest are recorded)."""
import contextlib


def record_epochs(root, experiment, strategy, epochs, steps, one_step, **profiler_kwargs):
    """Runs one_step() `steps` times per epoch inside a scaleprof.Run; profiler_kwargs go to the profiler."""
    import scaleprof
    import torch.distributed as dist

    with scaleprof.Run(experiment=experiment, strategy=strategy, root=root) as rec:
        for epoch in range(epochs):
            prof = (rec.torch_profiler(wait=0, warmup=1, active=steps - 1, **profiler_kwargs)
                    if epoch == 0 else contextlib.nullcontext())
            dist.barrier()  # every rank's epoch starts together
            with prof, rec.epoch(epoch):
                for _ in range(steps):
                    with rec.step():
                        one_step()
                    if epoch == 0:
                        prof.step()
