#!/usr/bin/env python3
"""timm_model.py — a few training steps of timm's resnet18 (pretrained=False:
nothing downloaded) on a fixed random batch of 64x64 images: cuDNN
convolutions and batch norm, SGD with momentum.  cuDNN runs deterministic
algorithms, chosen by heuristics rather than benchmarks (the choice and the
kernels launched do not depend on timing).  Steps [steps/3, 2*steps/3) run
between cudaProfilerStart/Stop.  Prints one line: RESULT steps=N loss=L (the
last step's loss).

  python3 examples/thirdparty/timm_model.py [--steps 20]
"""
import argparse
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import timm  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=10).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 3, 64, 64, generator=g).cuda()
    y = torch.randint(0, 10, (32,), generator=g).cuda()
    lo, hi = a.steps // 3, 2 * a.steps // 3
    for i in range(a.steps):
        if i == lo:
            torch.cuda.profiler.start()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i == hi - 1:
            torch.cuda.profiler.stop()
    print("RESULT steps=%d loss=%.6f" % (a.steps, float(loss)))


if __name__ == "__main__":
    main()
