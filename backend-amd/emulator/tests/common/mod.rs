//! Helpers shared by the emulator's mutation tests.

/// A seeded xorshift64 generator: the same words on every run.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
