/* xfpx-nvdisasm-cache: the fast path of the disassembly cache.
 *
 * NVBit runs its disassembler once per function, as `DISASSEMBLER OPTIONS
 * FILE`. The cache's shell wrapper answers a cached call with four
 * processes (a subshell, cat, sha256sum, cut) before the answer; this
 * program answers it alone: it computes the same key (SHA-256 of the
 * disassembler's tag, `|`, each option after a space, `|`, the bytes of
 * FILE), and when the cache holds a non-empty answer under it, writes it
 * out. Anything else (no answer yet, a file it cannot read, no settings)
 * goes to the wrapper script, with the same arguments, which owns misses,
 * busy marks and the real disassembler.
 *
 * Settings come from the environment the tool library sets in the
 * program before NVBit runs anything: XFPX_DISASM_CACHE_DIR (the cache
 * folder), XFPX_DISASM_CACHE_TAG (the disassembler's tag) and
 * XFPX_DISASM_CACHE_SCRIPT (the wrapper script). Plain C, no library. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    uint32_t h[8];
    uint8_t block[64];
    size_t used;
    uint64_t bits;
} Sha256;

static const uint32_t ROUND_K[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(Sha256 *s, const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t v[8];
    memcpy(v, s->h, sizeof(v));
    for (int i = 0; i < 64; i++) {
        uint32_t e = v[4], a = v[0];
        uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) + ROUND_K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
        memmove(&v[1], &v[0], 7 * sizeof(uint32_t));
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) s->h[i] += v[i];
}

static void sha_init(Sha256 *s) {
    static const uint32_t start[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                      0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
    memcpy(s->h, start, sizeof(start));
    s->used = 0;
    s->bits = 0;
}

static void sha_update(Sha256 *s, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    s->bits += (uint64_t)n * 8u;
    while (n > 0) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used == 64) {
            sha_block(s, s->block);
            s->used = 0;
        }
    }
}

static void sha_hex(Sha256 *s, char out[65]) {
    uint64_t bits = s->bits;
    uint8_t pad = 0x80;
    sha_update(s, &pad, 1);
    pad = 0;
    while (s->used != 56) sha_update(s, &pad, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha_update(s, len, 8);
    for (int i = 0; i < 32; i++) {
        uint8_t b = (uint8_t)(s->h[i / 4] >> (24 - 8 * (i % 4)));
        out[2 * i] = "0123456789abcdef"[b >> 4];
        out[2 * i + 1] = "0123456789abcdef"[b & 15];
    }
    out[64] = 0;
}

/* Hash the whole of file `path` into `s`; 0 when it cannot be read. */
static int hash_file(Sha256 *s, const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    uint8_t buf[1 << 16];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            close(fd);
            return 0;
        }
        sha_update(s, buf, (size_t)n);
    }
    close(fd);
    return 1;
}

/* Copy the cached answer at `path` to standard output; 0 when there is
 * none (missing or empty) or nothing was written yet. */
static int answer(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return 0;
    }
    char buf[1 << 16];
    int wrote = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(1, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) continue;
            /* output lost half-way: the caller sees a failure, not a
             * shortened listing */
            if (w <= 0) exit(1);
            done += w;
            wrote = 1;
        }
    }
    close(fd);
    return wrote;
}

int main(int argc, char **argv) {
    const char *dir = getenv("XFPX_DISASM_CACHE_DIR");
    const char *tag = getenv("XFPX_DISASM_CACHE_TAG");
    const char *script = getenv("XFPX_DISASM_CACHE_SCRIPT");
    if (script == NULL || *script == 0) {
        fprintf(stderr, "xfpx-nvdisasm-cache: XFPX_DISASM_CACHE_SCRIPT is not set (run by the xfpx tool only)\n");
        return 2;
    }
    if (dir != NULL && tag != NULL && argc >= 2) {
        Sha256 s;
        sha_init(&s);
        sha_update(&s, tag, strlen(tag));
        sha_update(&s, "|", 1);
        for (int i = 1; i < argc - 1; i++) {
            sha_update(&s, " ", 1);
            sha_update(&s, argv[i], strlen(argv[i]));
        }
        sha_update(&s, "|", 1);
        if (hash_file(&s, argv[argc - 1])) {
            char key[65];
            sha_hex(&s, key);
            size_t n = strlen(dir) + 66;
            char *path = (char *)malloc(n);
            if (path != NULL) {
                snprintf(path, n, "%s/%s", dir, key);
                if (answer(path)) return 0;
                free(path);
            }
        }
    }
    argv[0] = (char *)script;
    execv(script, argv);
    fprintf(stderr, "xfpx-nvdisasm-cache: cannot run %s: %s\n", script, strerror(errno));
    return 127;
}
