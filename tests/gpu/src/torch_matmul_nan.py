"""A float32 matrix product whose left operand holds one NaN: the NaN is
produced (propagated) inside the library's GEMM kernel, which xfpx must
report. Operands are built on the host and copied, so no framework kernel
touches the NaN before the GEMM; all checks run on the host."""

import hashlib
import sys

import torch


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # plain FP32 FFMA GEMM
    gen = torch.Generator().manual_seed(1234)
    a = torch.randn(256, 192, generator=gen, dtype=torch.float32)
    b = torch.randn(192, 128, generator=gen, dtype=torch.float32)
    a[17, 3] = float(sys.argv[1]) if len(sys.argv) > 1 else float("nan")
    c = (a.cuda() @ b.cuda()).cpu()
    torch.cuda.synchronize()

    expected = a.double() @ b.double()
    nan_rows = torch.isnan(c).any(dim=1).nonzero().flatten().tolist()
    finite = torch.cat([c[:17], c[18:]])
    close = torch.allclose(finite.double(), torch.cat([expected[:17], expected[18:]]), rtol=1e-4, atol=1e-3)
    ok = nan_rows == [17] and bool(torch.isnan(c[17]).all()) and close
    print("checksum", hashlib.sha256(c.numpy().tobytes()).hexdigest()[:16])
    print("self-check", "ok" if ok else f"FAILED (nan rows {nan_rows}, close {close})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
