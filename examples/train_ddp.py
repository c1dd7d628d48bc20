#!/usr/bin/env python3
"""train_ddp.py — DistributedDataParallel training of the MNIST Net (synthetic).

Launch with torchrun; one process per GPU, NCCL:
  torchrun --standalone --nproc_per_node=2 examples/train_ddp.py --steps 100
Two processes on ONE GPU (to test multi-process tracing on a 1-GPU box):
  torchrun --standalone --nproc_per_node=2 examples/train_ddp.py --same-gpu
NCCL refuses two ranks on one device ("Duplicate GPU detected"), so --same-gpu
switches the default backend to gloo, which all-reduces CUDA tensors through
host memory.  Without torchrun it runs as a world of one.

Each rank draws its own synthetic batches (seed + rank), marks each step with
an NVTX range "step <i>", and rank 0 prints the RESULT line (steploop.py),
with world_size and backend appended.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steploop  # noqa: E402
from train_mnist import Net  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    steploop.add_common_args(p, steps=100, warmup=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--same-gpu", action="store_true",
                   help="every rank on cuda:0 (default backend becomes gloo)")
    p.add_argument("--backend", default=None, help="nccl (default) or gloo")
    p.add_argument("--pool", type=int, default=64, help="distinct batches per rank")
    args = p.parse_args(argv)

    for k, v in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"),
                 ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29511")):
        os.environ.setdefault(k, v)
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    backend = args.backend or ("gloo" if args.same_gpu else "nccl")
    gpu = 0 if args.same_gpu else local_rank
    torch.cuda.set_device(gpu)
    dev = torch.device("cuda", gpu)
    args.device = str(dev)
    dist.init_process_group(backend=backend)
    world = dist.get_world_size()

    args.seed += rank
    steploop.setup(args)
    torch.manual_seed(1)  # same initial weights on every rank (DDP broadcasts anyway)
    model = DDP(Net().to(dev), device_ids=[gpu])
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    g = torch.Generator().manual_seed(args.seed)
    images = torch.randn(args.pool, args.batch_size, 1, 28, 28, generator=g).pin_memory()
    labels = torch.randint(0, 10, (args.pool, args.batch_size), generator=g).pin_memory()

    def step(i, ann):
        k = i % args.pool
        x = images[k].to(dev, non_blocking=True)
        y = labels[k].to(dev, non_blocking=True)
        with ann.range("forward"):
            opt.zero_grad(set_to_none=True)
            loss = F.nll_loss(model(x), y)
        with ann.range("backward"):  # DDP's all-reduce overlaps this
            loss.backward()
        with ann.range("optimizer"):
            opt.step()
        return loss

    steploop.run_steps(args, step, print_result=(rank == 0),
                       extra_result=f"world_size={world} backend={backend}")
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
