"""A function compiled by torch.compile (TorchInductor: one Triton kernel,
compiled at run time from generated source, with no line table) run for
300 steps; the input of step 200 holds one negative value, so log() makes
one NaN inside the compiled kernel at that launch and at no other. xfpx
must report it in the Triton kernel, at launch 200. All checks run on the
host; the checksum covers every step's output."""

import hashlib
import sys

import torch

STEPS = 300
NAN_STEP = 200


def f(x, w):
    return torch.log(x) * w + torch.sqrt(x)


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    compiled = torch.compile(f)
    gen = torch.Generator().manual_seed(7)
    w = torch.rand(1 << 16, generator=gen)
    w_dev = w.cuda()
    digest = hashlib.sha256()
    nan_steps = []
    close = True
    for step in range(STEPS):
        x = torch.rand(1 << 16, generator=gen) + 0.5
        if step == NAN_STEP:
            x[12345] = -1.0
        y = compiled(x.cuda(), w_dev).cpu()
        if torch.isnan(y).any():
            nan_steps.append(step)
        if step in (0, STEPS - 1):
            close = close and torch.allclose(y.double(), f(x.double(), w.double()), rtol=1e-5, atol=1e-5)
        digest.update(y.numpy().tobytes())
    ok = nan_steps == [NAN_STEP] and close
    print("checksum", digest.hexdigest()[:16])
    print("self-check", "ok" if ok else f"FAILED (NaN at steps {nan_steps}, close {close})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
