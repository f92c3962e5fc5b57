// kscope::evaluate on a real GPU through the cupti backend: each way a timing harness is known to be
// fooled, written as the field's reports describe it (KernelBench EVAL.md and PR #82, GPU MODE
// reference-kernels #162 and #104, llm.c PR #851: shared/research/integrity-and-tuning.md), the
// honest cases that must get a verdict without a finding, and the device checks of tensors against
// the host's.
//
// Every contest computes y = 2x + 1 of fresh random inputs. The reference spins 100 us first (a
// kernel of known length: gpu_test_support.hpp), an honest candidate 20 us, so that honest verdicts
// are decided by hardware-guaranteed lengths, not by a lucky run.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#if KSCOPE_TEST_CUBLAS
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/decisions/host_tensor_checks.hpp"  // the host's checks, which the device's must agree with
#include "gpu_test_support.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/kscope.hpp"
#include "spin_bounds.hpp"

namespace {

using kscope::EvaluationVerdict;
using kscope::Finding;
using kscope::Tensors;
using kscope::TensorView;
using kscope_test::check;
using kscope_test::kGlobalTimerTickNs;

constexpr std::size_t kElements = 1 << 16;
constexpr std::uint64_t kReferenceSpinNs = 100'000;
constexpr std::uint64_t kCandidateSpinNs = 20'000;
constexpr unsigned kBlock = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

// Values in [-1, 1) from the element's index and the seed alone.
__global__ void random_kernel(float* out, std::size_t n, std::uint64_t seed) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  std::uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull ^ (seed + 1) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
  z ^= z >> 29;
  out[i] = static_cast<float>(z >> 40) / static_cast<float>(1 << 23) - 1.0f;
}

__global__ void scale_kernel(const float* in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i] + 1.0f;
}

// C = A B for n x n row-major matrices, one thread per element: the plain reference of a GEMM.
__global__ void naive_matmul_kernel(const float* a, const float* b, float* c, int n) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float sum = 0;
  for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
  c[row * n + col] = sum;
}

// y = factor (2x + 1), with every fourth element `fill` (a mask's, such as finfo(float32).min).
__global__ void masked_scale_kernel(const float* in, float* out, std::size_t n, float factor, float fill) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = i % 4 == 0 ? fill : factor * (2.0f * in[i] + 1.0f);
}

void launch_scale(const float* in, float* out, std::size_t n, cudaStream_t stream = 0) {
  scale_kernel<<<blocks_for(n), kBlock, 0, stream>>>(in, out, n);
  check(cudaGetLastError(), "scale_kernel");
}

// Device memory of n floats, freed when its last holder lets go.
std::shared_ptr<float> device_floats(std::size_t n) {
  float* p = nullptr;
  check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc");
  return std::shared_ptr<float>(p, [](float* q) { cudaFree(q); });
}

Tensors tensors_of(std::shared_ptr<float> data, std::size_t n) {
  TensorView v{data.get(), {static_cast<std::int64_t>(n)}, kscope::DType::f32, kscope::MemorySpace::device};
  return Tensors{{v}, std::move(data)};
}

float* floats_of(const Tensors& t) { return static_cast<float*>(const_cast<void*>(t.views.at(0).data)); }

// Fresh inputs from the seed, in memory of their own, ready for every stream.
Tensors random_inputs(std::uint64_t seed, std::size_t n = kElements) {
  auto data = device_floats(n);
  random_kernel<<<blocks_for(n), kBlock>>>(data.get(), n, seed);
  check(cudaGetLastError(), "random_kernel");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(inputs)");
  return tensors_of(std::move(data), n);
}

// y = 2x + 1 into a fresh buffer, after a spin of `spin_ns` (the work's length).
Tensors scaled(const Tensors& in, std::uint64_t spin_ns, cudaStream_t stream = 0) {
  auto out = device_floats(kElements);
  kscope_test::launch_spin(spin_ns, stream);
  launch_scale(floats_of(in), out.get(), kElements, stream);
  return tensors_of(std::move(out), kElements);
}

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;  // non-blocking, as PyTorch's side streams: the legacy stream does not wait for it
};

struct GpuContest {
  kscope::Sweep sweep = kscope::Sweep().axis("n", {std::int64_t{kElements}});
  kscope::Settings settings;
  kscope::Contest contest;
  kscope::EvaluateOptions options;

  GpuContest() {
    settings.runs = 10;  // at least 6 for a 95% interval of the speedup
    settings.verbosity = kscope::Verbosity::quiet;
    contest.inputs = [](const kscope::Config&, std::uint64_t seed) { return random_inputs(seed); };
    contest.reference = [](const Tensors& in) { return scaled(in, kReferenceSpinNs); };
    contest.candidate = [](const Tensors& in) { return scaled(in, kCandidateSpinNs); };
  }
  kscope::Evaluation run() { return kscope::evaluate(sweep, settings, contest, options); }
};

// The cupti backend as evaluate() makes it, telling the test when kscope, a call having returned,
// starts waiting for the GPU to drain (RunRecorder::call_returned, then synchronize()). Attacks that
// act "after the call returned" act then, whatever the host's scheduling.
class WaitNotifyingBackend final : public kscope::MeasurementBackend {
 public:
  explicit WaitNotifyingBackend(const kscope::Settings& settings)
      : cupti_(kscope::definition(kscope::Backend::cupti).make(settings)) {}
  std::function<void()> on_wait;

  std::vector<kscope::MetricSpec> metrics() const override { return cupti_->metrics(); }
  kscope::SessionInfo describe() const override { return cupti_->describe(); }
  kscope::DeviceControl* device_control() override { return cupti_->device_control(); }
  kscope::CallObserver* call_observer() override { return cupti_->call_observer(); }
  void begin_session(const kscope::Settings& s) override { cupti_->begin_session(s); }
  void end_session() noexcept override { cupti_->end_session(); }
  std::size_t max_batch_runs() const override { return cupti_->max_batch_runs(); }
  bool batch_has_room() const override { return cupti_->batch_has_room(); }
  void begin_batch(std::size_t runs) override { cupti_->begin_batch(runs); }
  void begin_run(const kscope::RunContext& run) override { cupti_->begin_run(run); }
  void flush_cache() override { cupti_->flush_cache(); }
  void synchronize() override {
    if (on_wait) on_wait();
    cupti_->synchronize();
  }
  void region_begin(const kscope::RegionContext& region) override { cupti_->region_begin(region); }
  void region_end(const kscope::RegionContext& region) override { cupti_->region_end(region); }
  void end_run(const kscope::RunContext& run, const std::vector<kscope::RegionRecord>& regions) override {
    cupti_->end_run(run, regions);
  }
  bool another_pass_needed() override { return cupti_->another_pass_needed(); }
  std::vector<kscope::RunMeasurement> collect_batch() override { return cupti_->collect_batch(); }
  void abandon_run(const kscope::RunContext& run) noexcept override { cupti_->abandon_run(run); }

 private:
  std::unique_ptr<kscope::MeasurementBackend> cupti_;
};

bool has(const kscope::EvaluationRow& row, Finding f) {
  return std::find(row.findings.begin(), row.findings.end(), f) != row.findings.end();
}

// The one config's row, with a [result] line for the GPU check's summary.
const kscope::EvaluationRow& reported(const char* what, const kscope::Evaluation& e) {
  EXPECT_EQ(e.rows().size(), 1u);
  const kscope::EvaluationRow& row = e.rows().at(0);
  std::string findings;
  for (Finding f : row.findings) findings += (findings.empty() ? "" : ",") + to_string(f);
  std::printf("[result] evaluate, %s: %s; candidate %.1f us, reference %.1f us, speedup %.3g [%.3g, %.3g]; "
              "findings: %s\n",
              what, to_string(row.verdict).c_str(), row.candidate_median_ns / 1e3, row.reference_median_ns / 1e3,
              row.speedup, row.speedup_ci_lower, row.speedup_ci_upper, findings.empty() ? "none" : findings.c_str());
  return row;
}

// An honest candidate: correct, no finding, and a verdict on its speed.
void expect_honest(const kscope::Evaluation& e, const kscope::EvaluationRow& row) {
  EXPECT_TRUE(row.correct) << row.mismatch;
  EXPECT_TRUE(row.findings.empty()) << e;
  EXPECT_TRUE(row.verdict == EvaluationVerdict::faster || row.verdict == EvaluationVerdict::slower ||
              row.verdict == EvaluationVerdict::same)
      << row.reason;
}

// ---- Honest candidates: a verdict, no finding -----------------------------------------------------

// The spins set both lengths: the candidate's region spans at least its 20 us spin, the
// reference's at least 100 us, less one %globaltimer update each (spin_bounds.hpp).
TEST(EvaluateGpu, AnHonestFasterCandidateIsFasterWithoutAFinding) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("honest, one kernel each", e);
  expect_honest(e, row);
  EXPECT_EQ(row.verdict, EvaluationVerdict::faster) << row.reason;
  EXPECT_GE(row.candidate_median_ns, kCandidateSpinNs - kGlobalTimerTickNs);
  EXPECT_GE(row.reference_median_ns, kReferenceSpinNs - kGlobalTimerTickNs);
}

TEST(EvaluateGpu, ASideStreamJoinedWithAnEventIsHonestAndTimed) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  Stream side;
  kscope_test::Event forked, joined;
  c.contest.candidate = [&](const Tensors& in) {
    auto out = device_floats(kElements);
    check(cudaEventRecord(forked.get(), 0), "cudaEventRecord");
    check(cudaStreamWaitEvent(side.get(), forked.get(), 0), "cudaStreamWaitEvent");
    kscope_test::launch_spin(kCandidateSpinNs, side.get());
    launch_scale(floats_of(in), out.get(), kElements, side.get());
    check(cudaEventRecord(joined.get(), side.get()), "cudaEventRecord");
    check(cudaStreamWaitEvent(0, joined.get(), 0), "cudaStreamWaitEvent");  // the caller's stream waits for it
    return tensors_of(std::move(out), kElements);
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("honest, work on a side stream joined with an event", e);
  expect_honest(e, row);
  EXPECT_GE(row.candidate_median_ns, kCandidateSpinNs - kGlobalTimerTickNs);  // the side stream's work is timed
}

TEST(EvaluateGpu, SeveralKernelsPerCallAreHonestAndAllTimed) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  constexpr std::uint64_t kEachNs = 10'000;
  c.contest.candidate = [](const Tensors& in) {
    auto out = device_floats(kElements);
    for (int k = 0; k < 3; ++k) kscope_test::launch_spin(kEachNs);
    launch_scale(floats_of(in), out.get(), kElements);
    return tensors_of(std::move(out), kElements);
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("honest, four kernels per call", e);
  expect_honest(e, row);
  EXPECT_GE(row.candidate_median_ns, 3 * (kEachNs - kGlobalTimerTickNs));
}

// In place on a workspace the candidate keeps across calls, then into a fresh output.
TEST(EvaluateGpu, InPlaceWorkOnItsOwnBuffersIsHonest) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  const auto workspace = device_floats(kElements);
  c.contest.candidate = [&](const Tensors& in) {
    auto out = device_floats(kElements);
    kscope_test::launch_spin(kCandidateSpinNs);
    check(cudaMemcpyAsync(workspace.get(), floats_of(in), kElements * sizeof(float), cudaMemcpyDeviceToDevice, 0),
          "cudaMemcpyAsync");
    launch_scale(workspace.get(), workspace.get(), kElements);
    check(cudaMemcpyAsync(out.get(), workspace.get(), kElements * sizeof(float), cudaMemcpyDeviceToDevice, 0),
          "cudaMemcpyAsync");
    return tensors_of(std::move(out), kElements);
  };
  const kscope::Evaluation e = c.run();
  expect_honest(e, reported("honest, in place on its own workspace", e));
}

// An in-place operation (as PyTorch's mul_): both sides write their own copy of the inputs and
// return it; an output that is its input is then no finding.
TEST(EvaluateGpu, AnInPlaceOperationOnBothSidesIsHonest) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  const auto in_place = [](std::uint64_t spin_ns) {
    return [spin_ns](const Tensors& in) {
      kscope_test::launch_spin(spin_ns);
      launch_scale(floats_of(in), floats_of(in), kElements);
      return in;
    };
  };
  c.contest.reference = in_place(kReferenceSpinNs);
  c.contest.candidate = in_place(kCandidateSpinNs);
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("honest, in place on both sides", e);
  expect_honest(e, row);
  EXPECT_EQ(row.verdict, EvaluationVerdict::faster) << row.reason;
}

#if KSCOPE_TEST_CUBLAS
TEST(EvaluateGpu, ACublasCallIsHonest) {
  KSCOPE_REQUIRE_GPU();
  constexpr int kN = 256;
  constexpr std::size_t kMatrix = std::size_t(kN) * kN;
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  // FP32 exactly: no TF32, whatever NVIDIA_TF32_OVERRIDE says.
  ASSERT_EQ(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, 0), CUBLAS_STATUS_SUCCESS);
  GpuContest c;
  c.sweep = kscope::Sweep().axis("n", {std::int64_t{kN}});
  c.contest.inputs = [](const kscope::Config&, std::uint64_t seed) {
    const Tensors a = random_inputs(2 * seed, kMatrix), b = random_inputs(2 * seed + 1, kMatrix);
    using Owners = std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>;
    return Tensors{{a.views.at(0), b.views.at(0)}, std::make_shared<Owners>(a.owner, b.owner)};
  };
  const auto matrix = [](const Tensors& t, std::size_t i) { return static_cast<const float*>(t.views.at(i).data); };
  const auto square = [](std::shared_ptr<float> data) {
    Tensors t = tensors_of(std::move(data), kMatrix);
    t.views[0].shape = {kN, kN};
    return t;
  };
  c.contest.reference = [&](const Tensors& in) {
    auto out = device_floats(kMatrix);
    naive_matmul_kernel<<<dim3(kN / 16, kN / 16), dim3(16, 16)>>>(matrix(in, 0), matrix(in, 1), out.get(), kN);
    check(cudaGetLastError(), "naive_matmul_kernel");
    return square(std::move(out));
  };
  c.contest.candidate = [&](const Tensors& in) {
    auto out = device_floats(kMatrix);
    const float one = 1, zero = 0;
    // Row-major C = A B is column-major C^T = B^T A^T.
    if (cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, matrix(in, 1), kN, matrix(in, 0), kN, &zero,
                    out.get(), kN) != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasSgemm failed");
    return square(std::move(out));
  };
  const kscope::Evaluation e = c.run();
  cublasDestroy(handle);
  expect_honest(e, reported("honest, cublasSgemm against a naive GEMM", e));
}
#else
TEST(EvaluateGpu, ACublasCallIsHonest) {
  GTEST_SKIP() << "cuBLAS was not found when the GPU tests were configured (no CUDA::cublas target)";
}
#endif

// ---- Attacks, as the field's reports describe them --------------------------------------------------

// KernelBench EVAL.md, PR #82 (stream injection): the work on a stream the caller's stream does not
// wait for. Its kernels are held until kscope's marker on the caller's stream has run, so they are
// still running then, whatever the host's scheduling.
TEST(EvaluateGpu, WorkMovedToAnUnjoinedStreamIsTimedAndAFinding) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  Stream side;
  kscope_test::HostGate gate;
  constexpr std::uint64_t kSideSpinNs = 50'000, kGateTimeoutNs = 1'000'000'000;
  c.contest.candidate = [&](const Tensors& in) {
    gate.close();
    auto out = device_floats(kElements);
    kscope_test::launch_empty();  // the caller's stream: next to nothing
    kscope_test::launch_spin_until_open(gate, kGateTimeoutNs, side.get());
    kscope_test::launch_spin(kSideSpinNs, side.get());
    launch_scale(floats_of(in), out.get(), kElements, side.get());
    return tensors_of(std::move(out), kElements);
  };
  WaitNotifyingBackend backend(c.settings);
  bool caller_stream_drained = true;
  backend.on_wait = [&] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    cudaError_t status;
    while ((status = cudaStreamQuery(cudaStreamLegacy)) == cudaErrorNotReady && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    caller_stream_drained = caller_stream_drained && status == cudaSuccess;
    gate.open();
  };
  const kscope::Evaluation e = kscope::evaluate_with_backend(c.sweep, c.settings, c.contest, c.options, backend);
  const kscope::EvaluationRow& row = reported("attack, work on an unjoined stream", e);
  EXPECT_TRUE(caller_stream_drained) << "the caller's stream did not drain within 1 s";
  EXPECT_TRUE(row.correct) << row.mismatch;
  EXPECT_TRUE(has(row, Finding::unjoined_work)) << e;
  EXPECT_EQ(row.verdict, EvaluationVerdict::suspect) << row.reason;
  EXPECT_GE(row.candidate_median_ns, kSideSpinNs - kGlobalTimerTickNs);  // the side stream's work is timed
}

// GPU MODE reference-kernels #162: a thread that fills the output after the timer stopped. The
// candidate returns an empty buffer; its thread launches the work once kscope waits for the drain.
TEST(EvaluateGpu, WorkLaunchedByAThreadAfterTheCallReturnedIsTimedAndAFinding) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  constexpr std::uint64_t kLateSpinNs = 50'000;
  std::thread late;
  std::atomic<bool> go{false};
  struct JoinAtExit {  // even when the evaluation fails
    std::thread& thread;
    std::atomic<bool>& go;
    ~JoinAtExit() {
      go = true;
      if (thread.joinable()) thread.join();
    }
  } join_at_exit{late, go};
  c.contest.candidate = [&](const Tensors& in) {
    auto out = device_floats(kElements);
    go = false;
    late = std::thread([&go, input = floats_of(in), output = out.get()] {
      while (!go) std::this_thread::yield();
      kscope_test::launch_spin(kLateSpinNs);
      launch_scale(input, output, kElements);
    });
    return tensors_of(std::move(out), kElements);
  };
  WaitNotifyingBackend backend(c.settings);
  backend.on_wait = [&] {
    if (!late.joinable()) return;  // the reference's call
    go = true;
    late.join();  // launched while kscope waits for the GPU
  };
  const kscope::Evaluation e = kscope::evaluate_with_backend(c.sweep, c.settings, c.contest, c.options, backend);
  const kscope::EvaluationRow& row = reported("attack, a thread launching after the call returned", e);
  EXPECT_TRUE(has(row, Finding::work_after_return)) << e;
  EXPECT_EQ(row.verdict, EvaluationVerdict::suspect) << row.reason;
  EXPECT_GE(row.candidate_median_ns, kLateSpinNs - kGlobalTimerTickNs);  // the late work is timed
}

// KernelBench EVAL.md: inputs overwritten with the answer.
TEST(EvaluateGpu, TheAnswerWrittenIntoTheInputIsAFinding) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  c.contest.candidate = [](const Tensors& in) {
    kscope_test::launch_spin(kCandidateSpinNs);
    launch_scale(floats_of(in), floats_of(in), kElements);
    return in;
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("attack, the answer written into the input", e);
  EXPECT_TRUE(has(row, Finding::output_aliases_input)) << e;
  EXPECT_TRUE(has(row, Finding::input_mutated)) << e;
  EXPECT_EQ(row.verdict, EvaluationVerdict::suspect) << row.reason;
}

// Device buffers handed out last-freed first, as a caching allocator (PyTorch's) does: a run's
// fresh inputs land at the addresses of the run before's.
class ReusingAllocator {
 public:
  explicit ReusingAllocator(std::size_t n) : n_(n) {}
  ~ReusingAllocator() {
    for (float* p : free_) cudaFree(p);
  }
  std::shared_ptr<float> take() {
    float* p = nullptr;
    if (free_.empty()) {
      check(cudaMalloc(&p, n_ * sizeof(float)), "cudaMalloc");
    } else {
      p = free_.back();
      free_.pop_back();
    }
    return std::shared_ptr<float>(p, [this](float* q) { free_.push_back(q); });
  }

 private:
  std::size_t n_;
  std::vector<float*> free_;
};

// GPU MODE reference-kernels #162: results cached by input address. kscope's inputs are fresh every
// run (other values; here at reused addresses), so the cached answers are wrong.
TEST(EvaluateGpu, OutputsCachedByInputAddressAreIncorrect) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  ReusingAllocator allocator(kElements);
  c.contest.inputs = [&](const kscope::Config&, std::uint64_t seed) {
    auto data = allocator.take();
    random_kernel<<<blocks_for(kElements), kBlock>>>(data.get(), kElements, seed);
    check(cudaDeviceSynchronize(), "random inputs");
    return tensors_of(std::move(data), kElements);
  };
  std::map<const void*, Tensors> cache;
  std::size_t hits = 0;
  c.contest.candidate = [&](const Tensors& in) {
    const void* address = in.views.at(0).data;
    if (const auto cached = cache.find(address); cached != cache.end()) {
      ++hits;
      return cached->second;
    }
    return cache[address] = scaled(in, kCandidateSpinNs);
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("attack, outputs cached by input address", e);
  EXPECT_GT(hits, 0u) << "the allocator never handed an address back: the attack did not play";
  EXPECT_EQ(row.verdict, EvaluationVerdict::incorrect) << row.reason;
  EXPECT_GT(row.mismatched_runs, 0u);
}

// GPU MODE reference-kernels PR #104 (batch-and-skip): the real work on some calls only, the last
// answer handed back on the others.
TEST(EvaluateGpu, WorkOnSomeCallsOnlyIsIncorrectAndVaries) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  int calls = 0;
  Tensors last;
  c.contest.candidate = [&](const Tensors& in) {
    if (calls++ % 4 == 0) last = scaled(in, kCandidateSpinNs);
    return last;
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("attack, the work on every 4th call only", e);
  EXPECT_EQ(row.verdict, EvaluationVerdict::incorrect) << row.reason;
  EXPECT_TRUE(has(row, Finding::varying_work) || has(row, Finding::no_work)) << e;
}

// Pinned host memory the GPU reads through unified addresses: a candidate can compute on the host.
std::shared_ptr<float> mapped_floats(std::size_t n) {
  void* p = nullptr;
  check(cudaHostAlloc(&p, n * sizeof(float), cudaHostAllocMapped), "cudaHostAlloc");
  return std::shared_ptr<float>(static_cast<float*>(p), [](float* q) { cudaFreeHost(q); });
}

// KernelBench EVAL.md: answers computed on the host, no GPU work timed at all.
TEST(EvaluateGpu, ACallWithoutGpuWorkIsNoWork) {
  KSCOPE_REQUIRE_GPU();
  int unified = 0;
  check(cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, 0), "cudaDeviceGetAttribute");
  if (!unified) GTEST_SKIP() << "no unified addressing: the GPU cannot read pinned host memory at its host address";
  GpuContest c;
  c.contest.inputs = [](const kscope::Config&, std::uint64_t seed) {
    auto data = mapped_floats(kElements);
    std::mt19937 random(static_cast<std::uint32_t>(seed));
    std::uniform_real_distribution<float> values(-1, 1);
    for (std::size_t i = 0; i < kElements; ++i) data.get()[i] = values(random);
    return tensors_of(std::move(data), kElements);
  };
  c.contest.candidate = [](const Tensors& in) {
    auto out = mapped_floats(kElements);
    for (std::size_t i = 0; i < kElements; ++i) out.get()[i] = 2.0f * floats_of(in)[i] + 1.0f;
    return tensors_of(std::move(out), kElements);
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("attack, the answer computed on the host", e);
  EXPECT_TRUE(row.correct) << row.mismatch;
  EXPECT_TRUE(has(row, Finding::no_work)) << e;
  EXPECT_EQ(row.verdict, EvaluationVerdict::suspect) << row.reason;
  EXPECT_EQ(row.candidate_median_ns, 0);
}

// karpathy/llm.c PR #851: a persisting-L2 set-aside and an access-policy window on the stream,
// set once (as at a program's start), reported more than 4x the HBM's bandwidth.
TEST(EvaluateGpu, APersistingL2WindowIsResetAndAFinding) {
  KSCOPE_REQUIRE_GPU();
  int persisting_max = 0;
  check(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, 0), "cudaDeviceGetAttribute");
  if (persisting_max == 0) GTEST_SKIP() << "this GPU has no persisting L2 (cudaDevAttrMaxPersistingL2CacheSize is 0)";
  // Some drivers give a context a set-aside of its own (9830400 bytes on an H100 with driver 580):
  // the attack is a change of it, to a value other than what the context had.
  std::size_t limit_before = 0;
  check(cudaDeviceGetLimit(&limit_before, cudaLimitPersistingL2CacheSize), "cudaDeviceGetLimit");
  const std::size_t attack_limit = limit_before == static_cast<std::size_t>(persisting_max)
                                       ? static_cast<std::size_t>(persisting_max) / 2
                                       : static_cast<std::size_t>(persisting_max);
  GpuContest c;
  Stream stream;
  c.contest.caller_stream = [&] { return reinterpret_cast<std::uintptr_t>(stream.get()); };
  c.contest.reference = [&](const Tensors& in) { return scaled(in, kReferenceSpinNs, stream.get()); };
  bool set = false;
  c.contest.candidate = [&](const Tensors& in) {
    if (!set) {
      check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, attack_limit),
            "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)");
      cudaStreamAttrValue window{};
      window.accessPolicyWindow.base_ptr = const_cast<void*>(in.views.at(0).data);
      window.accessPolicyWindow.num_bytes = in.views.at(0).bytes();
      window.accessPolicyWindow.hitRatio = 1.0f;
      window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
      window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
      check(cudaStreamSetAttribute(stream.get(), cudaStreamAttributeAccessPolicyWindow, &window),
            "cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow)");
      set = true;
    }
    return scaled(in, kCandidateSpinNs, stream.get());
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("attack, a persisting-L2 window on the stream", e);
  EXPECT_TRUE(has(row, Finding::persisting_l2)) << e;
  EXPECT_EQ(row.verdict, EvaluationVerdict::suspect) << row.reason;
  const auto found_at = std::find_if(e.findings().begin(), e.findings().end(),
                                     [](const kscope::FindingRecord& f) { return f.finding == Finding::persisting_l2; });
  ASSERT_NE(found_at, e.findings().end());
  const kscope::FindingRecord& found = *found_at;
  EXPECT_EQ(found.runs, 1u) << "set once, reset at once";
  EXPECT_NE(found.detail.find("set-aside"), std::string::npos) << found.detail;
  EXPECT_NE(found.detail.find("access-policy window"), std::string::npos) << found.detail;
  // And kscope reset both: the set-aside to the context's own.
  std::size_t limit = limit_before + 1;
  check(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize), "cudaDeviceGetLimit");
  EXPECT_EQ(limit, limit_before);
  cudaStreamAttrValue window{};
  check(cudaStreamGetAttribute(stream.get(), cudaStreamAttributeAccessPolicyWindow, &window), "cudaStreamGetAttribute");
  EXPECT_EQ(window.accessPolicyWindow.num_bytes, 0u);
}

// A candidate whose whole work is a device-to-device cudaMemcpyAsync: copies are timed as kernels
// are. 256 MiB, far beyond any L2 (which the flush left empty), so the copy reads every byte from
// DRAM and writes all but an L2's worth to it: at the DRAM roof that takes at least
// (2 x bytes - L2) / roof, and a copy that went untimed would measure 0.
TEST(EvaluateGpu, WorkDoneByACopyIsTimed) {
  KSCOPE_REQUIRE_GPU();
  constexpr std::size_t kCopyElements = std::size_t(64) << 20;
  constexpr std::size_t kBytes = kCopyElements * sizeof(float);
  GpuContest c;
  c.sweep = kscope::Sweep().axis("n", {std::int64_t{kCopyElements}});
  c.contest.inputs = [](const kscope::Config&, std::uint64_t seed) { return random_inputs(seed, kCopyElements); };
  c.contest.reference = [](const Tensors& in) {
    auto out = device_floats(kCopyElements);
    kscope_test::launch_copy(floats_of(in), out.get(), kCopyElements);
    return tensors_of(std::move(out), kCopyElements);
  };
  c.contest.candidate = [](const Tensors& in) {
    auto out = device_floats(kCopyElements);
    check(cudaMemcpyAsync(out.get(), floats_of(in), kBytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
    return tensors_of(std::move(out), kCopyElements);
  };
  const kscope::Evaluation e = c.run();
  const kscope::EvaluationRow& row = reported("honest, the work done by cudaMemcpyAsync", e);
  expect_honest(e, row);
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "cudaDeviceGetAttribute");
  const double roof = kscope::session_roofs(e.measurements().session()).dram_bytes_per_s;
  ASSERT_GT(roof, 0) << "the session does not know the DRAM roof";
  const double fastest_ns = (2.0 * kBytes - l2) / roof * 1e9;
  std::printf("[result] evaluate, a 256 MiB cudaMemcpyAsync: %.1f us (%.0f GB/s read + write); at the DRAM roof "
              "it takes at least %.1f us\n",
              row.candidate_median_ns / 1e3, 2.0 * kBytes / row.candidate_median_ns, fastest_ns / 1e3);
  EXPECT_GE(row.candidate_median_ns, fastest_ns);
}

// Without evaluate(), the cupti backend is as it was: copies and fills are no region's kernels.
TEST(EvaluateGpu, AfterAnEvaluationProfileSeesKernelsOnly) {
  KSCOPE_REQUIRE_GPU();
  GpuContest c;
  c.settings.runs = 6;
  c.run();
  const auto buffer = device_floats(kElements);
  kscope::Settings settings;
  settings.runs = 5;
  settings.verbosity = kscope::Verbosity::quiet;
  const kscope::Results results = kscope::profile(c.sweep, settings, [&](const kscope::Config&) {
    kscope::Annotation region("fill_then_spin");
    check(cudaMemsetAsync(buffer.get(), 0, kElements * sizeof(float), 0), "cudaMemsetAsync");
    kscope_test::launch_spin(10'000);
  });
  EXPECT_EQ(results.rows().at(0).kernel, kscope_test::kSpinKernel);
}

// A reference whose fourth elements hold finfo(float32).min, the usual fill of masked attention
// scores: its root mean square made atol ~1e34, under which a candidate 50% wrong on every other
// element was faster and correct. The typical magnitude leaves the fill out.
TEST(EvaluateGpu, AMaskFillNeverBlindsTheTolerance) {
  KSCOPE_REQUIRE_GPU();
  const auto masked = [](const Tensors& in, std::uint64_t spin_ns, float factor) {
    auto out = device_floats(kElements);
    kscope_test::launch_spin(spin_ns);
    masked_scale_kernel<<<blocks_for(kElements), kBlock>>>(floats_of(in), out.get(), kElements, factor,
                                                           std::numeric_limits<float>::lowest());
    check(cudaGetLastError(), "masked_scale_kernel");
    return tensors_of(std::move(out), kElements);
  };
  GpuContest honest;
  honest.contest.reference = [&](const Tensors& in) { return masked(in, kReferenceSpinNs, 1); };
  honest.contest.candidate = [&](const Tensors& in) { return masked(in, kCandidateSpinNs, 1); };
  const kscope::Evaluation right = honest.run();
  expect_honest(right, reported("honest, beside a mask filled with finfo(float32).min", right));

  GpuContest wrong;
  wrong.contest.reference = [&](const Tensors& in) { return masked(in, kReferenceSpinNs, 1); };
  wrong.contest.candidate = [&](const Tensors& in) { return masked(in, kCandidateSpinNs, 1.5f); };
  const kscope::Evaluation e = wrong.run();
  const kscope::EvaluationRow& row = reported("50% wrong beside a mask filled with finfo(float32).min", e);
  EXPECT_EQ(row.verdict, EvaluationVerdict::incorrect) << row.reason;
  EXPECT_GT(row.max_rel_error, 0.3) << row.reason;
}

// ---- The device's checks of tensors against the host's ----------------------------------------------

// A tensor's bytes on the host and on the device.
struct TwinTensor {
  std::vector<unsigned char> host;
  std::shared_ptr<void> device;
  TensorView host_view, device_view;

  TwinTensor(const TwinTensor&) = delete;  // host_view points into `host`: moved, never copied
  TwinTensor(TwinTensor&&) = default;
  // `offset`: the device copy starts this many bytes into its allocation (1: no element is aligned,
  // so the kernels take their byte-by-byte reads).
  TwinTensor(const void* data, std::size_t elements, kscope::DType dtype, std::size_t offset = 0)
      : host(elements * kscope::size_of(dtype)) {
    void* base = nullptr;
    check(cudaMalloc(&base, std::max<std::size_t>(host.size() + offset, 1)), "cudaMalloc");
    device.reset(base, [](void* p) { cudaFree(p); });
    void* d = static_cast<unsigned char*>(base) + offset;
    if (!host.empty()) {
      std::memcpy(host.data(), data, host.size());
      check(cudaMemcpy(d, host.data(), host.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    const std::vector<std::int64_t> shape{static_cast<std::int64_t>(elements)};
    host_view = {host.data(), shape, dtype, kscope::MemorySpace::host};
    device_view = {d, shape, dtype, kscope::MemorySpace::device};
  }
};

// A candidate and its reference of one dtype.
struct TwinPair {
  std::string dtype;
  TwinTensor candidate, reference;
};

// `reference` with every special case first, and a candidate that differs from it at `changes`
// and in the last bit of every 97th ordinary element, as bit patterns of `Bits`.
template <class Bits>
TwinPair twin_pair(kscope::DType dtype, std::vector<Bits> reference, const std::vector<Bits>& specials,
                   const std::vector<std::pair<std::size_t, Bits>>& changes, std::size_t offset = 0) {
  std::copy(specials.begin(), specials.end(), reference.begin());
  std::vector<Bits> candidate = reference;
  for (const auto& [index, bits] : changes) candidate[index] = bits;
  for (std::size_t i = specials.size(); i < reference.size(); i += 97) candidate[i] ^= Bits{1};
  return TwinPair{to_string(dtype) + (offset ? " (misaligned)" : ""),
                  TwinTensor(candidate.data(), candidate.size(), dtype, offset),
                  TwinTensor(reference.data(), reference.size(), dtype, offset)};
}

template <class Bits>
std::vector<Bits> random_bits(std::size_t n, Bits mask) {
  std::mt19937_64 random(11);
  std::vector<Bits> v(n);
  for (Bits& x : v) x = static_cast<Bits>(random()) & mask;
  return v;
}

// The tensor checks the registry pairs with the cupti backend: kscope's GPU checks.
std::unique_ptr<kscope::TensorChecks> gpu_checks() { return kscope::definition(kscope::Backend::cupti).tensor_checks(); }

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Ordinary float32 values below 2 in magnitude where `special` gives none; a candidate 1.5 times the
// reference there, and equal to it where `special` gives the value: a mask's fill, padding, a few
// large elements, none of which may set the typical magnitude.
TwinPair shaped_pair(std::string what, std::size_t n, const std::function<std::optional<float>(std::size_t)>& special) {
  const std::vector<std::uint32_t> bits = random_bits<std::uint32_t>(n, 0xbfffffffu);
  std::vector<float> reference(n), candidate(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(&reference[i], &bits[i], sizeof(float));
    candidate[i] = 1.5f * reference[i];
    if (const std::optional<float> value = special(i)) reference[i] = candidate[i] = *value;
  }
  return TwinPair{std::move(what), TwinTensor(candidate.data(), n, kscope::DType::f32),
                  TwinTensor(reference.data(), n, kscope::DType::f32)};
}

// Every dtype's pair in one batch per tolerance, and every tensor in one batch of checksums, and the
// references in one of typical magnitudes, against the host's checks of the same bytes.
TEST(EvaluateGpu, DeviceChecksAgreeWithTheHostsForEveryKindOfValue) {
  KSCOPE_REQUIRE_GPU();
  constexpr std::size_t n = 100'003;
  std::vector<TwinPair> pairs;
  // float32: NaN, +-inf, +-0, the smallest subnormal, the largest finite; ordinary values below 2.
  pairs.push_back(twin_pair<std::uint32_t>(
      kscope::DType::f32, random_bits<std::uint32_t>(n, 0xbfffffffu),
      {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x7f7fffffu},
      {{0, 0x3f800000u}, {1, 0xff800000u}, {3, 0x7fc00000u}, {6, 0x7f800000u}}));
  // float16: NaN, +-inf, the smallest subnormal, 65504, 0.
  pairs.push_back(twin_pair<std::uint16_t>(kscope::DType::f16, random_bits<std::uint16_t>(n, 0xbbffu),
                                           {0x7e00u, 0x7c00u, 0xfc00u, 0x0001u, 0x7bffu, 0x0000u},
                                           {{0, 0x3c00u}, {2, 0x7c00u}, {4, 0xfbffu}}));
  // bfloat16: NaN, +-inf, the smallest subnormal, 0.
  pairs.push_back(twin_pair<std::uint16_t>(kscope::DType::bf16, random_bits<std::uint16_t>(n, 0xbf7fu),
                                           {0x7fc0u, 0x7f80u, 0xff80u, 0x0001u, 0x0000u},
                                           {{1, 0x7fc0u}, {2, 0x7f80u}, {3, 0x3f80u}}));
  // int64: beyond 2^53, where doubles round and only the bits tell.
  pairs.push_back(twin_pair<std::uint64_t>(kscope::DType::i64, random_bits<std::uint64_t>(n, ~std::uint64_t{0}),
                                           {(std::uint64_t{1} << 53) + 1, std::uint64_t(-1), std::uint64_t{1} << 63},
                                           {{0, std::uint64_t{1} << 53}, {1, 0}}));
  // The same values one byte off their alignment: the kernels' byte-by-byte reads.
  pairs.push_back(twin_pair<std::uint32_t>(kscope::DType::f32, random_bits<std::uint32_t>(n, 0xbfffffffu),
                                           {0x7fc00000u, 0x7f800000u}, {{0, 0x3f800000u}, {5, 0x7fc00000u}}, 1));
  pairs.push_back(twin_pair<std::uint64_t>(kscope::DType::i64, random_bits<std::uint64_t>(n, ~std::uint64_t{0}),
                                           {(std::uint64_t{1} << 53) + 1}, {{0, std::uint64_t{1} << 53}}, 1));
  pairs.push_back(TwinPair{"empty float32", TwinTensor(nullptr, 0, kscope::DType::f32),
                           TwinTensor(nullptr, 0, kscope::DType::f32)});
  // float16 of its largest magnitude 65504 (0x7bff) in every third element, against 65472 (0x7bfe).
  std::vector<std::uint16_t> largest = random_bits<std::uint16_t>(n, 0xbbffu);
  for (std::size_t i = 0; i < n; i += 3) largest[i] = 0x7bffu;
  pairs.push_back(twin_pair<std::uint16_t>(kscope::DType::f16, largest, {}, {{0, 0x7bfeu}, {3, 0xfbffu}}));
  // Nothing that counts toward a typical magnitude: its atol adds no scaled part.
  const std::vector<float> zeros(n, 0.0f);
  pairs.push_back(TwinPair{"float32, all zeros", TwinTensor(zeros.data(), n, kscope::DType::f32),
                           TwinTensor(zeros.data(), n, kscope::DType::f32)});
  // Outputs whose scale a few elements would set, last.
  const std::size_t first_shaped = pairs.size();
  const float lowest = std::numeric_limits<float>::lowest(), infinity = std::numeric_limits<float>::infinity();
  pairs.push_back(shaped_pair("float32, finfo.min in every fourth element", n,
                              [&](std::size_t i) { return i % 4 == 0 ? std::optional(lowest) : std::nullopt; }));
  pairs.push_back(shaped_pair("float32, -inf in every fourth element", n,
                              [&](std::size_t i) { return i % 4 == 0 ? std::optional(-infinity) : std::nullopt; }));
  pairs.push_back(shaped_pair("float32, padding in three elements of four", n,
                              [](std::size_t i) { return i % 4 != 0 ? std::optional(0.0f) : std::nullopt; }));
  pairs.push_back(shaped_pair("float32, one element in sixteen 2^20 times larger", n,
                              [](std::size_t i) { return i % 16 == 0 ? std::optional(1048576.0f) : std::nullopt; }));

  const auto checks = gpu_checks();
  kscope::TensorChecks& device = *checks;
  std::vector<TensorView> candidates, references, all_device, all_host;
  for (const TwinPair& p : pairs) {
    candidates.push_back(p.candidate.device_view);
    references.push_back(p.reference.device_view);
    for (const TwinTensor* t : {&p.candidate, &p.reference}) {
      all_device.push_back(t->device_view);
      all_host.push_back(t->host_view);
    }
  }
  for (const kscope::Tolerance t : {kscope::Tolerance{0, 0}, kscope::Tolerance{0, 1e-3}, kscope::Tolerance{1e-2, 1e-2},
                                    kscope::Tolerance{1e-6, 0}}) {
    const auto gpu = device.compare(candidates, references, std::vector<kscope::Tolerance>(pairs.size(), t));
    ASSERT_EQ(gpu.size(), pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      SCOPED_TRACE(pairs[i].dtype + ", atol " + std::to_string(t.atol) + ", rtol " + std::to_string(t.rtol));
      const auto host =
          kscope::detail::host_compare(pairs[i].candidate.host_view, pairs[i].reference.host_view, t.atol, t.rtol);
      EXPECT_EQ(gpu[i].elements, host.elements);
      EXPECT_EQ(gpu[i].mismatched, host.mismatched);
      EXPECT_TRUE(same_value(gpu[i].max_abs_error, host.max_abs_error)) << gpu[i].max_abs_error << " vs " << host.max_abs_error;
      EXPECT_TRUE(same_value(gpu[i].max_rel_error, host.max_rel_error)) << gpu[i].max_rel_error << " vs " << host.max_rel_error;
      if (host.mismatched == 0) continue;
      EXPECT_EQ(gpu[i].first_mismatch, host.first_mismatch);
      EXPECT_TRUE(same_value(gpu[i].first_candidate, host.first_candidate));
      EXPECT_TRUE(same_value(gpu[i].first_reference, host.first_reference));
    }
  }
  // The tolerance evaluate derives (rtol 1e-4 times the reference's typical magnitude), found on
  // the device: the same atol to the bit and the same comparison on both, and the wrong elements
  // beside a mask, padding or large elements found.
  for (const kscope::Tolerance derived : {kscope::Tolerance{0, 1e-4, true}, kscope::Tolerance{1e-7, 1e-4, true}}) {
    const auto judged = device.compare(candidates, references, std::vector<kscope::Tolerance>(pairs.size(), derived));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      SCOPED_TRACE(pairs[i].dtype + ", the derived tolerance, atol " + testing::PrintToString(derived.atol) + " added");
      const double typical = kscope::detail::host_typical_magnitude(pairs[i].reference.host_view);
      const auto host = kscope::detail::host_compare(pairs[i].candidate.host_view, pairs[i].reference.host_view, derived);
      EXPECT_EQ(host.atol, derived.atol + derived.rtol * typical);
      EXPECT_EQ(judged[i].atol, host.atol);
      EXPECT_EQ(judged[i].mismatched, host.mismatched);
      EXPECT_EQ(judged[i].first_mismatch, host.first_mismatch);
      EXPECT_TRUE(same_value(judged[i].max_rel_error, host.max_rel_error));
      if (i >= first_shaped && derived.atol == 0) {
        // Random bits make the ordinary magnitudes log-uniform below 2: ~59% of them lie well above a
        // median-based atol, so at least a tenth of all elements (a quarter ordinary, with padding).
        // (An atol of 1e-7 added leaves only those above 2e-7 wrong: ~17% of them, 4,568 on an H100.)
        EXPECT_GT(host.mismatched, n / 10) << "atol " << host.atol;
        EXPECT_LT(typical, 2.0) << "the typical magnitude of ordinary values below 2";
      }
    }
  }

  // Three times over: more tensors than one checksum launch takes.
  std::vector<TensorView> thrice_device, thrice_host;
  for (int k = 0; k < 3; ++k) {
    thrice_device.insert(thrice_device.end(), all_device.begin(), all_device.end());
    thrice_host.insert(thrice_host.end(), all_host.begin(), all_host.end());
  }
  ASSERT_GT(thrice_device.size(), 64u);
  const auto checksums = device.checksums(thrice_device);
  device.start_checksums(all_device);
  device.start_checksums(thrice_device);
  const auto started = device.finish_checksums();
  ASSERT_EQ(checksums.size(), thrice_host.size());
  ASSERT_EQ(started.size(), all_host.size() + thrice_host.size());
  for (std::size_t i = 0; i < thrice_host.size(); ++i) {
    SCOPED_TRACE("tensor " + std::to_string(i) + ": " + thrice_host[i].describe());
    EXPECT_EQ(checksums[i], kscope::detail::host_checksum(thrice_host[i]));
    EXPECT_EQ(started[all_host.size() + i], checksums[i]);
    if (i < all_host.size()) EXPECT_EQ(started[i], checksums[i]);
  }
}

TEST(EvaluateGpu, DeviceChecksTakeMoreThanTwoToThe31Elements) {
  KSCOPE_REQUIRE_GPU();
  const auto checks = gpu_checks();
  kscope::TensorChecks& device = *checks;
  // uint8 ones, one element past 2^31 changed to 2: indices and counts beyond 32 bits.
  const std::size_t n = (std::size_t{1} << 31) + 9, changed = (std::size_t{1} << 31) + 3;
  std::vector<unsigned char> ones(n, 1);
  void* a = nullptr;
  void* b = nullptr;
  check(cudaMalloc(&a, n), "cudaMalloc");
  check(cudaMalloc(&b, n), "cudaMalloc");
  check(cudaMemcpy(a, ones.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(b, ones.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
  const unsigned char two = 2;
  check(cudaMemcpy(static_cast<unsigned char*>(b) + changed, &two, 1, cudaMemcpyHostToDevice), "cudaMemcpy");
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(n)};
  const TensorView reference{a, shape, kscope::DType::u8, kscope::MemorySpace::device};
  const TensorView candidate{b, shape, kscope::DType::u8, kscope::MemorySpace::device};
  const auto compared = device.compare({candidate}, {reference}, {kscope::Tolerance{}}).at(0);
  // atol 2^-10 times the typical magnitude, the median of ones counted past 2^31: 2 against 1 fails.
  const auto scaled = device.compare({candidate}, {reference}, {kscope::Tolerance{0, 0x1p-10, true}}).at(0);
  const std::uint64_t checksum = device.checksums({reference}).at(0);
  cudaFree(a);
  cudaFree(b);
  EXPECT_EQ(compared.elements, n);
  EXPECT_EQ(compared.mismatched, 1u);
  EXPECT_EQ(compared.first_mismatch, changed);
  EXPECT_EQ(compared.first_candidate, 2);
  EXPECT_EQ(compared.first_reference, 1);
  EXPECT_EQ(compared.max_abs_error, 1);
  EXPECT_EQ(scaled.atol, 0x1p-10);
  EXPECT_EQ(scaled.mismatched, 1u);
  EXPECT_EQ(scaled.first_mismatch, changed);
  EXPECT_EQ(checksum, kscope::detail::host_checksum({ones.data(), shape, kscope::DType::u8, kscope::MemorySpace::host}));
}

}  // namespace
