#!/usr/bin/env python3
"""hf_trainer.py — a Hugging Face `Trainer` run on a small randomly
initialised GPT-2 (2 layers unless --n-layer, d 128, vocab 1000), as a new user writes it, with
nothing downloaded: no pretrained weights, no tokenizer; the dataset is random
token ids.  Steps [steps/3, 2*steps/3) run between cudaProfilerStart/Stop
(a callback), for `gpuprof run --capture-range=cudaProfilerApi`.
`--pad-varies` gives each sample a length of 16..64 tokens and pads each
batch to its longest (as a text job batches with DataCollatorWithPadding):
the input copies change size from step to step.
`--stall-step K [--stall-s S]` sleeps S seconds (2) in the Dataset when batch K
is fetched (stall.py: nothing in the Trainer changes); `--nvtx` marks each
step as an NVTX range `step N` from a callback (the hinted variant);
`--torch-profile A:B` runs torch.profiler over steps A..B from a
TrainerCallback (the job's own profiler beside gpuprof, issue #42) and writes
its Chrome trace to `--torch-profile-out FILE` (default $TORCH_PROFILE_OUT,
else hf_trainer.trace.json); each profiled step is a `ProfilerStep#N` there.
Prints one line: RESULT steps=N loss=L (L = the Trainer's mean training loss;
deterministic: fixed seeds, dropout off, SDPA's math backend — the fused
attention backends' backward passes accumulate with atomics).

  python3 examples/thirdparty/hf_trainer.py [--steps 30] [--n-layer 2] [--pad-varies] [--stall-step K] [--nvtx]
      [--torch-profile A:B [--torch-profile-out FILE]]
"""
import argparse
import dataclasses
import os
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments  # noqa: E402
from transformers import set_seed  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # stall.py, also when run through runpy
from stall import Stall  # noqa: E402

VOCAB, SEQ = 1000, 64


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, VOCAB, (n, SEQ), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class RandomLengths(RandomTokens):
    """--pad-varies: sample i keeps its first 16..64 tokens (drawn once, seeded)."""

    def __init__(self, n):
        super().__init__(n)
        g = torch.Generator().manual_seed(1)
        self.lens = torch.randint(16, SEQ + 1, (n,), generator=g).tolist()

    def __getitem__(self, i):
        ids = self.ids[i][:self.lens[i]]
        return {"input_ids": ids, "labels": ids}


def pad_to_longest(batch):
    """What DataCollatorWithPadding does without a tokenizer: pad to the batch's
    longest sample; padded labels -100 (ignored by the loss), attention_mask 0."""
    n = max(len(b["input_ids"]) for b in batch)
    ids = torch.zeros(len(batch), n, dtype=torch.long)
    labels = torch.full((len(batch), n), -100, dtype=torch.long)
    mask = torch.zeros(len(batch), n, dtype=torch.long)
    for k, b in enumerate(batch):
        m = len(b["input_ids"])
        ids[k, :m], labels[k, :m], mask[k, :m] = b["input_ids"], b["labels"], 1
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


class CaptureRange(TrainerCallback):
    """cudaProfilerStart before step lo, cudaProfilerStop after step hi - 1."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def on_step_begin(self, args, state, control, **kw):
        if state.global_step == self.lo:
            torch.cuda.profiler.start()

    def on_step_end(self, args, state, control, **kw):
        if state.global_step == self.hi:
            torch.cuda.profiler.stop()


class NvtxSteps(TrainerCallback):
    """An NVTX range `step N` around each optimizer step (the hint we ask for)."""

    def on_step_begin(self, args, state, control, **kw):
        torch.cuda.nvtx.range_push("step %d" % state.global_step)

    def on_step_end(self, args, state, control, **kw):
        torch.cuda.nvtx.range_pop()


class MemProbe(TrainerCallback):
    """--mem-probe: the caching allocator's reserved bytes at each step's end,
    on stderr (tests/gpu/memory_check.py compares them with gpuprof's memory
    view, docs/MEMORY.md)."""

    def on_step_end(self, args, state, control, **kw):
        print("MEMPROBE step=%d reserved=%d max_reserved=%d" % (state.global_step - 1, torch.cuda.memory_reserved(),
                                                                 torch.cuda.max_memory_reserved()), file=sys.stderr)


class TorchProfile(TrainerCallback):
    """torch.profiler.profile over global steps lo..hi, one ProfilerStep# a
    step (schedule: no wait, no warm-up, hi - lo + 1 active steps)."""

    def __init__(self, lo, hi, out):
        self.lo, self.hi, self.out, self.prof = lo, hi, out, None

    def on_step_begin(self, args, state, control, **kw):
        if state.global_step == self.lo and self.prof is None:
            P = torch.profiler
            self.prof = P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA],
                                  schedule=P.schedule(wait=0, warmup=0, active=self.hi - self.lo + 1, repeat=1),
                                  on_trace_ready=lambda p: p.export_chrome_trace(self.out))
            self.prof.start()

    def on_step_end(self, args, state, control, **kw):
        # global_step was counted up before this hook: the step that ended is global_step - 1
        if self.prof is not None and self.lo <= state.global_step - 1 <= self.hi:
            self.prof.step()
            if state.global_step - 1 == self.hi:
                self.prof.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--n-layer", type=int, default=2, help="GPT-2 blocks")
    ap.add_argument("--pad-varies", action="store_true", help="samples of 16..64 tokens, each batch padded to its longest")
    ap.add_argument("--stall-step", type=int, default=-1)
    ap.add_argument("--stall-s", type=float, default=2.0)
    ap.add_argument("--nvtx", action="store_true")
    ap.add_argument("--mem-probe", action="store_true", help="print torch.cuda.memory_reserved() each step (stderr)")
    ap.add_argument("--torch-profile", default="", metavar="A:B")
    ap.add_argument("--torch-profile-out", default=os.environ.get("TORCH_PROFILE_OUT", "hf_trainer.trace.json"))
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("hf_trainer.py: no CUDA device")
    for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
        fn = getattr(torch.backends.cuda, name, None)
        if fn:
            fn(False)
    set_seed(0)
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=128, n_layer=a.n_layer, n_head=4, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg)
    with tempfile.TemporaryDirectory(prefix="hf_trainer-") as out:
        want = dict(output_dir=out, max_steps=a.steps, per_device_train_batch_size=16, learning_rate=1e-3,
                    logging_strategy="no", save_strategy="no", report_to="none", seed=0, data_seed=0,
                    disable_tqdm=True, dataloader_num_workers=0, remove_unused_columns=False)
        # only the arguments this transformers version still has (names drift between majors)
        have = {f.name for f in dataclasses.fields(TrainingArguments)}
        args = TrainingArguments(**{k: v for k, v in want.items() if k in have})
        data = Stall((RandomLengths if a.pad_varies else RandomTokens)(512), a.stall_step, 16, a.stall_s)
        # the probe before NvtxSteps: it reads the step's end inside the step's range
        cbs = [CaptureRange(a.steps // 3, 2 * a.steps // 3)] + ([MemProbe()] if a.mem_probe else []) + \
            ([NvtxSteps()] if a.nvtx else [])
        if a.torch_profile:
            lo, hi = (int(v) for v in a.torch_profile.split(":"))
            cbs.append(TorchProfile(lo, hi, a.torch_profile_out))
        tr = Trainer(model=model, args=args, train_dataset=data, callbacks=cbs,
                     data_collator=pad_to_longest if a.pad_varies else None)
        # the metrics printer writes run times to stdout: only RESULT goes there
        from transformers.trainer_callback import PrinterCallback, ProgressCallback
        tr.remove_callback(PrinterCallback)
        tr.remove_callback(ProgressCallback)
        res = tr.train()
    print("RESULT steps=%d loss=%.6f" % (res.global_step, res.training_loss))


if __name__ == "__main__":
    main()
