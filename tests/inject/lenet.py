#!/usr/bin/env python3
"""LeNet-5-style CNN inference, a workload for fault-injection campaigns.

Weights and inputs are generated from a fixed seed on the CPU (no download),
the forward pass runs on the GPU with deterministic algorithms, and the
program prints one line that a faulty run must reproduce bit for bit:
`lenet: batch B, classes <argmax counts>, logits sha256 <hex>`.
Usage: lenet.py [--batch N] [--device cuda|cpu]. Exit 0, or 2 with one
`error:` line when the device is missing."""
import argparse
import hashlib
import os
import struct
import sys

# cuBLAS is deterministic only with a fixed workspace (set before CUDA starts)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    """conv5x5(6) - pool - conv5x5(16) - pool - fc120 - fc84 - fc10, ReLU."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("error: lenet: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(1234)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = LeNet().eval()  # weights from the seeded default initialisation
    images = torch.randn(a.batch, 1, 28, 28, generator=torch.Generator().manual_seed(42))
    model, images = model.to(a.device), images.to(a.device)
    with torch.no_grad():
        logits = model(images)
    out = logits.float().cpu().contiguous()
    counts = torch.bincount(out.argmax(1), minlength=10).tolist()
    words = out.view(torch.int32).flatten().tolist()
    digest = hashlib.sha256(struct.pack("<%di" % len(words), *words)).hexdigest()
    print("lenet: batch %d, classes %s, logits sha256 %s" % (a.batch, counts, digest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
