#!/usr/bin/env python3
"""resnet_step.py — torchvision ResNet-50 training steps on synthetic data.

Batch 128, fp32, 224x224, SGD (lr 0.1, momentum 0.9, wd 1e-4).  The batch
lives in pinned host memory and is copied to the GPU every step (as a data
loader would), so each step has its HtoD copies.  cudnn.benchmark is OFF by
default: autotuning picks kernels by timing, which would make two runs of the
same command launch different kernels (the fidelity cross-check compares two
runs kernel by kernel).

  python3 examples/resnet_step.py --steps 20 --warmup 3
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steploop  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    steploop.add_common_args(p, steps=20, warmup=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--cudnn-benchmark", action="store_true")
    p.add_argument("--data", choices=["host", "gpu"], default="host",
                   help="host: copy the pinned batch every step; gpu: keep it on the GPU")
    args = p.parse_args(argv)
    steploop.setup(args)
    import torchvision
    torch.backends.cudnn.benchmark = args.cudnn_benchmark and not args.deterministic
    dev = torch.device(args.device)

    model = torchvision.models.resnet50(weights=None, num_classes=1000).to(dev)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    g = torch.Generator().manual_seed(args.seed)
    images = torch.randn(args.batch_size, 3, args.image_size, args.image_size, generator=g)
    labels = torch.randint(0, 1000, (args.batch_size,), generator=g)
    if args.data == "gpu":
        images, labels = images.to(dev), labels.to(dev)
    elif dev.type == "cuda":
        images, labels = images.pin_memory(), labels.pin_memory()

    def step(i, ann):
        x = images.to(dev, non_blocking=True)
        y = labels.to(dev, non_blocking=True)
        with ann.range("forward"):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
        with ann.range("backward"):
            loss.backward()
        with ann.range("optimizer"):
            opt.step()
        return loss

    steploop.run_steps(args, step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
