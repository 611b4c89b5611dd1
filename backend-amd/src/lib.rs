//! AMD backend: CDNA code objects (containers, ELF, kernel descriptors), decoding and rewriting.
