// Writes the emulator launches of the applications into the current
// directory: launches/<name>.json (code object, kernel, grid, buffers,
// arguments), launches/<name>.expect.json and data/<name>.<buffer>.{in,expected}.bin.
// Inputs come from the applications' seeded generators and expected outputs
// from their host references (src/reference.h), never from the emulator.
// Sizes are small (a few seconds of emulation at most) but exercise the same
// paths as the GPU runs: partial tiles at the edges, several blocks, every
// step kind of the sort.
#include "reference.h"
#include <algorithm>
#include <cassert>
#include <sys/stat.h>

struct Buffer {
  std::string name, elem;
  size_t count;
  std::vector<unsigned char> in;        // empty: zero-initialised
  std::vector<unsigned char> expected;  // empty: not an output
};

template <typename T> std::vector<unsigned char> bytes(const std::vector<T> &v) {
  const unsigned char *p = (const unsigned char *)v.data();
  return std::vector<unsigned char>(p, p + v.size() * sizeof(T));
}

static void save(const std::string &path, const std::vector<unsigned char> &b) {
  FILE *f = fopen(path.c_str(), "wb");
  if (!f || fwrite(b.data(), 1, b.size(), f) != b.size() || fclose(f) != 0) {
    perror(path.c_str());
    exit(1);
  }
}

struct Launch {
  std::string name, app, kernel;
  unsigned grid[2], block[2];
  std::vector<Buffer> buffers;
  std::vector<std::string> args;  // JSON objects, in parameter order

  Launch(const char *n, const char *a, const char *k, unsigned gx, unsigned gy, unsigned bx, unsigned by)
      : name(n), app(a), kernel(k), grid{gx, gy}, block{bx, by} {}
  template <typename T>
  void buffer(const char *buf, const char *elem, const std::vector<T> &in, const std::vector<T> &expected) {
    size_t n = std::max(in.size(), expected.size()) * sizeof(T);
    size_t es = std::string(elem) == "u8" ? 1 : 4;
    buffers.push_back(Buffer{buf, elem, n / es, bytes(in), bytes(expected)});
    args.push_back(std::string("{\"buffer\": \"") + buf + "\"}");
  }
  void u32(unsigned v) { args.push_back("{\"u32\": " + std::to_string(v) + "}"); }

  void write() const {
    std::string j = "{\n  \"code_object\": \"../{target}/" + app + ".co\",\n  \"kernel\": \"" + kernel +
                    "\",\n  \"grid\": [" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) +
                    ", 1],\n  \"block\": [" + std::to_string(block[0]) + ", " + std::to_string(block[1]) +
                    ", 1],\n  \"buffers\": {\n";
    std::string e = "{\n  \"outputs\": {\n", outs;
    for (size_t i = 0; i < buffers.size(); i++) {
      const Buffer &b = buffers[i];
      std::string file = "data/" + name + "." + b.name;
      j += "    \"" + b.name + "\": {\"elem\": \"" + b.elem + "\", \"count\": " + std::to_string(b.count) + ", \"init\": ";
      if (b.in.empty()) {
        j += "\"zero\"}";
      } else {
        j += "{\"file\": \"../" + file + ".in.bin\"}}";
        save(file + ".in.bin", b.in);
      }
      j += i + 1 < buffers.size() ? ",\n" : "\n";
      if (!b.expected.empty()) {
        save(file + ".expected.bin", b.expected);
        e += std::string(outs.empty() ? "" : ",\n") + "    \"" + b.name + "\": {\"expected\": \"../" + file +
             ".expected.bin\", \"ulp\": 0}";
        outs += std::string(outs.empty() ? "" : ", ") + "\"" + b.name + "\"";
      }
    }
    j += "  },\n  \"args\": [";
    for (size_t i = 0; i < args.size(); i++) j += (i ? ", " : "") + args[i];
    j += "],\n  \"outputs\": [" + outs + "]\n}\n";
    e += "\n  }\n}\n";
    save("launches/" + name + ".json", std::vector<unsigned char>(j.begin(), j.end()));
    save("launches/" + name + ".expect.json", std::vector<unsigned char>(e.begin(), e.end()));
  }
};

static unsigned blocks_for(unsigned n, unsigned per) { return (n + per - 1) / per; }

int main() {
  mkdir("launches", 0755);
  mkdir("data", 0755);
  const uint64_t seed = 1;
  {  // 200 x 150: partial blocks on the right and bottom edges.
    unsigned w = 200, h = 150;
    auto rgb = gray_input(seed, w, h);
    Launch l("gray", "gray", "rgb_to_gray", blocks_for(w, IMAGE_BLOCK), blocks_for(h, IMAGE_BLOCK), IMAGE_BLOCK, IMAGE_BLOCK);
    l.buffer<unsigned char>("gray", "u8", {}, gray_reference(rgb, w, h));
    l.buffer<unsigned char>("rgb", "u8", rgb, {});
    l.u32(w), l.u32(h);
    l.write();
  }
  {  // 100 x 100: six full tiles and a partial one along each dimension.
    unsigned n = 100;
    auto a = matmul_input(seed, n, 0), b = matmul_input(seed, n, 1);
    Launch l("matmul", "matmul", "matmul", blocks_for(n, MATMUL_TILE), blocks_for(n, MATMUL_TILE), MATMUL_TILE, MATMUL_TILE);
    l.buffer<float>("c", "f32", {}, matmul_reference(a, b, n));
    l.buffer<float>("a", "f32", a, {});
    l.buffer<float>("b", "f32", b, {});
    l.u32(n);
    l.write();
  }
  {  // 300 x 200: partial tiles in both dimensions.
    unsigned w = 300, h = 200;
    auto in = transpose_input(seed, w, h);
    Launch l("transpose", "transpose", "transpose", blocks_for(w, TRANSPOSE_TILE), blocks_for(h, TRANSPOSE_TILE),
             TRANSPOSE_TILE, TRANSPOSE_ROWS);
    l.buffer<float>("out", "f32", {}, transpose_reference(in, w, h));
    l.buffer<float>("in", "f32", in, {});
    l.u32(w), l.u32(h);
    l.write();
  }
  {  // The two launches of one sum: 100000 values over 32 blocks, then the 32 partials.
    unsigned n = 100000, blocks = 32;
    auto x = reduce_input(seed, n);
    auto partial = reduce_reference(x, blocks, REDUCE_THREADS);
    Launch l("reduce_partial", "reduce", "reduce_sum", blocks, 1, REDUCE_THREADS, 1);
    l.buffer<float>("partial", "f32", {}, partial);
    l.buffer<float>("x", "f32", x, {});
    l.u32(n);
    l.write();
    Launch f("reduce_final", "reduce", "reduce_sum", 1, 1, REDUCE_THREADS, 1);
    f.buffer<float>("sum", "f32", {}, reduce_reference(partial, 1, REDUCE_THREADS));
    f.buffer<float>("partial", "f32", partial, {});
    f.u32(blocks);
    f.write();
  }
  {  // 200 x 150 synthetic scene: flat regions, edges, clamped borders.
    unsigned w = 200, h = 150;
    auto img = sobel_input(seed, w, h);
    Launch l("sobel", "sobel", "sobel", blocks_for(w, IMAGE_BLOCK), blocks_for(h, IMAGE_BLOCK), IMAGE_BLOCK, IMAGE_BLOCK);
    l.buffer<float>("out", "f32", {}, sobel_reference(img, w, h));
    l.buffer<unsigned char>("img", "u8", img, {});
    l.u32(w), l.u32(h);
    l.write();
  }
  {  // 8192 keys: the block sort, then a global and a block merge step of
     // the last stage (k = 8192), each from the state the steps before leave.
    const unsigned n = 8192;
    auto keys = sort_input(seed, n), state = keys;
    for (unsigned k = 2; k <= SORT_CHUNK; k <<= 1)
      for (unsigned j = k >> 1; j > 0; j >>= 1) bitonic_step(state, k, j);
    Launch s("sort_block", "sort", "bitonic_sort_block", n / SORT_CHUNK, 1, SORT_CHUNK / 2, 1);
    s.buffer<float>("keys", "f32", keys, state);
    s.write();
    for (unsigned k = 2 * SORT_CHUNK; k < n; k <<= 1)
      for (unsigned j = k >> 1; j > 0; j >>= 1) bitonic_step(state, k, j);
    auto before = state;
    bitonic_step(state, n, n / 2);
    Launch g("sort_merge_global", "sort", "bitonic_merge_global", n / 2 / SORT_GLOBAL_THREADS, 1, SORT_GLOBAL_THREADS, 1);
    g.buffer<float>("keys", "f32", before, state);
    g.u32(n), g.u32(n / 2);
    g.write();
    for (unsigned j = n / 4; j >= SORT_CHUNK; j >>= 1) bitonic_step(state, n, j);
    before = state;
    for (unsigned j = SORT_CHUNK / 2; j > 0; j >>= 1) bitonic_step(state, n, j);
    Launch b("sort_merge_block", "sort", "bitonic_merge_block", n / SORT_CHUNK, 1, SORT_CHUNK / 2, 1);
    b.buffer<float>("keys", "f32", before, state);
    b.u32(n);
    b.write();
    // The steps simulated above make a sorting network.
    std::sort(keys.begin(), keys.end());
    if (keys != state) {
      fprintf(stderr, "gen: the bitonic steps do not sort\n");
      return 1;
    }
  }
  {  // Two signals of 1024 points (every thread two butterflies per stage)
     // and four of 64 (most threads idle).
    for (unsigned log2n : {10u, 6u}) {
      unsigned n = 1u << log2n, batch = log2n == 10 ? 2 : 4;
      auto x = fft_input(seed, n, batch), tw = fft_twiddles(n);
      Launch l(log2n == 10 ? "fft_1024" : "fft_64", "fft", "fft_radix2", batch, 1, FFT_THREADS, 1);
      l.buffer<Complex>("data", "f32", x, fft_reference(x, tw, log2n));
      l.buffer<Complex>("twiddle", "f32", tw, {});
      l.u32(log2n);
      l.write();
    }
  }
  return 0;
}
