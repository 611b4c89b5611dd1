#!/usr/bin/env python3
"""A PyTorch training step as a benchmark: a small MLP classifier (LayerNorm,
GELU, dropout-free) trained with AdamW for a few iterations on a fixed
synthetic data set, fixed seed, deterministic algorithms.

Prints the loss per iteration and the harness lines `BENCH`, `SELFCHECK`
(the loss must fall by at least 25% and stay finite) and `CHECKSUM` (hash of
the trained parameters' bytes, so runs must match bit for bit).
"""
import hashlib
import os
import sys
import time

# Deterministic cuBLAS must be requested before CUDA is initialised.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def scale():
    s = os.environ.get("BENCH_SCALE", "1")
    try:
        v = float(s)
    except ValueError:
        v = -1.0
    if not 0.0 < v <= 1000.0:
        sys.stderr.write("error: BENCH_SCALE must be a number in (0, 1000], got '%s'\n" % s)
        sys.exit(2)
    return v


def main():
    if not torch.cuda.is_available():
        sys.stderr.write("error: no CUDA device visible to PyTorch\n")
        return 2
    torch.manual_seed(1234)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    iters = max(1, round(30 * scale()))
    n, d_in, hidden, classes, batch = 32768, 512, 1024, 16, 4096

    # A teacher network labels random inputs, so the task is learnable.
    g = torch.Generator(device="cpu").manual_seed(99)
    x_all = torch.randn(n, d_in, generator=g)
    teacher = torch.randn(d_in, classes, generator=g)
    y_all = (x_all @ teacher + 0.5 * torch.randn(n, classes, generator=g)).argmax(dim=1)
    x_all, y_all = x_all.to(dev), y_all.to(dev)

    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, hidden),
        torch.nn.LayerNorm(hidden),
        torch.nn.GELU(),
        torch.nn.Linear(hidden, hidden),
        torch.nn.GELU(),
        torch.nn.Linear(hidden, classes),
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
    loss_fn = torch.nn.CrossEntropyLoss()

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    losses = []
    for it in range(iters):
        lo = (it * batch) % n
        xb, yb = x_all[lo:lo + batch], y_all[lo:lo + batch]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        print("iter %d loss %.6f" % (it, losses[-1]))
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3

    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().numpy().tobytes())
    first, last = losses[0], losses[-1]
    finite = all(l == l and abs(l) != float("inf") for l in losses)
    ok = finite and (iters < 10 or last < 0.75 * first)
    print("BENCH train_mlp gpu_ms=%.3f" % ms)
    print("SELFCHECK %s loss %.4f -> %.4f over %d AdamW steps (must fall by 25%%, finite)"
          % ("PASS" if ok else "FAIL", first, last, iters))
    print("CHECKSUM %s" % h.hexdigest()[:16])
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
