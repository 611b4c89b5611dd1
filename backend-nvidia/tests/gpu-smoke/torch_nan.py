"""A matmul that meets a NaN, for checking that findings come from library
(cuBLAS) kernels. Prints how many outputs are NaN."""
import torch

a = torch.randn(256, 256, device="cuda")
b = torch.randn(256, 256, device="cuda")
a[3, 5] = float("nan")
c = a @ b
torch.cuda.synchronize()
print("nan outputs:", int(c.isnan().sum().item()))
