//! NVIDIA backend: SASS instruction knowledge, lowering of plans to NVBit call insertions, device-record decoding.
