//! CDNA wave emulator: executes AMDGPU kernels on the host to test instrumentation and replay launches.
