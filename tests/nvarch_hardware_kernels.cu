// Kernels for test_nvarch_hardware.py: a TMA tile loader and wgmma m64n64k16 f32 <- f16 (SS) for the four
// transpose combinations. Compiled on the GPU machine with nvcc -arch=sm_90a -cubin.

#include <cuda.h>
#include <cstdint>

extern __shared__ __align__(1024) uint8_t smem_raw[];

__device__ __forceinline__ uint8_t* align1024(uint8_t* p) {
  return (uint8_t*)(((uintptr_t)p + 1023) & ~(uintptr_t)1023);
}

extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap tmap, const int* coords, const int* smem_off,
                                    int nbox, int rank, int tile_bytes, uint8_t* out) {
  __shared__ __align__(8) uint64_t bar;
  uint8_t* smem = align1024(smem_raw);
  for (int i = threadIdx.x; i < tile_bytes; i += blockDim.x) smem[i] = 0xAB;  // poison
  __syncthreads();
  uint32_t bar_addr = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(tile_bytes) : "memory");
    for (int b = 0; b < nbox; ++b) {
      uint32_t dst = (uint32_t)__cvta_generic_to_shared(smem + smem_off[b]);
      const int* c = coords + 5 * b;
      if (rank == 2) {
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(dst), "l"(&tmap), "r"(c[0]), "r"(c[1]), "r"(bar_addr) : "memory");
      } else if (rank == 3) {
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                     :: "r"(dst), "l"(&tmap), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar_addr) : "memory");
      }
    }
    asm volatile("{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT_%=;\n}"
                 :: "r"(bar_addr) : "memory");
  }
  __syncthreads();
  for (int i = threadIdx.x; i < tile_bytes; i += blockDim.x) out[i] = smem[i];
}

template <int TA, int TB>
__device__ void wgmma_body(const uint8_t* img_a, int a_bytes, const uint8_t* img_b, int b_bytes,
                           const unsigned long long* descs, int kblocks, float* out) {
  uint8_t* base = align1024(smem_raw);
  int b_off = (a_bytes + 1023) & ~1023;
  for (int i = threadIdx.x; i < a_bytes; i += blockDim.x) base[i] = img_a[i];
  for (int i = threadIdx.x; i < b_bytes; i += blockDim.x) base[b_off + i] = img_b[i];
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t a0 = (uint64_t)((uint32_t)__cvta_generic_to_shared(base) >> 4);
  uint64_t b0 = (uint64_t)((uint32_t)__cvta_generic_to_shared(base + b_off) >> 4);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < kblocks; ++k) {
    uint64_t da = descs[2 * k] + a0, db = descs[2 * k + 1] + b0;
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, %34, %35;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) : "l"(da), "l"(db), "n"(TA), "n"(TB));
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 32 + i] = d[i];
}

#define WG(TA, TB) extern "C" __global__ void wgmma_##TA##TB(const uint8_t* a, int ab, const uint8_t* b, int bb, \
    const unsigned long long* descs, int kblocks, float* out) { wgmma_body<TA, TB>(a, ab, b, bb, descs, kblocks, out); }
WG(0, 0)
WG(0, 1)
WG(1, 0)
WG(1, 1)
