#!/usr/bin/env python3
"""transformer_step.py — GPT-style decoder training steps on synthetic tokens.

6 layers, d_model 512, 8 heads, FFN 2048, seq 256, batch 16, vocab 8192,
pre-norm blocks with a causal mask (torch.nn.TransformerEncoderLayer, which
runs scaled_dot_product_attention), tied nothing, AdamW (lr 3e-4).  Tokens
are random from a fixed seed and copied from pinned memory each step.

One change at a time for A/B pairs (`gpuprof diff`): --amp bf16 runs the
forward pass under torch.autocast(bfloat16); --sdpa math|flash|efficient
picks scaled_dot_product_attention's backend (torch.nn.attention.sdpa_kernel;
flash needs --amp bf16 and fails, saying so, when it cannot be used).

  python3 examples/transformer_step.py --steps 20 --warmup 3
  python3 examples/transformer_step.py --steps 20 --warmup 3 --amp bf16 --sdpa flash
"""
import argparse
import contextlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steploop  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class GPT(nn.Module):
    def __init__(self, vocab, d_model, heads, layers, seq, ffn):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=ffn, dropout=0.1,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq),
                             persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        x = self.blocks(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    steploop.add_common_args(p, steps=20, warmup=3)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--amp", choices=["none", "bf16"], default="none",
                   help="autocast the forward pass to bfloat16 (default: fp32)")
    p.add_argument("--sdpa", choices=["auto", "math", "flash", "efficient"], default="auto",
                   help="scaled_dot_product_attention backend (default: PyTorch picks)")
    args = p.parse_args(argv)
    steploop.setup(args)
    dev = torch.device(args.device)

    model = GPT(args.vocab, args.d_model, args.heads, args.layers, args.seq,
                4 * args.d_model).to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(args.seed)
    tokens = torch.randint(0, args.vocab, (args.batch_size, args.seq + 1), generator=g)
    if dev.type == "cuda":
        tokens = tokens.pin_memory()

    def amp():
        if args.amp == "bf16":
            return torch.autocast(dev.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def sdpa():
        if args.sdpa == "auto":
            return contextlib.nullcontext()
        try:  # torch >= 2.3
            from torch.nn.attention import SDPBackend, sdpa_kernel
            return sdpa_kernel({"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION,
                                "efficient": SDPBackend.EFFICIENT_ATTENTION}[args.sdpa])
        except ImportError:
            return torch.backends.cuda.sdp_kernel(enable_math=args.sdpa == "math",
                                                  enable_flash=args.sdpa == "flash",
                                                  enable_mem_efficient=args.sdpa == "efficient")

    def step(i, ann):
        batch = tokens.to(dev, non_blocking=True)
        x, y = batch[:, :-1], batch[:, 1:]
        with ann.range("forward"), amp(), sdpa():
            opt.zero_grad(set_to_none=True)
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        with ann.range("backward"):
            loss.backward()
        with ann.range("optimizer"):
            opt.step()
        return loss

    steploop.run_steps(args, step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
